package io.redlockd.client;

import java.time.Duration;

/**
 * A lock taken with {@link RedlockdClient#tryAcquire}, which the caller keeps alive ({@link
 * #extend}) and gives back ({@link #release}). In try-with-resources, {@link #close()} releases it
 * and throws {@link LockLostException} when it was no longer held to the end. Thread-safe.
 *
 * <p>Its validity counts from the moment the request was SENT (the client rule): {@link
 * #validUntilNanos()} is that send time on {@link System#nanoTime()}'s clock plus the daemon's
 * validity. Stop working under the lock before then, or extend it first.
 */
public final class Lease implements AutoCloseable {
  private final RedlockdClient client;
  private final Granted granted;
  private final Duration ttl;
  private volatile long validUntilNanos;
  private volatile boolean released;

  Lease(RedlockdClient client, Granted granted, long validUntilNanos, Duration ttl) {
    this.client = client;
    this.granted = granted;
    this.validUntilNanos = validUntilNanos;
    this.ttl = ttl;
  }

  /** The locked resource, as requested. */
  public String resource() {
    return granted.resource;
  }

  /** Strictly increases per resource (per slot for a permit): send it with every write. */
  public FencingToken fencingToken() {
    return granted.fencingToken;
  }

  /** Whether this is a shared lock (a reader); readers may share a token. */
  public boolean shared() {
    return granted.shared;
  }

  /** The semaphore's number of permits (0 for a lock). */
  public int permits() {
    return granted.permits;
  }

  /** The permit's slot, 0 to permits - 1; tokens increase per slot (0 for a lock). */
  public int slot() {
    return granted.slot;
  }

  /** Until when the lock is guaranteed, on {@link System#nanoTime()}'s clock. */
  public long validUntilNanos() {
    return validUntilNanos;
  }

  /** What is left of the validity (zero once it has passed). */
  public Duration remaining() {
    return Granted.remaining(validUntilNanos);
  }

  /** Resets the TTL to the one the lock was taken with; see {@link #extend(Duration)}. */
  public boolean extend() {
    return extend(ttl);
  }

  /**
   * Resets the lock's time to live to {@code ttl} and moves {@link #validUntilNanos()} on. False
   * when the lock is lost (expired or taken over): stop working under it. The token does not
   * change.
   */
  public boolean extend(Duration ttl) {
    Duration checked = Validate.duration(ttl, "ttl");
    if (released) {
      return false; // given back: nothing is held to extend
    }
    return client.extend(this, checked);
  }

  void extended(long validUntilNanos) {
    this.validUntilNanos = validUntilNanos;
  }

  /**
   * Gives the lock back. True when it was still held to the end (the critical section stayed
   * protected); false when it had expired or been taken over meanwhile, or was released already
   * (then nothing is sent: with a reentrancy key, a second release would give back another
   * acquisition's hold).
   */
  public boolean release() {
    if (!releasing()) {
      return false;
    }
    return client.release(this);
  }

  /**
   * Releases the lock, unless {@link #release()} was called already (which reported its own
   * result).
   *
   * @throws LockLostException when the lock was no longer held to the end
   */
  @Override
  public void close() {
    if (releasing() && !client.release(this)) {
      throw new LockLostException("released, but the lock had expired or been taken over");
    }
  }

  String value() {
    return granted.value;
  }

  Duration ttl() {
    return ttl;
  }

  boolean isReleased() {
    return released;
  }

  /** Marks it given back; false when it was already (by {@link #release()} or releaseMany). */
  synchronized boolean releasing() {
    boolean first = !released;
    released = true;
    return first;
  }

  /** The resource, the token, the kind and the time left; never the lock's value. */
  @Override
  public String toString() {
    return granted.describe("Lease", validUntilNanos, "");
  }
}
