package io.redlockd.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlockd.client.RedlockdClient;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One registry, several threads: the java.util.concurrent.locks.Lock contract, as Spring's
 * RedisLockRegistryTests and JdbcLockRegistryTests assert it (testLock, testReentrantLock,
 * testLockInterruptibly, testTwoLocks, testTwoThreads, testTwoThreadsSecondFailsToGetLock,
 * testTwoThreadsWrongOneUnlocks, testEquals, testUnlockWhenInterrupted..., expireUnusedOlderThan),
 * against a real daemon. Where Spring's tests look into the registry, these also ask the masters.
 */
class RegistryLockTest {
  private RedlockdClient client;
  private RedlockdLockRegistry registry;
  private String key;
  private final ExecutorService executor = Executors.newCachedThreadPool();

  @BeforeEach
  void connect() {
    client = Daemon.client();
    key = Daemon.registryKey("lock");
    registry = new RedlockdLockRegistry(client, key);
  }

  @AfterEach
  void disconnect() {
    executor.shutdownNow();
    client.close();
  }

  @Test
  void lockAndUnlockTenTimesThenExpireUnused() {
    for (int i = 0; i < 10; i++) {
      Lock lock = registry.obtain("foo");
      lock.lock();
      try {
        assertThat(registry.size()).isEqualTo(1);
        assertThat(Daemon.held(client, key + "/foo")).isTrue();
      } finally {
        lock.unlock();
      }
      assertThat(Daemon.held(client, key + "/foo")).isFalse();
    }
    registry.expireUnusedOlderThan(-1000);
    assertThat(registry.size()).isZero();
  }

  @Test
  void expireUnusedKeepsHeldAndRecentLocks() {
    RedlockdLock held = registry.obtain("held");
    held.lock();
    registry.obtain("never-locked");
    RedlockdLock recent = registry.obtain("recent");
    recent.lock();
    recent.unlock();
    registry.expireUnusedOlderThan(60_000);
    assertThat(registry.size()).isEqualTo(3);
    registry.expireUnusedOlderThan(-1000);
    assertThat(registry.size()).as("the held lock and the never-locked one stay").isEqualTo(2);
    assertThat(registry.obtain("held")).isSameAs(held);
    held.unlock();
  }

  @Test
  void reentrantPerThreadAndReleasedByTheLastUnlock() throws Exception {
    RedlockdLockRegistry other = new RedlockdLockRegistry(client, key);
    for (int i = 0; i < 3; i++) {
      RedlockdLock lock1 = registry.obtain("foo");
      lock1.lockInterruptibly();
      Lock lock2 = registry.obtain("foo");
      assertThat(lock2).isSameAs(lock1);
      lock2.lock();
      assertThat(lock1.tryLock()).isTrue(); // a third hold
      lock1.unlock();
      lock2.unlock();
      assertThat(other.obtain("foo").tryLock()).as("still held after two of three unlocks").isFalse();
      assertThat(lock1.fencingToken()).isNotNull();
      lock1.unlock();
      assertThat(Daemon.held(client, key + "/foo")).isFalse();
    }
  }

  @Test
  void twoKeysAreTwoLocks() throws Exception {
    Lock foo = registry.obtain("foo");
    Lock bar = registry.obtain("bar");
    assertThat(bar).isNotSameAs(foo).isNotEqualTo(foo);
    foo.lockInterruptibly();
    bar.lockInterruptibly();
    assertThat(Daemon.held(client, key + "/foo")).isTrue();
    assertThat(Daemon.held(client, key + "/bar")).isTrue();
    bar.unlock();
    foo.unlock();
  }

  @Test
  void aSecondThreadFailsToGetItAndMayNotUnlockIt() throws Exception {
    Lock lock1 = registry.obtain("foo");
    lock1.lockInterruptibly();
    AtomicBoolean locked = new AtomicBoolean(true);
    Future<Object> result = executor.submit(() -> {
      Lock lock2 = registry.obtain("foo");
      locked.set(lock2.tryLock(300, TimeUnit.MILLISECONDS));
      try {
        lock2.unlock();
      } catch (IllegalStateException ise) {
        return ise;
      }
      return null;
    });
    Object ise = result.get(10, TimeUnit.SECONDS);
    assertThat(locked.get()).isFalse();
    assertThat(ise).isInstanceOf(IllegalStateException.class);
    assertThat(((Exception) ise).getMessage()).contains("You do not own lock at");
    assertThat(Daemon.held(client, key + "/foo")).as("the stranger's unlock released nothing").isTrue();
    lock1.unlock();
  }

