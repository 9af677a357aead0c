package io.redlockd.shedlock;

import io.redlockd.client.AcquireOptions;
import io.redlockd.client.Lease;
import io.redlockd.client.RedlockdClient;
import io.redlockd.client.RedlockdException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;

/**
 * A ShedLock {@link ExtensibleLockProvider} on redlockd: each ShedLock lock is a redlockd lock on
 * the resource {@code prefix + name}, taken without waiting (ShedLock skips a run that finds the
 * lock taken).
 *
 * <ul>
 *   <li><b>lockAtMostFor is the TTL</b>: the masters drop the lock then, also when this process
 *       died. A lockAtMostFor below the daemon's {@code lock.min_ttl} (250 ms) is held for min_ttl
 *       on the masters and released by this provider's timer at lockAtMostFor; one above its
 *       {@code lock.max_ttl} (60 s) is taken for max_ttl and extended by the timer until
 *       lockAtMostFor (a dead process's lock then lasts at most max_ttl).
 *   <li><b>lockAtLeastFor is honoured</b>: an unlock before it does not release the lock but sets
 *       its time to live to what is left of lockAtLeastFor, so it ends at that moment, on the
 *       masters, whatever happens to this process.
 *   <li><b>The fencing token</b> of the lock a job runs under is {@link
 *       RedlockdShedLock#currentToken()}, on the job's thread.
 *   <li>{@link SimpleLock#extend} (LockExtender) resets the lock's time to live to the new
 *       lockAtMostFor, from now; empty when the lock has expired or been lost.
 * </ul>
 *
 * <p>Thread-safe. {@link #close()} stops the provider's timer thread (not the client).
 */
public final class RedlockdLockProvider implements ExtensibleLockProvider, AutoCloseable {
  /** The daemon's default {@code lock.min_ttl}. */
  public static final Duration DEFAULT_MIN_TTL = Duration.ofMillis(250);
  /** The daemon's default {@code lock.max_ttl}. */
  public static final Duration DEFAULT_MAX_TTL = Duration.ofSeconds(60);

  private final RedlockdClient client;
  private final String prefix;
  private final String owner;
  final Duration minTtl;
  final Duration maxTtl;
  final ScheduledExecutorService timer;

  /** A provider with the defaults: the prefix {@code shedlock/}, the daemon's default TTL range. */
  public RedlockdLockProvider(RedlockdClient client) {
    this(builder(client));
  }

  private RedlockdLockProvider(Builder b) {
    this.client = b.client;
    this.prefix = b.prefix;
    this.owner = b.owner;
    this.minTtl = b.minTtl;
    this.maxTtl = b.maxTtl;
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
      Thread thread = new Thread(r, "redlockd-shedlock-timer");
      thread.setDaemon(true);
      return thread;
    });
    t.setRemoveOnCancelPolicy(true);
    this.timer = t;
  }

  public static Builder builder(RedlockdClient client) {
    return new Builder(client);
  }

  /** The provider's settings. */
  public static final class Builder {
    private final RedlockdClient client;
    private String prefix = "shedlock/";
    private String owner = "shedlock";
    private Duration minTtl = DEFAULT_MIN_TTL;
    private Duration maxTtl = DEFAULT_MAX_TTL;

    private Builder(RedlockdClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /** Put before each lock name to make the resource (default {@code shedlock/}). */
    public Builder prefix(String prefix) {
      this.prefix = Objects.requireNonNull(prefix, "prefix");
      return this;
    }

    /** The owner label the daemon shows beside the lock (default {@code shedlock}). */
    public Builder owner(String owner) {
      this.owner = Objects.requireNonNull(owner, "owner");
      return this;
    }

    /** The daemon's {@code lock.min_ttl} and {@code lock.max_ttl}, when it is not configured with the defaults. */
    public Builder ttlRange(Duration minTtl, Duration maxTtl) {
      if (minTtl.isNegative() || minTtl.isZero() || maxTtl.compareTo(minTtl) < 0) {
        throw new IllegalArgumentException("ttlRange: want 0 < minTtl <= maxTtl, got " + minTtl + " and " + maxTtl);
      }
      this.minTtl = minTtl;
      this.maxTtl = maxTtl;
      return this;
    }

    public RedlockdLockProvider build() {
      return new RedlockdLockProvider(this);
    }
  }

  /**
   * Takes the lock named by {@code configuration} for its lockAtMostFor, without waiting: empty when
   * someone else holds it.
   *
   * @throws LockException when the daemon could not be asked (no quorum, no daemon, a bad name)
   */
  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    String resource = prefix + configuration.getName();
    long until = nanosAt(configuration.getLockAtMostUntil());
    Duration ttl = ttlFor(until - System.nanoTime());
    Optional<Lease> lease;
    try {
      lease = Uninterrupted.call(() ->
          client.tryAcquire(resource, AcquireOptions.defaults().ttl(ttl).owner(owner)));
    } catch (RedlockdException e) {
      throw new LockException("redlockd could not lock " + resource + ": " + e.getMessage(), e);
    }
    if (lease.isEmpty()) {
      return Optional.empty();
    }
    Holding holding = new Holding(this, lease.get(), until);
    return Optional.of(RedlockdShedLock.started(new RedlockdSimpleLock(configuration, holding)));
  }

  /** The TTL asked for a lock that should last {@code leftNanos}: within the daemon's range. */
  Duration ttlFor(long leftNanos) {
    return Duration.ofNanos(Math.max(minTtl.toNanos(), Math.min(maxTtl.toNanos(), leftNanos)));
  }

  /** {@code instant} (ShedLock's clock) on {@link System#nanoTime()}'s. */
  static long nanosAt(Instant instant) {
    return System.nanoTime() + Duration.between(ClockProvider.now(), instant).toNanos();
  }

  /** Stops the timer thread; locks it would still release or extend are left to expire. */
  @Override
  public void close() {
    timer.shutdownNow();
  }

  @Override
  public String toString() {
    return "RedlockdLockProvider(prefix=" + prefix + ", ttl range " + minTtl + " to " + maxTtl + ")";
  }
}
