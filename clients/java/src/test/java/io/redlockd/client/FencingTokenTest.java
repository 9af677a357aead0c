package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import redlockd.v1.LockOuterClass;

/**
 * Fencing tokens are unsigned 64-bit integers on the wire. Real daemons keep them below 2^57
 * (counters below 2^53, times 16), so the range above 2^63, where a Java long turns negative, is
 * tested here on wire bytes made by hand and read the way the client reads every lease.
 */
class FencingTokenTest {
  static final BigInteger TWO_TO_THE_63 = BigInteger.ONE.shiftLeft(63);
  static final BigInteger TWO_TO_THE_64 = BigInteger.ONE.shiftLeft(64);

  /** A Lease message's bytes with fencing_token (field 3, a varint) = {@code token}, encoded here. */
  static byte[] leaseOnTheWire(String resource, BigInteger token) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(0x0a); // field 1 (resource), length-delimited
    out.write(resource.length());
    out.writeBytes(resource.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    out.write(0x18); // field 3 (fencing_token), varint
    BigInteger rest = token;
    do {
      int low = rest.intValue() & 0x7f;
      rest = rest.shiftRight(7);
      out.write(rest.signum() == 0 ? low : low | 0x80);
    } while (rest.signum() != 0);
    return out.toByteArray();
  }

  /** The token the client makes of those bytes: as it makes every lease's (Granted.of). */
  static FencingToken offTheWire(BigInteger token) throws Exception {
    LockOuterClass.Lease lease = LockOuterClass.Lease.parseFrom(leaseOnTheWire("examples/t", token));
    assertEquals("examples/t", lease.getResource());
    return Granted.of(lease).fencingToken;
  }

  @Test
  void tokensAboveTwoToThe63AreExactAndOrderedAsTheUnsignedIntegersTheyAre() throws Exception {
    List<BigInteger> values = new ArrayList<>();
    for (String v : new String[] {"0", "1", "9007199254740993", "144115188075855887"}) {
      values.add(new BigInteger(v)); // 2^53 + 1; a real token near 2^57
    }
    values.add(TWO_TO_THE_63.subtract(BigInteger.ONE));
    values.add(TWO_TO_THE_63);
    values.add(TWO_TO_THE_63.add(BigInteger.valueOf(5)));
    values.add(TWO_TO_THE_64.subtract(BigInteger.TWO));
    values.add(TWO_TO_THE_64.subtract(BigInteger.ONE));

    List<FencingToken> tokens = new ArrayList<>();
    for (BigInteger v : values) {
      FencingToken token = offTheWire(v);
      assertEquals(v, token.toBigInteger(), "not exact");
      assertEquals(v.toString(), token.toString());
      assertEquals(token, FencingToken.parse(v.toString()));
      assertEquals(token, FencingToken.of(v));
      tokens.add(token);
    }
    // Each is after every smaller one and before every larger one.
    for (int i = 0; i < tokens.size(); i++) {
      for (int j = 0; j < tokens.size(); j++) {
        assertEquals(Integer.signum(values.get(i).compareTo(values.get(j))), Integer.signum(tokens.get(i).compareTo(tokens.get(j))),
            tokens.get(i) + " against " + tokens.get(j));
        assertEquals(i > j, tokens.get(i).isAfter(tokens.get(j)));
        assertEquals(i < j, tokens.get(i).isBefore(tokens.get(j)));
      }
    }
    List<FencingToken> shuffled = new ArrayList<>(tokens);
    Collections.shuffle(shuffled, new Random(7));
    Collections.sort(shuffled);
    assertEquals(tokens, shuffled);

    // The pitfall the type exists for: as a signed long, 2^63 is below 2^63 - 1.
    FencingToken below = offTheWire(TWO_TO_THE_63.subtract(BigInteger.ONE));
    FencingToken above = offTheWire(TWO_TO_THE_63);
    assertTrue(above.wireValue() < below.wireValue(), "2^63 should read as a negative long");
    assertTrue(above.isAfter(below));
    assertEquals(Long.MIN_VALUE, above.wireValue());
    assertEquals(-1L, offTheWire(TWO_TO_THE_64.subtract(BigInteger.ONE)).wireValue());
  }

  @Test
  void aTokenIsItsSixtyFourBits() {
    assertEquals(FencingToken.fromWire(-1L), FencingToken.parse("18446744073709551615"));
    assertEquals(FencingToken.fromWire(-1L).hashCode(), FencingToken.parse("18446744073709551615").hashCode());
    assertNotEquals(FencingToken.fromWire(1L), FencingToken.fromWire(2L));
    assertEquals(0, FencingToken.fromWire(Long.MIN_VALUE).compareTo(FencingToken.of(TWO_TO_THE_63)));
  }

  @Test
  void valuesOutsideSixtyFourUnsignedBitsAreRefusedNamingTheField() {
    for (String bad : new String[] {"18446744073709551616", "-1", "", "12a", null}) {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> FencingToken.parse(bad));
      assertTrue(e.getMessage().startsWith("invalid fencing token: "), e.getMessage());
    }
    for (BigInteger bad : new BigInteger[] {TWO_TO_THE_64, BigInteger.valueOf(-1)}) {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> FencingToken.of(bad));
      assertEquals("invalid fencing token: " + bad + " is outside 0 to 2^64 - 1", e.getMessage());
    }
  }
}
