package io.redlockd.client;

import java.math.BigInteger;

/**
 * A fencing token: it strictly increases per resource (per slot for a permit of a semaphore), so
 * protected storage can refuse a write that carries a token lower than one it has seen.
 *
 * <p>On the wire a token is an unsigned 64-bit integer; Java has no such type, and a {@code long}
 * holding a token above 2^63 - 1 reads as negative. This type keeps the 64 bits and compares,
 * prints and converts them as unsigned, so ordering is right over the whole range. Compare tokens
 * with {@link #compareTo}, {@link #isAfter} and {@link #isBefore}, never with {@code <} on {@link
 * #wireValue()}.
 */
public final class FencingToken implements Comparable<FencingToken> {
  private static final BigInteger TWO_TO_THE_64 = BigInteger.ONE.shiftLeft(64);

  private final long bits;

  private FencingToken(long bits) {
    this.bits = bits;
  }

  /** The token whose unsigned 64 bits are {@code bits}, as protobuf-java gives a uint64 field. */
  public static FencingToken fromWire(long bits) {
    return new FencingToken(bits);
  }

  /**
   * The token written in decimal, 0 to 2^64 - 1 ({@link #toString()}'s form).
   *
   * @throws InvalidArgumentException when {@code decimal} is not such a number
   */
  public static FencingToken parse(String decimal) {
    try {
      return new FencingToken(Long.parseUnsignedLong(decimal));
    } catch (NumberFormatException | NullPointerException e) {
      throw new InvalidArgumentException(
          "invalid fencing token: " + decimal + " is not a decimal number from 0 to 2^64 - 1");
    }
  }

  /**
   * The token of value {@code value}, 0 to 2^64 - 1.
   *
   * @throws InvalidArgumentException when {@code value} is outside that range
   */
  public static FencingToken of(BigInteger value) {
    if (value.signum() < 0 || value.compareTo(TWO_TO_THE_64) >= 0) {
      throw new InvalidArgumentException(
          "invalid fencing token: " + value + " is outside 0 to 2^64 - 1");
    }
    return new FencingToken(value.longValue());
  }

  /**
   * The 64 bits as the wire carries them, to pass on to another protobuf uint64 field or to store
   * in a 64-bit column. Above 2^63 - 1 this {@code long} is negative: do not compare it with
   * {@code <}; use {@link Long#compareUnsigned} or this type.
   */
  public long wireValue() {
    return bits;
  }

  /** The token's value, exact at any size. */
  public BigInteger toBigInteger() {
    BigInteger value = BigInteger.valueOf(bits);
    return bits < 0 ? value.add(TWO_TO_THE_64) : value;
  }

  /** Unsigned order: a later token of the same resource compares greater. */
  @Override
  public int compareTo(FencingToken other) {
    return Long.compareUnsigned(bits, other.bits);
  }

  /** Whether this token is greater than {@code other} (granted later, for the same resource). */
  public boolean isAfter(FencingToken other) {
    return compareTo(other) > 0;
  }

  /** Whether this token is less than {@code other}. */
  public boolean isBefore(FencingToken other) {
    return compareTo(other) < 0;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FencingToken && ((FencingToken) o).bits == bits;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(bits);
  }

  /** The unsigned decimal value, e.g. {@code 18446744073709551615} for 2^64 - 1. */
  @Override
  public String toString() {
    return Long.toUnsignedString(bits);
  }
}
