package io.redlockd.client;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code hold} gave up: its wait ran out while someone else held the lock. ({@code tryAcquire}
 * says the same with an empty {@code Optional}: contention is a value there.)
 */
public class NotAcquiredException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  private final String reason;
  private final transient Map<Integer, String> nodes;

  public NotAcquiredException(String reason, Map<Integer, String> nodes) {
    super(reason.isEmpty() ? "not acquired" : "not acquired: " + reason, null, null);
    this.reason = reason;
    this.nodes = Collections.unmodifiableMap(new TreeMap<>(nodes));
  }

  /** The daemon's reason, e.g. {@code FAILURE_REASON_TAKEN}. */
  public String reason() {
    return reason;
  }

  /** What each master said in the last attempt, by index (as {@link UnavailableException#nodes()}). */
  public Map<Integer, String> nodes() {
    return nodes;
  }
}
