package io.redlockd.spring.integration;

import io.redlockd.client.RedlockdClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * A Spring Integration lock registry on redlockd: {@link #obtain} gives a {@link RedlockdLock} (a
 * {@link java.util.concurrent.locks.Lock} and {@link DistributedLock}) for the resource {@code
 * registryKey + "/" + lockKey}, as {@code RedisLockRegistry} does on one Redis, but taken on the
 * daemon's masters by Redlock, with a fencing token.
 *
 * <ul>
 *   <li>Locks are reentrant per thread; only the thread that holds one may unlock it ({@code
 *       IllegalStateException} otherwise). Threads of one registry queue on a local lock first, so
 *       only one of them asks the daemon.
 *   <li>A lock lives {@code expireAfter} (default 60 s, within the daemon's {@code lock.min_ttl}
 *       and {@code lock.max_ttl}) unless renewed: {@link #renewLock}, a re-entry ({@code tryLock}
 *       by the holder) or the {@link #setRenewalTaskScheduler renewal scheduler}. An unlock that
 *       finds it gone throws {@link java.util.ConcurrentModificationException}, as {@code
 *       RedisLockRegistry} does.
 *   <li>{@link #expireUnusedOlderThan} drops locks no thread here holds from the registry's map.
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class RedlockdLockRegistry
    implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {
  /** The TTL when none is given, as {@code RedisLockRegistry}'s. */
  public static final Duration DEFAULT_EXPIRE_AFTER = Duration.ofSeconds(60);
  /** The longest wait one Acquire asks of the daemon (its {@code lock.max_wait} is 60 s). */
  static final Duration DEFAULT_WAIT_PER_CALL = Duration.ofSeconds(30);

  final RedlockdClient client;
  private final String registryKey;
  final Duration expireAfter;
  private final Lock mapLock = new ReentrantLock();
  private final Map<String, RedlockdLock> locks = new HashMap<>();
  volatile String owner = "spring-integration";
  volatile Duration waitPerCall = DEFAULT_WAIT_PER_CALL;
  volatile TaskScheduler renewalTaskScheduler;

  /** A registry whose locks live {@link #DEFAULT_EXPIRE_AFTER} unless renewed. */
  public RedlockdLockRegistry(RedlockdClient client, String registryKey) {
    this(client, registryKey, DEFAULT_EXPIRE_AFTER);
  }

  /** A registry whose locks live {@code expireAfter} (their TTL) unless renewed. */
  public RedlockdLockRegistry(RedlockdClient client, String registryKey, Duration expireAfter) {
    this.client = Objects.requireNonNull(client, "client");
    this.registryKey = Objects.requireNonNull(registryKey, "registryKey");
    this.expireAfter = Objects.requireNonNull(expireAfter, "expireAfter");
    if (registryKey.isEmpty()) {
      throw new IllegalArgumentException("registryKey must not be empty");
    }
    if (expireAfter.isNegative() || expireAfter.isZero()) {
      throw new IllegalArgumentException("expireAfter must be positive, not " + expireAfter);
    }
  }

  /** The owner label the daemon shows beside this registry's locks (default {@code spring-integration}). */
  public void setOwner(String owner) {
    this.owner = Objects.requireNonNull(owner, "owner");
  }

  /**
   * The longest wait one Acquire asks of the daemon (default 30 s; at most its {@code
   * lock.max_wait}): longer waits ask again.
   */
  public void setWaitPerCall(Duration waitPerCall) {
    if (waitPerCall.isNegative() || waitPerCall.isZero()) {
      throw new IllegalArgumentException("waitPerCall must be positive, not " + waitPerCall);
    }
    this.waitPerCall = waitPerCall;
  }

  /**
   * Renews each lock this registry takes from now on, every third of its TTL, until it is unlocked
   * (or a renewal finds it lost).
   */
  @Override
  public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
    this.renewalTaskScheduler = renewalTaskScheduler;
  }

  /**
   * The lock for {@code lockKey} (a String, 1 to 256 bytes with the registry key): the same object
   * for the same key until {@link #expireUnusedOlderThan} drops it.
   */
  @Override
  public RedlockdLock obtain(Object lockKey) {
    String key = key(lockKey);
    mapLock.lock();
    try {
      return locks.computeIfAbsent(key, k -> new RedlockdLock(this, k, registryKey + "/" + k));
    } finally {
      mapLock.unlock();
    }
  }

  /** Drops from the registry the locks last taken more than {@code age} ms ago that no thread here holds. */
  @Override
  public void expireUnusedOlderThan(long age) {
    long now = System.currentTimeMillis();
    mapLock.lock();
    try {
      locks.values().removeIf(lock -> {
        long lockedAt = lock.lockedAt();
        return lockedAt > 0 && now - lockedAt > age && !lock.isAcquiredInThisProcess();
      });
    } finally {
      mapLock.unlock();
    }
  }

  /** {@link #renewLock(Object, Duration)} to the registry's {@code expireAfter}. */
  @Override
  public void renewLock(Object lockKey) {
    renewLock(lockKey, expireAfter);
  }

  /**
   * Resets the time to live of the lock on {@code lockKey}, which the current thread holds, to
   * {@code ttl} from now.
   *
   * @throws IllegalStateException when the current thread does not hold it, or it was lost
   */
  @Override
  public void renewLock(Object lockKey, Duration ttl) {
    String key = key(lockKey);
    RedlockdLock lock;
    mapLock.lock();
    try {
      lock = locks.get(key);
    } finally {
      mapLock.unlock();
    }
    if (lock == null) {
      throw new IllegalStateException("You do not own lock at " + registryKey + "/" + key + ": it was never obtained");
    }
    lock.renew(ttl);
  }

  /** How many locks the registry keeps (for tests). */
  int size() {
    mapLock.lock();
    try {
      return locks.size();
    } finally {
      mapLock.unlock();
    }
  }

  private static String key(Object lockKey) {
    if (!(lockKey instanceof String key)) {
      throw new IllegalArgumentException("a lock key must be a String, not " + lockKey);
    }
    return key;
  }

  @Override
  public String toString() {
    return "RedlockdLockRegistry(" + registryKey + ", expireAfter " + expireAfter + ")";
  }
}
