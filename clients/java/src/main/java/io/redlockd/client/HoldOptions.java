package io.redlockd.client;

import java.time.Duration;

/**
 * How {@link RedlockdClient#hold} opens a Hold session. Immutable: each method returns a copy with
 * one setting changed. The settings are {@link AcquireOptions}', plus {@link #maxHold} and {@link
 * #lockDelay}.
 *
 * <pre>{@code
 * HoldOptions.defaults().ttl(Duration.ofSeconds(10)).wait(Duration.ofSeconds(5))
 * }</pre>
 */
public final class HoldOptions {
  final Duration ttl;
  final Duration wait;
  final String owner;
  final Duration maxHold;
  final boolean shared;
  final int permits;
  final String reentrancyKey;
  final Duration lockDelay;

  private HoldOptions(
      Duration ttl,
      Duration wait,
      String owner,
      Duration maxHold,
      boolean shared,
      int permits,
      String reentrancyKey,
      Duration lockDelay) {
    this.ttl = ttl;
    this.wait = wait;
    this.owner = owner;
    this.maxHold = maxHold;
    this.shared = shared;
    this.permits = permits;
    this.reentrancyKey = reentrancyKey;
    this.lockDelay = lockDelay;
  }

  /** TTL 10 s, a wait of 5 s, no owner label, the daemon's max_hold, an exclusive lock. */
  public static HoldOptions defaults() {
    return new HoldOptions(Duration.ofSeconds(10), Duration.ofSeconds(5), "", null, false, 0, "", null);
  }

  /**
   * What each extension renews (the daemon extends at about a third of it); at least 8 x the
   * daemon's node_timeout.
   */
  public HoldOptions ttl(Duration ttl) {
    return new HoldOptions(ttl, wait, owner, maxHold, shared, permits, reentrancyKey, lockDelay);
  }

  /** How long to wait while someone else holds the lock (zero: one attempt). */
  public HoldOptions wait(Duration wait) {
    return new HoldOptions(ttl, wait, owner, maxHold, shared, permits, reentrancyKey, lockDelay);
  }

  /** A label for logs and {@code inspect}: at most 256 bytes. */
  public HoldOptions owner(String owner) {
    return new HoldOptions(ttl, wait, owner, maxHold, shared, permits, reentrancyKey, lockDelay);
  }

  /**
   * The longest the daemon keeps the lock, from ACQUIRED (at most, and by default, the daemon's
   * lock.max_hold); when it is used up the daemon releases, and the lock counts as lost.
   */
  public HoldOptions maxHold(Duration maxHold) {
    return new HoldOptions(ttl, wait, owner, maxHold, shared, permits, reentrancyKey, lockDelay);
  }

  /** A shared lock (a reader), as {@link AcquireOptions#shared()}. */
  public HoldOptions shared() {
    return new HoldOptions(ttl, wait, owner, maxHold, true, permits, reentrancyKey, lockDelay);
  }

  /** One of {@code n} permits of a semaphore, as {@link AcquireOptions#permits(int)}. */
  public HoldOptions permits(int n) {
    return new HoldOptions(ttl, wait, owner, maxHold, shared, n, reentrancyKey, lockDelay);
  }

  /** A reentrancy key, as {@link AcquireOptions#reentrancyKey(String)}: the session is one hold. */
  public HoldOptions reentrancyKey(String key) {
    return new HoldOptions(ttl, wait, owner, maxHold, shared, permits, key, lockDelay);
  }

  /**
   * Keep the lock this long (at most the daemon's lock.max_lock_delay, 60 s) after the session ends
   * without a release (the stream broke, the process died, LOST), so that the next holder starts
   * only after it: for resources that cannot check fencing tokens. A release frees it at once.
   */
  public HoldOptions lockDelay(Duration lockDelay) {
    return new HoldOptions(ttl, wait, owner, maxHold, shared, permits, reentrancyKey, lockDelay);
  }

  /** The settings, without the reentrancy key. */
  @Override
  public String toString() {
    return "HoldOptions(ttl=" + ttl + ", wait=" + wait + ", owner=" + owner + ", maxHold="
        + (maxHold == null ? "the daemon's" : maxHold) + ", shared=" + shared + ", permits=" + permits
        + ", reentrancyKey=" + (reentrancyKey.isEmpty() ? "none" : "set")
        + (lockDelay == null ? "" : ", lockDelay=" + lockDelay) + ")";
  }
}
