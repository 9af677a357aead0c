package io.redlockd.spring.integration;

import io.redlockd.client.AcquireOptions;
import io.redlockd.client.FencingToken;
import io.redlockd.client.Lease;
import io.redlockd.client.RedlockdException;
import java.time.Duration;
import java.time.Instant;
import java.util.ConcurrentModificationException;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.scheduling.TaskScheduler;

/**
 * A redlockd lock from a {@link RedlockdLockRegistry}: a thread takes the registry's local lock for
 * the key (reentrant), then, on its first hold, the lock on the daemon's masters for the TTL. {@link
 * #fencingToken()} is the token of the hold: send it with every write made under the lock.
 */
public final class RedlockdLock implements DistributedLock {
  private final RedlockdLockRegistry registry;
  private final String key;
  private final String resource;
  private final ReentrantLock local = new ReentrantLock();
  /** The daemon's lease while a thread here holds the lock (guarded by {@link #local}). */
  private volatile Lease lease;
  private volatile long lockedAt;
  private volatile ScheduledFuture<?> renewal;

  RedlockdLock(RedlockdLockRegistry registry, String key, String resource) {
    this.registry = registry;
    this.key = key;
    this.resource = resource;
  }

  /** The daemon's resource: the registry key, '/', the lock key. */
  public String resource() {
    return resource;
  }

  /**
   * The fencing token of the current hold, which rises with every hold of the resource.
   *
   * @throws IllegalStateException when the current thread does not hold the lock
   */
  public FencingToken fencingToken() {
    if (!local.isHeldByCurrentThread() || lease == null) {
      throw new IllegalStateException("You do not own lock at " + resource);
    }
    return lease.fencingToken();
  }

  /** What is left of the hold's validity on the masters (zero when not held here). */
  public Duration remaining() {
    Lease held = lease;
    return held == null ? Duration.ZERO : held.remaining();
  }

  /** When the lock was last taken (ms since the epoch; 0: never). */
  long lockedAt() {
    return lockedAt;
  }

  /** Whether a thread of this process holds it. */
  public boolean isAcquiredInThisProcess() {
    return local.isLocked();
  }

  @Override
  public void lock() {
    lock(registry.expireAfter);
  }

