package io.redlockd.client;

import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The daemon's checks that the client can make before anything is sent, worded as the daemon
 * words them (src/api/request.rs). Ranges only the daemon knows (ttl within its [min_ttl,
 * max_ttl], wait up to max_wait, a session's TTL floor) come back from it as {@link
 * InvalidArgumentException} with the same kind of message.
 */
final class Validate {
  private Validate() {}

  static final int MAX_RESOURCE_BYTES = 256;
  static final int MAX_OWNER_BYTES = 256;
  static final int MAX_REENTRANCY_KEY_BYTES = 128;
  /** The most resources one set takes (AcquireMany, ReleaseMany). */
  static final int MAX_SET = 16;
  /** The longest a protobuf Duration can say (10,000 years). */
  static final long MAX_DURATION_SECONDS = 315_576_000_000L;

  static void resource(String value) {
    printable("resource", value, 1, MAX_RESOURCE_BYTES);
  }

  static void owner(String value) {
    printable("owner", value, 0, MAX_OWNER_BYTES);
  }

  /** The largest value a leader may publish, in bytes. */
  static final int MAX_ELECTION_VALUE_BYTES = 4096;

  /** An election's name: 1 to 256 bytes of printable UTF-8, as a resource's. */
  static void election(String value) {
    printable("election", value, 1, MAX_RESOURCE_BYTES);
  }

  /** A candidate's name: 1 to 256 bytes of printable UTF-8. */
  static void candidate(String value) {
    printable("candidate", value, 1, MAX_OWNER_BYTES);
  }

  /** A leader's value: at most 4096 bytes, anything. */
  static byte[] electionValue(byte[] value) {
    if (value == null) {
      throw new InvalidArgumentException("invalid value: must be bytes (empty: none), not null");
    }
    if (value.length > MAX_ELECTION_VALUE_BYTES) {
      // The daemon's words (src/api/request.rs).
      throw new InvalidArgumentException(
          "invalid value: is " + value.length + " bytes long; at most " + MAX_ELECTION_VALUE_BYTES + " are allowed");
    }
    return value;
  }

  /** A term: what ELECTED or Leader gave, never 0. */
  static long term(FencingToken term) {
    if (term == null) {
      throw new InvalidArgumentException("invalid term: must be a FencingToken, not null");
    }
    if (term.wireValue() == 0) {
      throw new InvalidArgumentException("invalid term: must be set: the term ELECTED or Leader gave");
    }
    return term.wireValue();
  }

  /**
   * A set's names: 1 to 16, each a valid resource, counted as given (repeats too, as the daemon
   * counts them).
   */
  static List<String> resources(Collection<String> value) {
    if (value == null) {
      throw new InvalidArgumentException("invalid resources: must be a collection of names, not null");
    }
    List<String> names = new ArrayList<>(value);
    if (names.size() < 1 || names.size() > MAX_SET) {
      throw new InvalidArgumentException(
          "invalid resources: " + names.size() + " names; 1 to " + MAX_SET + " are allowed");
    }
    for (int i = 0; i < names.size(); i++) {
      String wrong = notPrintable(names.get(i), 1, MAX_RESOURCE_BYTES);
      if (wrong != null) {
        throw new InvalidArgumentException("invalid resources: [" + i + "] " + wrong);
      }
    }
    return names;
  }

  /**
   * The fields that say what is taken, checked as the daemon checks them (the reentrancy key is
   * never shown in a message).
   */
  static void kind(boolean shared, int permits, String reentrancyKey) {
    if (permits < 0) {
      throw new InvalidArgumentException(
          "invalid permits: " + permits
              + " is not a number of permits (0 or 1: a lock; N >= 2: a semaphore)");
    }
    if (shared && permits >= 2) {
      throw new InvalidArgumentException(
          "invalid permits: a shared lock takes no permits: set permits to 0 or 1,"
              + " or mode to LOCK_MODE_EXCLUSIVE");
    }
    if (reentrancyKey == null) {
      throw new InvalidArgumentException("invalid reentrancy_key: must be a string (empty: none), not null");
    }
    int size = utf8Length(reentrancyKey);
    if (size < 0) {
      throw new InvalidArgumentException(
          "invalid reentrancy_key: is not valid UTF-8 (it has a lone surrogate)");
    }
    if (size > MAX_REENTRANCY_KEY_BYTES) {
      throw new InvalidArgumentException(
          "invalid reentrancy_key: is " + size + " bytes; at most " + MAX_REENTRANCY_KEY_BYTES
              + " are allowed");
    }
  }

  /** {@code value}, checked as a duration a request can carry; {@code field} names it. */
  static Duration duration(Duration value, String field) {
    if (value == null) {
      throw new InvalidArgumentException("invalid " + field + ": must be a java.time.Duration, not null");
    }
    if (value.getSeconds() > MAX_DURATION_SECONDS || value.getSeconds() < -MAX_DURATION_SECONDS) {
      throw new InvalidArgumentException(
          "invalid " + field + ": " + value + " is not a duration a request can carry (at most "
              + MAX_DURATION_SECONDS + " s)");
    }
    if (value.isNegative()) {
      com.google.protobuf.Duration d = Wire.duration(value);
      // The daemon's words for a negative protobuf Duration.
      throw new InvalidArgumentException(
          "invalid " + field + ": " + d.getSeconds() + "s " + d.getNanos()
              + "ns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)");
    }
    return value;
  }

  private static void printable(String field, String value, int least, int most) {
    String wrong = notPrintable(value, least, most);
    if (wrong != null) {
      throw new InvalidArgumentException("invalid " + field + ": " + wrong);
    }
  }

  /**
   * What is wrong with {@code value} as least to most bytes of printable UTF-8, in the daemon's
   * words; null when nothing is.
   */
  private static String notPrintable(String value, int least, int most) {
    if (value == null) {
      return "must be a string, not null";
    }
    int size = utf8Length(value);
    if (size < 0) {
      return "is not valid UTF-8 (it has a lone surrogate)";
    }
    if (size < least || size > most) {
      return "is " + size + " bytes long; it must be " + least + " to " + most + " bytes of printable UTF-8";
    }
    for (int i = 0; i < value.length(); ) {
      int c = value.codePointAt(i);
      // The daemon refuses what Rust's char::is_control refuses: category Cc.
      if (Character.getType(c) == Character.CONTROL) {
        return "contains the control character " + rustDebug(c) + "; only printable UTF-8 is allowed";
      }
      i += Character.charCount(c);
    }
    return null;
  }

  /** The length of {@code s} in UTF-8; -1 when it has a lone surrogate. */
  static int utf8Length(String s) {
    try {
      return StandardCharsets.UTF_8
          .newEncoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .encode(CharBuffer.wrap(s))
          .remaining();
    } catch (CharacterCodingException e) {
      return -1;
    }
  }

  /** A control character as Rust's {@code {:?}} shows it, as the daemon does. */
  private static String rustDebug(int c) {
    switch (c) {
      case 0:
        return "'\\0'";
      case '\t':
        return "'\\t'";
      case '\r':
        return "'\\r'";
      case '\n':
        return "'\\n'";
      default:
        return "'\\u{" + Integer.toHexString(c) + "}'";
    }
  }
}
