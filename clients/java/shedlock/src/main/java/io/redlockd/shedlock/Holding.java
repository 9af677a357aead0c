package io.redlockd.shedlock;

import io.redlockd.client.FencingToken;
import io.redlockd.client.Lease;
import io.redlockd.client.RedlockdException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One redlockd lease behind a ShedLock lock (and the locks {@code extend} made of it), kept so that
 * the masters hold it until {@link #until} and no longer: the TTL is what is left when that fits
 * the daemon's range; below {@code min_ttl} the timer releases it at {@code until}; above {@code
 * max_ttl} the timer extends it every third of max_ttl. Thread-safe (all under its monitor).
 */
final class Holding {
  private static final System.Logger LOG = System.getLogger(Holding.class.getName());

  private final RedlockdLockProvider provider;
  private final Lease lease;
  /** When the lock should end, on {@link System#nanoTime()}'s clock. */
  private long until;
  /** The timer's next step (a release or an extension), if any. */
  private ScheduledFuture<?> next;
  /** Released, or found lost: nothing more is done with the lease. */
  private boolean over;

  /** {@code lease} was just taken with {@link RedlockdLockProvider#ttlFor} of {@code until}. */
  Holding(RedlockdLockProvider provider, Lease lease, long until) {
    this.provider = provider;
    this.lease = lease;
    synchronized (this) {
      this.until = until;
      plan(until - System.nanoTime());
    }
  }

  FencingToken fencingToken() {
    return lease.fencingToken();
  }

  String resource() {
    return lease.resource();
  }

  /** Whether the lock has ended: released, lost, or past its time. */
  synchronized boolean ended() {
    return over || System.nanoTime() - until >= 0 || System.nanoTime() - lease.validUntilNanos() >= 0;
  }

  /**
   * Makes the lock end at {@code newUntil} instead (an extend, or an unlock before lockAtLeastFor):
   * false when it had ended already (then it is released, if it was not).
   */
  synchronized boolean keepUntil(long newUntil) {
    if (ended()) {
      releaseNow("it ended before it was kept longer");
      return false;
    }
    cancelNext();
    until = newUntil;
    long left = newUntil - System.nanoTime();
    if (left <= 0) {
      releaseNow("");
      return true;
    }
    boolean coveredAlready = lease.validUntilNanos() - newUntil >= 0;
    if (!(left < provider.minTtl.toNanos() && coveredAlready)) {
      // Shortened or lengthened to what is left (within the daemon's range).
      if (!extend(provider.ttlFor(left))) {
        return false;
      }
    }
    plan(left);
    return true;
  }

  /** Unlock at or after lockAtLeastFor: gives the lease back now. */
  synchronized void release() {
    releaseNow(ended() ? "it had ended before it was unlocked" : "");
  }

  /** After an acquisition or an extension to {@code ttlFor(left)}: what the timer does next. */
  private void plan(long left) {
    if (left < provider.minTtl.toNanos()) {
      next = schedule(this::timedRelease, left);
    } else if (left > provider.maxTtl.toNanos()) {
      next = schedule(this::renew, provider.maxTtl.toNanos() / 3);
    }
  }

  private synchronized void timedRelease() {
    if (!over) {
      releaseNow("");
    }
  }

  private synchronized void renew() {
    if (over) {
      return;
    }
    long left = until - System.nanoTime();
    if (extend(provider.ttlFor(left))) {
      plan(left);
    }
  }

  /** Sets the lease's TTL: false (and over) when it was lost. */
  private boolean extend(Duration ttl) {
    try {
      if (Uninterrupted.call(() -> lease.extend(ttl))) {
        return true;
      }
      LOG.log(Level.WARNING, "redlockd ShedLock lock {0} was lost (expired or taken over)", lease.resource());
    } catch (RedlockdException e) {
      LOG.log(Level.WARNING, "redlockd ShedLock lock " + lease.resource() + " could not be extended", e);
    }
    over = true;
    return false;
  }

  /** Gives the lease back; says so when it was no longer held ({@code why} non-empty: expected). */
  private void releaseNow(String why) {
    if (over) {
      return;
    }
    over = true;
    cancelNext();
    try {
      boolean held = Uninterrupted.call(lease::release);
      if (!held && why.isEmpty()) {
        LOG.log(Level.WARNING, "redlockd ShedLock lock {0} had expired or been taken over before its release",
            lease.resource());
      }
    } catch (RedlockdException e) {
      // The masters drop it at its TTL.
      LOG.log(Level.WARNING, "redlockd ShedLock lock " + lease.resource() + " could not be released", e);
    }
  }

  private ScheduledFuture<?> schedule(Runnable step, long delayNanos) {
    try {
      return provider.timer.schedule(step, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      LOG.log(Level.WARNING, "the redlockd ShedLock provider is closed: lock {0} is left to its TTL", lease.resource());
      return null;
    }
  }

  private void cancelNext() {
    if (next != null) {
      next.cancel(false);
      next = null;
    }
  }

  @Override
  public synchronized String toString() {
    return "Holding(" + lease + (over ? ", over" : "") + ")";
  }
}