  /** Waits, uninterruptibly, until the lock is held, for {@code ttl}. */
  @Override
  public void lock(Duration ttl) {
    local.lock();
    boolean interrupted = false;
    try {
      while (true) {
        interrupted |= Thread.interrupted(); // gRPC would cancel a call on an interrupted thread
        try {
          if (acquire(ttl, registry.waitPerCall)) {
            return;
          }
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (RuntimeException e) {
          local.unlock();
          throw cannotLock(e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void lockInterruptibly() throws InterruptedException {
    local.lockInterruptibly();
    try {
      while (true) {
        if (Thread.interrupted()) {
          throw new InterruptedException("interrupted while waiting for " + resource);
        }
        if (acquire(registry.expireAfter, registry.waitPerCall)) {
          return;
        }
      }
    } catch (InterruptedException e) {
      local.unlock();
      throw e;
    } catch (RuntimeException e) {
      local.unlock();
      throw cannotLock(e);
    }
  }

  @Override
  public boolean tryLock() {
    try {
      return tryLock(Duration.ZERO, registry.expireAfter);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    return tryLock(Duration.ofNanos(unit.toNanos(time)), registry.expireAfter);
  }

  /** Waits up to {@code waitTime} for the lock, for {@code ttl}. */
  @Override
  public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
    long deadline = System.nanoTime() + Math.max(0, waitTime.toNanos());
    if (!local.tryLock(Math.max(0, waitTime.toNanos()), TimeUnit.NANOSECONDS)) {
      return false;
    }
    try {
      while (true) {
        long left = Math.max(0, deadline - System.nanoTime());
        Duration wait = Duration.ofNanos(Math.min(left, registry.waitPerCall.toNanos()));
        if (acquire(ttl, wait)) {
          return true;
        }
        if (deadline - System.nanoTime() <= 0) {
          local.unlock();
          return false;
        }
      }
    } catch (InterruptedException e) {
      local.unlock();
      throw e;
    } catch (RuntimeException e) {
      local.unlock();
      throw cannotLock(e);
    }
  }

  /**
   * With the local lock held: makes sure the masters hold the lock for this thread, for {@code
   * ttl}. A re-entry renews the hold (or takes the lock again if it was lost meanwhile, as
   * RedisLockRegistry's re-entry does); a failed re-entry gives back its local hold.
   */
  private boolean acquire(Duration ttl, Duration wait) throws InterruptedException {
    Lease held = lease;
    if (held != null) {
      if (Uninterrupted.call(() -> held.extend(ttl))) {
        return true;
      }
      stopRenewal();
      lease = null;
    }
    Optional<Lease> taken;
    try {
      taken = registry.client.tryAcquire(resource, AcquireOptions.defaults().ttl(ttl).wait(wait).owner(registry.owner));
    } catch (RedlockdException e) {
      if (Thread.currentThread().isInterrupted()) {
        throw new InterruptedException("interrupted while waiting for " + resource);
      }
      throw e;
    }
    if (taken.isEmpty()) {
      return false;
    }
    lease = taken.get();
    lockedAt = System.currentTimeMillis();
    startRenewal(ttl);
    return true;
  }

  /**
   * Gives back one hold of the current thread; the last one releases the lock on the masters.
   *
   * @throws IllegalStateException when the current thread does not hold the lock
   * @throws ConcurrentModificationException when the masters no longer held it (it expired, or
   *     was taken over): what it protected may have been changed meanwhile
   */
  @Override
  public void unlock() {
    if (!local.isHeldByCurrentThread()) {
      throw new IllegalStateException("You do not own lock at " + resource);
    }
    if (local.getHoldCount() > 1) {
      local.unlock();
      return;
    }
    try {
      stopRenewal();
      Lease held = lease;
      lease = null;
      if (held == null || !Uninterrupted.call(held::release)) {
        throw new ConcurrentModificationException("Lock was released in the store due to expiration. "
            + "The integrity of data protected by this lock may have been compromised. (" + resource + ")");
      }
    } finally {
      local.unlock();
    }
  }

  /** The current thread's hold, renewed to {@code ttl} from now. */
  void renew(Duration ttl) {
    if (!local.isHeldByCurrentThread() || lease == null) {
      throw new IllegalStateException("You do not own lock at " + resource);
    }
    Lease held = lease;
    if (!Uninterrupted.call(() -> held.extend(ttl))) {
      throw new IllegalStateException("Could not renew mutex at " + resource + ": the lock was lost");
    }
  }

  private void startRenewal(Duration ttl) {
    TaskScheduler scheduler = registry.renewalTaskScheduler;
    if (scheduler == null) {
      return;
    }
    Lease held = lease;
    Duration every = ttl.dividedBy(3);
    ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
    self[0] = scheduler.scheduleWithFixedDelay(() -> {
      try {
        if (lease != held || !held.extend(ttl)) {
          self[0].cancel(false); // released, or lost: the holder's unlock says so
        }
      } catch (RedlockdException e) {
        // No quorum for now: tried again at the next period, while the validity lasts.
      }
    }, Instant.now().plus(every), every);
    renewal = self[0];
  }

  private void stopRenewal() {
    ScheduledFuture<?> r = renewal;
    if (r != null) {
      r.cancel(false);
      renewal = null;
    }
  }

  private CannotAcquireLockException cannotLock(RuntimeException e) {
    return new CannotAcquireLockException("Failed to lock mutex at " + resource + ": " + e.getMessage(), e);
  }

  @Override
  public Condition newCondition() {
    throw new UnsupportedOperationException("Conditions are not supported");
  }

  @Override
  public String toString() {
    return "RedlockdLock[" + resource + (lockedAt > 0 ? ", lockedAt=" + Instant.ofEpochMilli(lockedAt) : "")
        + (local.isLocked() ? ", held here" : "") + "]";
  }

  String key() {
    return key;
  }
}