  @Test
  void aWaitingThreadGetsItWhenTheHolderUnlocks() throws Exception {
    Lock lock1 = registry.obtain("foo");
    lock1.lockInterruptibly();
    CountDownLatch waiting = new CountDownLatch(1);
    AtomicBoolean gotIt = new AtomicBoolean();
    Future<?> second = executor.submit(() -> {
      Lock lock2 = registry.obtain("foo");
      waiting.countDown();
      lock2.lockInterruptibly();
      gotIt.set(true);
      lock2.unlock();
      return null;
    });
    assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(200);
    assertThat(gotIt.get()).as("not while the first thread holds it").isFalse();
    lock1.unlock();
    second.get(10, TimeUnit.SECONDS);
    assertThat(gotIt.get()).isTrue();
  }

  @Test
  void lockInterruptiblyGivesUpWhenInterruptedWhileTheDaemonMakesItWait() throws Exception {
    RedlockdLockRegistry other = new RedlockdLockRegistry(client, key);
    Lock theirs = other.obtain("foo");
    theirs.lock();
    AtomicReference<Thread> waiter = new AtomicReference<>();
    Future<Object> result = executor.submit(() -> {
      waiter.set(Thread.currentThread());
      try {
        registry.obtain("foo").lockInterruptibly();
        return "locked";
      } catch (InterruptedException e) {
        return e;
      }
    });
    Thread.sleep(500); // well inside the Acquire's wait on the daemon
    waiter.get().interrupt();
    assertThat(result.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
    assertThat(registry.obtain("foo").isAcquiredInThisProcess()).as("its local hold was given back").isFalse();
    theirs.unlock();
    Lock ours = registry.obtain("foo");
    assertThat(ours.tryLock(2, TimeUnit.SECONDS)).isTrue();
    ours.unlock();
  }

  @Test
  void theWrongThreadsUnlockThrowsAndTheOwnersWorks() throws Exception {
    Lock lock = registry.obtain("foo");
    lock.lockInterruptibly();
    Object ise = executor.submit(() -> {
      try {
        lock.unlock();
      } catch (IllegalStateException e) {
        return e;
      }
      return null;
    }).get(10, TimeUnit.SECONDS);
    assertThat(ise).isInstanceOf(IllegalStateException.class);
    assertThat(((Exception) ise).getMessage()).contains("You do not own lock at");
    lock.unlock();
    assertThat(Daemon.held(client, key + "/foo")).isFalse();
  }

  @Test
  void theSameKeyIsTheSameLockInOneRegistryAndAnotherInAnother() {
    RedlockdLockRegistry registry2 = new RedlockdLockRegistry(client, key);
    RedlockdLockRegistry registry3 = new RedlockdLockRegistry(client, key + "-other");
    Lock lock1 = registry.obtain("foo");
    assertThat(registry.obtain("foo")).isEqualTo(lock1);
    Lock lock2 = registry2.obtain("foo");
    assertThat(lock2).isNotEqualTo(lock1);
    lock1.lock();
    assertThat(lock2.tryLock()).isFalse();
    Lock lock3 = registry3.obtain("foo");
    lock3.lock(); // another registry key: another resource
    lock3.unlock();
    lock1.unlock();
  }

  @Test
  void anInterruptedHolderStillReleasesOnTheMasters() throws Exception {
    Lock lock = registry.obtain("test");
    Future<Boolean> stillInterrupted = executor.submit(() -> {
      lock.lock();
      Thread.currentThread().interrupt();
      lock.unlock();
      return Thread.currentThread().isInterrupted();
    });
    assertThat(stillInterrupted.get(10, TimeUnit.SECONDS)).as("the flag is kept").isTrue();
    assertThat(Daemon.held(client, key + "/test")).as("released on the masters").isFalse();
    Lock fromElsewhere = new RedlockdLockRegistry(client, key).obtain("test");
    assertThat(fromElsewhere.tryLock()).isTrue();
    fromElsewhere.unlock();
  }

  @Test
  void expiringAndObtainingAtOnceNeverBreaksTheLock() throws Exception {
    for (int i = 0; i < 30; i++) {
      String lockKey = "key" + i;
      CountDownLatch go = new CountDownLatch(1);
      Future<?>[] both = new Future<?>[2];
      for (int t = 0; t < 2; t++) {
        both[t] = executor.submit(() -> {
          go.await();
          registry.expireUnusedOlderThan(10_000);
          Lock lock = registry.obtain(lockKey);
          if (lock.tryLock(500, TimeUnit.MILLISECONDS)) {
            lock.unlock();
          }
          return null;
        });
      }
      go.countDown();
      both[0].get(10, TimeUnit.SECONDS);
      both[1].get(10, TimeUnit.SECONDS);
      assertThat(Daemon.held(client, key + "/" + lockKey)).isFalse();
    }
  }

  @Test
  void keysMustBeStringsAndTokensNeedAHolder() {
    assertThatThrownBy(() -> registry.obtain(42)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must be a String");
    assertThatThrownBy(() -> registry.obtain("foo").fencingToken()).isInstanceOf(IllegalStateException.class);
  }
}
