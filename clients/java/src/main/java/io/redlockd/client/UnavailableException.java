package io.redlockd.client;

import io.grpc.Status;
import java.util.Collections;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * Fewer than a quorum of the Redis masters could take part, or the daemon could not be reached
 * (then {@link #nodes()} is empty). A wait cut short by this is retried until it runs out; this
 * is thrown when it has.
 */
public class UnavailableException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  private final transient Map<Integer, String> nodes;
  private final transient Integer needed;

  public UnavailableException(String message, Map<Integer, String> nodes, Integer needed, Throwable cause) {
    super(message, Status.Code.UNAVAILABLE, cause);
    this.nodes = Collections.unmodifiableMap(new TreeMap<>(nodes));
    this.needed = needed;
  }

  /**
   * What each master said, by index, from the status's {@code google.rpc.ErrorInfo}: "granted",
   * "held by another owner", "timed out", "errored", "quarantined", "unusable".
   */
  public Map<Integer, String> nodes() {
    return nodes;
  }

  /** How many masters make a quorum, when the daemon said it. */
  public OptionalInt needed() {
    return needed == null ? OptionalInt.empty() : OptionalInt.of(needed);
  }
}
