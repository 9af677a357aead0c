package io.redlockd.shedlock;

import io.redlockd.client.FencingToken;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The redlockd lock a ShedLock job runs under, on the job's thread (ShedLock takes the lock, runs
 * the job and unlocks on one thread). Send {@link #currentToken()} with every write the job makes,
 * to a store that refuses a token lower than one it has seen: a job that outlived its lock (past
 * lockAtMostFor, or on a lost lock) is then refused instead of overwriting its successor's work.
 */
public final class RedlockdShedLock {
  /** This thread's redlockd ShedLock locks, innermost last (nested locks of different names). */
  private static final ThreadLocal<Deque<RedlockdSimpleLock>> HELD = ThreadLocal.withInitial(ArrayDeque::new);

  private RedlockdShedLock() {}

  /**
   * The fencing token of the innermost redlockd ShedLock lock this thread holds.
   *
   * @throws IllegalStateException when this thread holds none, or it has ended (expired at
   *     lockAtMostFor, or lost)
   */
  public static FencingToken currentToken() {
    RedlockdSimpleLock lock = HELD.get().peekLast();
    if (lock == null) {
      throw new IllegalStateException("this thread holds no redlockd ShedLock lock: call it from a job that "
          + "runs under @SchedulerLock or LockingTaskExecutor with the RedlockdLockProvider");
    }
    if (lock.ended()) {
      throw new IllegalStateException("the redlockd ShedLock lock " + lock + " has ended (lockAtMostFor passed, or it was lost)");
    }
    return lock.fencingToken();
  }

  /** {@link #currentToken()}, or empty when this thread holds no lock that is still held. */
  public static Optional<FencingToken> findCurrentToken() {
    RedlockdSimpleLock lock = HELD.get().peekLast();
    return lock == null || lock.ended() ? Optional.empty() : Optional.of(lock.fencingToken());
  }

  static RedlockdSimpleLock started(RedlockdSimpleLock lock) {
    HELD.get().addLast(lock);
    return lock;
  }

  static void ended(RedlockdSimpleLock lock) {
    Deque<RedlockdSimpleLock> held = HELD.get();
    held.removeLastOccurrence(lock);
    if (held.isEmpty()) {
      HELD.remove();
    }
  }

  static void replaced(RedlockdSimpleLock old, RedlockdSimpleLock extended) {
    Deque<RedlockdSimpleLock> held = HELD.get();
    if (!held.contains(old)) {
      if (held.isEmpty()) {
        HELD.remove();
      }
      return; // extended on another thread: the job's thread keeps the token it has
    }
    Deque<RedlockdSimpleLock> kept = new ArrayDeque<>();
    for (RedlockdSimpleLock lock : held) {
      kept.addLast(lock == old ? extended : lock);
    }
    HELD.set(kept);
  }
}
