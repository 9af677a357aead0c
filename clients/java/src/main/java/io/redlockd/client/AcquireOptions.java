package io.redlockd.client;

import java.time.Duration;

/**
 * How {@link RedlockdClient#tryAcquire} takes a lock. Immutable: each method returns a copy with
 * one setting changed.
 *
 * <pre>{@code
 * AcquireOptions.defaults().ttl(Duration.ofSeconds(10)).wait(Duration.ofSeconds(5))
 * }</pre>
 */
public final class AcquireOptions {
  final Duration ttl;
  final Duration wait;
  final String owner;
  final boolean shared;
  final int permits;
  final String reentrancyKey;
  final Duration lockDelay;

  private AcquireOptions(
      Duration ttl,
      Duration wait,
      String owner,
      boolean shared,
      int permits,
      String reentrancyKey,
      Duration lockDelay) {
    this.ttl = ttl;
    this.wait = wait;
    this.owner = owner;
    this.shared = shared;
    this.permits = permits;
    this.reentrancyKey = reentrancyKey;
    this.lockDelay = lockDelay;
  }

  /** TTL 10 s, a single attempt (no wait), no owner label, an exclusive lock. */
  public static AcquireOptions defaults() {
    return new AcquireOptions(Duration.ofSeconds(10), Duration.ZERO, "", false, 0, "", null);
  }

  /**
   * How long the lock lives on the masters unless extended; within the daemon's [min_ttl, max_ttl]
   * (250 ms to 60 s by default).
   */
  public AcquireOptions ttl(Duration ttl) {
    return new AcquireOptions(ttl, wait, owner, shared, permits, reentrancyKey, lockDelay);
  }

  /**
   * How long to keep trying while someone else holds the lock (zero: one attempt); at most the
   * daemon's max_wait.
   */
  public AcquireOptions wait(Duration wait) {
    return new AcquireOptions(ttl, wait, owner, shared, permits, reentrancyKey, lockDelay);
  }

  /** A label for logs and {@code inspect} (a pod name, a job id): at most 256 bytes. */
  public AcquireOptions owner(String owner) {
    return new AcquireOptions(ttl, wait, owner, shared, permits, reentrancyKey, lockDelay);
  }

  /**
   * A shared lock (a reader of a read-write lock): readers hold it together, while an exclusive
   * lock (a writer, the default) excludes them all.
   */
  public AcquireOptions shared() {
    return new AcquireOptions(ttl, wait, owner, true, permits, reentrancyKey, lockDelay);
  }

  /**
   * One of {@code n} permits of a semaphore (n from 2 to the daemon's lock.max_permits; 0 or 1: a
   * plain lock). Every holder must ask for the same n.
   */
  public AcquireOptions permits(int n) {
    return new AcquireOptions(ttl, wait, owner, shared, n, reentrancyKey, lockDelay);
  }

  /**
   * A job or trace id only your own work knows (at most 128 bytes): while the daemon holds the lock
   * for the key, another acquisition with it gets the same lock and token at once, and counts up.
   */
  public AcquireOptions reentrancyKey(String key) {
    return new AcquireOptions(ttl, wait, owner, shared, permits, key, lockDelay);
  }

  /**
   * Keep a lease that is never released this long past its validity (at most the daemon's
   * lock.max_lock_delay, 60 s), through every extend, so that the next holder starts only after it:
   * for resources that cannot check fencing tokens. A release frees it at once.
   */
  public AcquireOptions lockDelay(Duration lockDelay) {
    return new AcquireOptions(ttl, wait, owner, shared, permits, reentrancyKey, lockDelay);
  }

  /** The settings, without the reentrancy key (a secret of sorts). */
  @Override
  public String toString() {
    return "AcquireOptions(ttl=" + ttl + ", wait=" + wait + ", owner=" + owner + ", shared=" + shared
        + ", permits=" + permits + ", reentrancyKey=" + (reentrancyKey.isEmpty() ? "none" : "set")
        + (lockDelay == null ? "" : ", lockDelay=" + lockDelay) + ")";
  }
}
