package io.redlockd.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlockd.client.FencingToken;
import io.redlockd.client.RedlockdClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the provider promises beyond ShedLock's kit, against a real daemon: the job's fencing token,
 * lockAtLeastFor kept on the masters after the process is gone, lockAtMostFor above the daemon's
 * max_ttl.
 */
class ProviderBehaviourTest {
  private RedlockdClient client;
  private RedlockdLockProvider provider;
  private String prefix;

  @BeforeEach
  void connect() {
    client = Daemon.client();
    prefix = Daemon.prefix("behaviour");
    provider = RedlockdLockProvider.builder(client).prefix(prefix).owner("behaviour").build();
  }

  @AfterEach
  void disconnect() {
    provider.close();
    client.close();
  }

  private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
    return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
  }

  @Test
  void theJobSeesItsFencingTokenWhichRisesRunAfterRunAndSurvivesAnExtension() throws Exception {
    // On a thread of its own: the token is per thread, and JUnit's thread holds the kit's locks.
    ExecutorService thread = Executors.newSingleThreadExecutor();
    try {
      thread.submit(this::threeRuns).get(30, TimeUnit.SECONDS);
    } finally {
      thread.shutdownNow();
    }
  }

  private Void threeRuns() {
    DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
    List<FencingToken> seen = new ArrayList<>();
    for (int run = 0; run < 3; run++) {
      executor.executeWithLock((Runnable) () -> {
        LockAssert.assertLocked();
        FencingToken token = RedlockdShedLock.currentToken();
        // The masters' record of the lock's token: the job's, or above it when a master that
        // answered after the quorum had counted further (the proto's Holder.fencing_token).
        var holder = client.inspect(prefix + "report").getHolder();
        assertThat(FencingToken.fromWire(holder.getFencingToken())).isGreaterThanOrEqualTo(token);
        assertThat(holder.getOwner()).isEqualTo("behaviour");
        LockExtender.extendActiveLock(Duration.ofSeconds(20), Duration.ZERO);
        assertThat(RedlockdShedLock.currentToken()).isEqualTo(token);
        assertThat(client.inspect(prefix + "report").getHolder().getTtl().getSeconds()).isGreaterThanOrEqualTo(15);
        seen.add(token);
      }, config("report", Duration.ofSeconds(10), Duration.ZERO));
    }
    assertThat(seen).hasSize(3);
    assertThat(seen.get(1).isAfter(seen.get(0))).as("%s after %s", seen.get(1), seen.get(0)).isTrue();
    assertThat(seen.get(2).isAfter(seen.get(1))).as("%s after %s", seen.get(2), seen.get(1)).isTrue();
    assertThat(Daemon.held(client, prefix + "report")).isFalse();
    assertThatThrownBy(RedlockdShedLock::currentToken).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("holds no redlockd ShedLock lock");
    assertThat(RedlockdShedLock.findCurrentToken()).isEmpty();
    return null;
  }

  @Test
  void anUnlockBeforeLockAtLeastForKeepsTheLockOnTheMastersEvenWhenTheProcessIsGone() throws Exception {
    Duration atLeast = Duration.ofMillis(1500);
    long start = System.nanoTime();
    SimpleLock lock = provider.lock(config("nightly", Duration.ofSeconds(10), atLeast)).orElseThrow();
    lock.unlock();
    // Shortened from 10 s to what is left of lockAtLeastFor, on the masters.
    var left = client.inspect(prefix + "nightly").getHolder().getTtl();
    assertThat(Duration.ofSeconds(left.getSeconds(), left.getNanos())).isBetween(Duration.ofMillis(500), atLeast);
    // This "process" is gone: its timer and its connection.
    provider.close();
    client.close();
    try (RedlockdClient other = Daemon.client();
        RedlockdLockProvider second = RedlockdLockProvider.builder(other).prefix(prefix).build()) {
      Optional<SimpleLock> taken = Optional.empty();
      while (taken.isEmpty() && System.nanoTime() - start < Duration.ofSeconds(5).toNanos()) {
        taken = second.lock(config("nightly", Duration.ofSeconds(10), Duration.ZERO));
        if (taken.isEmpty()) {
          Thread.sleep(20);
        }
      }
      Duration after = Duration.ofNanos(System.nanoTime() - start);
      assertThat(taken).as("taken within 5 s").isPresent();
      assertThat(after).as("taken after lockAtLeastFor").isGreaterThanOrEqualTo(atLeast.minusMillis(50));
      assertThat(after).as("taken soon after lockAtLeastFor").isLessThan(atLeast.plusMillis(800));
      taken.get().unlock();
    } finally {
      client = Daemon.client(); // for disconnect()
    }
  }

  @Test
  void aLockAtMostForAboveTheDaemonsMaxTtlIsExtendedUntilThenAndNoLonger() throws Exception {
    // As if the daemon's max_ttl were 1 s: a lockAtMostFor of 2.5 s is taken for 1 s and extended.
    try (RedlockdLockProvider shortTtl = RedlockdLockProvider.builder(client).prefix(prefix)
        .ttlRange(Duration.ofMillis(250), Duration.ofSeconds(1)).build()) {
      long start = System.nanoTime();
      Optional<SimpleLock> lock = shortTtl.lock(config("long", Duration.ofMillis(2500), Duration.ZERO));
      assertThat(lock).isPresent();
      assertThat(client.inspect(prefix + "long").getHolder().getTtl().getSeconds()).isZero(); // 1 s at most
      sleepUntil(start, Duration.ofMillis(1900));
      assertThat(Daemon.held(client, prefix + "long")).as("held at 1.9 s, past max_ttl").isTrue();
      assertThat(provider.lock(config("long", Duration.ofSeconds(5), Duration.ZERO))).isEmpty();
      sleepUntil(start, Duration.ofMillis(3000));
      assertThat(Daemon.held(client, prefix + "long")).as("held at 3 s, past lockAtMostFor").isFalse();
      assertThat(lock.get().extend(Duration.ofSeconds(5), Duration.ZERO)).isEmpty();
      provider.lock(config("long", Duration.ofSeconds(5), Duration.ZERO)).orElseThrow().unlock();
    }
  }

  private static void sleepUntil(long start, Duration after) throws InterruptedException {
    long left = start + after.toNanos() - System.nanoTime();
    if (left > 0) {
      Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
    }
  }
}
