package io.redlockd.shedlock;

import io.redlockd.client.FencingToken;
import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock lock held on redlockd. {@code unlock} before lockAtLeastFor keeps the lock on the
 * masters until then; {@code extend} hands the same redlockd lock (and fencing token) to a new
 * {@code SimpleLock}, as ShedLock wants, and this one can no longer be used.
 */
final class RedlockdSimpleLock extends AbstractSimpleLock {
  private final Holding holding;

  RedlockdSimpleLock(LockConfiguration configuration, Holding holding) {
    super(configuration);
    this.holding = holding;
  }

  FencingToken fencingToken() {
    return holding.fencingToken();
  }

  boolean ended() {
    return holding.ended();
  }

  @Override
  protected void doUnlock() {
    RedlockdShedLock.ended(this);
    long atLeastUntil = RedlockdLockProvider.nanosAt(lockConfiguration.getLockAtLeastUntil());
    if (atLeastUntil - System.nanoTime() > 0) {
      holding.keepUntil(atLeastUntil); // not released: it ends at lockAtLeastFor, on the masters
    } else {
      holding.release();
    }
  }

  @Override
  protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
    long until = RedlockdLockProvider.nanosAt(newConfiguration.getLockAtMostUntil());
    if (!holding.keepUntil(until)) {
      RedlockdShedLock.ended(this);
      return Optional.empty();
    }
    RedlockdSimpleLock extended = new RedlockdSimpleLock(newConfiguration, holding);
    RedlockdShedLock.replaced(this, extended);
    return Optional.of(extended);
  }

  @Override
  public String toString() {
    return "RedlockdSimpleLock(" + lockConfiguration.getName() + ", " + holding + ")";
  }
}
