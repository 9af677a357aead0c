package io.redlockd.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlockd.client.FencingToken;
import io.redlockd.client.RedlockdClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;

/**
 * Registries as separate "instances", each on a connection of its own, and the lock's time to live:
 * what RedisLockRegistryTests and JdbcLockRegistryDifferentClientTests assert (two registries
 * contending, testExpireTwoRegistries, testExceptionOnExpire, testLockWithCustomTtl,
 * testRenewalOnExpire, testLockRenew*, earlyWakeUpTest, multiRedisLockRegistryTest), against a
 * real daemon. TTLs are at least the daemon's min_ttl (250 ms).
 */
class RegistryExpiryTest {
  private final List<RedlockdClient> clients = new ArrayList<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private String key;

  @BeforeEach
  void name() {
    key = Daemon.registryKey("expiry");
  }

  @AfterEach
  void disconnect() {
    executor.shutdownNow();
    clients.forEach(RedlockdClient::close);
  }

  /** A registry on a connection of its own: another "instance". */
  private RedlockdLockRegistry instance(Duration expireAfter) {
    RedlockdClient client = Daemon.client();
    clients.add(client);
    return new RedlockdLockRegistry(client, key, expireAfter);
  }

  @Test
  void twoInstancesHandOverAndTheirTokensRise() throws Exception {
    RedlockdLock lock1 = instance(Duration.ofSeconds(10)).obtain("foo");
    RedlockdLock lock2 = instance(Duration.ofSeconds(10)).obtain("foo");
    lock1.lockInterruptibly();
    FencingToken first = lock1.fencingToken();
    CountDownLatch started = new CountDownLatch(1);
    Future<FencingToken> second = executor.submit(() -> {
      started.countDown();
      lock2.lockInterruptibly(); // waits on the daemon
      try {
        return lock2.fencingToken();
      } finally {
        lock2.unlock();
      }
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(300);
    assertThat(second.isDone()).isFalse();
    lock1.unlock();
    FencingToken next = second.get(10, TimeUnit.SECONDS);
    assertThat(next.isAfter(first)).as("%s after %s", next, first).isTrue();
  }

  @Test
  void anExpiredLockGoesToTheOtherInstanceAndItsUnlockThrows() throws Exception {
    Lock lock1 = instance(Duration.ofMillis(300)).obtain("foo");
    Lock lock2 = instance(Duration.ofMillis(300)).obtain("foo");
    assertThat(lock1.tryLock()).isTrue();
    assertThat(lock2.tryLock()).isFalse();
    Thread.sleep(450);
    assertThat(lock2.tryLock()).isTrue();
    assertThat(lock1.tryLock()).as("a re-entry finds the lock taken over").isFalse();
    assertThatThrownBy(lock1::unlock).isInstanceOf(ConcurrentModificationException.class)
        .hasMessageContaining("Lock was released in the store due to expiration.");
    lock2.unlock();
  }

  @Test
  void anUnlockAfterExpiryThrowsEvenWhenNobodyTookIt() throws Exception {
    Lock lock = instance(Duration.ofMillis(300)).obtain("foo");
    lock.lock();
    Thread.sleep(450);
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    assertThat(((RedlockdLock) lock).isAcquiredInThisProcess()).isFalse();
  }

  @Test
  void aTtlPerLockOutlivesTheRegistryDefault() throws Exception {
    RedlockdLockRegistry registry = instance(Duration.ofMillis(300));
    RedlockdLockRegistry other = instance(Duration.ofMillis(300));
    for (int i = 0; i < 2; i++) {
      RedlockdLock lock = registry.obtain("foo");
      if (i == 0) {
        lock.lock(Duration.ofMillis(1500));
      } else {
        assertThat(lock.tryLock(Duration.ofMillis(100), Duration.ofMillis(1500))).isTrue();
      }
      Thread.sleep(600); // twice the registry's TTL
      assertThat(other.obtain("foo").tryLock()).isFalse();
      assertThatNoException().isThrownBy(lock::unlock);
    }
  }

  @Test
  void theRenewalSchedulerKeepsALockPastItsTtl() throws Exception {
    RedlockdLockRegistry registry = instance(Duration.ofMillis(300));
    SimpleAsyncTaskScheduler scheduler = new SimpleAsyncTaskScheduler();
    registry.setRenewalTaskScheduler(scheduler);
    try {
      Lock lock = registry.obtain("foo");
      assertThat(lock.tryLock()).isTrue();
      Thread.sleep(900);
      assertThat(instance(Duration.ofMillis(300)).obtain("foo").tryLock()).isFalse();
      assertThatNoException().isThrownBy(lock::unlock);
    } finally {
      scheduler.close();
    }
  }

  @Test
  void renewLockExtendsTheHoldersLockOnly() throws Exception {
    RedlockdLockRegistry registry = instance(Duration.ofMillis(300));
    RedlockdLock lock = registry.obtain("foo");
    assertThatThrownBy(() -> registry.renewLock("foo")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> registry.renewLock("never")).isInstanceOf(IllegalStateException.class);
    assertThat(lock.tryLock(Duration.ofMillis(100), Duration.ofMillis(300))).isTrue();
    registry.renewLock("foo", Duration.ofSeconds(2));
    Thread.sleep(450);
    assertThat(instance(Duration.ofMillis(300)).obtain("foo").tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
    Object fromAnotherThread = executor.submit(() -> {
      try {
        registry.renewLock("foo");
        return null;
      } catch (IllegalStateException e) {
        return e;
      }
    }).get(10, TimeUnit.SECONDS);
    assertThat(fromAnotherThread).isInstanceOf(IllegalStateException.class);
    registry.renewLock("foo"); // back to 300 ms
    Thread.sleep(450);
    assertThatThrownBy(() -> registry.renewLock("foo")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Could not renew");
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
  }

  @Test
  void oneUnlockWakesExactlyOneOfTwoWaitingInstances() throws Exception {
    Lock lock1 = instance(Duration.ofSeconds(10)).obtain("wake");
    Lock lock2 = instance(Duration.ofSeconds(10)).obtain("wake");
    Lock lock3 = instance(Duration.ofSeconds(10)).obtain("wake");
    CountDownLatch ready = new CountDownLatch(2);
    CountDownLatch done = new CountDownLatch(2);
    AtomicInteger got = new AtomicInteger();
    lock1.lock();
    for (Lock waiter : List.of(lock2, lock3)) {
      executor.submit(() -> {
        ready.countDown();
        if (waiter.tryLock(10, TimeUnit.SECONDS)) {
          got.incrementAndGet(); // and keeps it
        }
        done.countDown();
        return null;
      });
    }
    assertThat(ready.await(10, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(300);
    lock1.unlock();
    assertThat(done.await(1, TimeUnit.SECONDS)).as("the other still waits").isFalse();
    assertThat(got.get()).isEqualTo(1);
  }

  @Test
  void tenInstancesCountUnderTheLockWithoutLosingAnIncrement() throws Exception {
    // Read, then set: only the lock keeps increments from overwriting each other.
    AtomicInteger counter = new AtomicInteger();
    List<Callable<Void>> tasks = new ArrayList<>();
    for (int r = 0; r < 10; r++) {
      Lock lock = instance(Duration.ofSeconds(10)).obtain("counter");
      tasks.add(() -> {
        for (int i = 0; i < 3; i++) {
          lock.lock();
          try {
            int n = counter.get();
            Thread.sleep(1);
            counter.set(n + 1);
          } finally {
            lock.unlock();
          }
        }
        return null;
      });
    }
    for (Future<Void> f : executor.invokeAll(tasks, 60, TimeUnit.SECONDS)) {
      f.get();
    }
    assertThat(counter.get()).isEqualTo(30);
  }
}
