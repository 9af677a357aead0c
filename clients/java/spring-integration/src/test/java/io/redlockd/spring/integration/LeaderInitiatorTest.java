package io.redlockd.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlockd.client.FencingToken;
import io.redlockd.client.RedlockdClient;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's LockRegistryLeaderInitiator on RedlockdLockRegistry, as
 * RedisLockRegistryLeaderInitiatorTests runs it: of two initiators exactly one leads, yielding
 * hands leadership over and back, stopping revokes; and a leader whose process is killed with kill
 * -9 is replaced within the lock's TTL (plus a heartbeat), under a higher fencing token.
 */
class LeaderInitiatorTest {
  private final List<RedlockdClient> clients = new ArrayList<>();
  private final List<LockRegistryLeaderInitiator> initiators = new ArrayList<>();
  private Process child;
  private String key;

  @BeforeEach
  void reset() {
    key = Daemon.registryKey("leader");
  }

  @AfterEach
  void stop() {
    initiators.forEach(LockRegistryLeaderInitiator::stop);
    if (child != null) {
      child.destroyForcibly();
    }
    clients.forEach(RedlockdClient::close);
  }

  private Leader candidate(String id, Duration ttl) {
    RedlockdClient client = Daemon.client();
    clients.add(client);
    RedlockdLockRegistry registry = new RedlockdLockRegistry(client, key, ttl);
    Leader leader = new Leader(id, "jobs", registry, term -> {});
    LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, leader);
    initiator.setTaskExecutor(new SimpleAsyncTaskExecutor("leader-" + id + "-"));
    initiators.add(initiator);
    return leader;
  }

  private static boolean await(CountDownLatch latch) throws InterruptedException {
    return latch.await(20, TimeUnit.SECONDS);
  }

  @Test
  void exactlyOneOfTwoLeadsAndYieldingHandsItOverAndBack() throws Exception {
    Leader a = candidate("a", Duration.ofSeconds(2));
    Leader b = candidate("b", Duration.ofSeconds(2));
    initiators.forEach(LockRegistryLeaderInitiator::start);
    // An independent check: both contexts sampled all along, never leading at once (the
    // initiator clears isLeader() before it unlocks and sets it after it has locked).
    AtomicBoolean sampling = new AtomicBoolean(true);
    AtomicInteger bothLed = new AtomicInteger();
    AtomicInteger samples = new AtomicInteger();
    Thread sampler = new Thread(() -> {
      while (sampling.get()) {
        if (initiators.get(0).getContext().isLeader() && initiators.get(1).getContext().isLeader()) {
          bothLed.incrementAndGet();
        }
        samples.incrementAndGet();
        LockSupport.parkNanos(200_000);
      }
    });
    sampler.start();
    CompletableFuture.anyOf(CompletableFuture.runAsync(() -> awaitQuietly(a.granted)),
        CompletableFuture.runAsync(() -> awaitQuietly(b.granted))).get(20, TimeUnit.SECONDS);
    Thread.sleep(1500); // heartbeats and failed tries of the other go on meanwhile
    LockRegistryLeaderInitiator first = initiators.get(a.granted.getCount() == 0 ? 0 : 1);
    LockRegistryLeaderInitiator second = initiators.get(a.granted.getCount() == 0 ? 1 : 0);
    Leader firstLeader = first == initiators.get(0) ? a : b;
    Leader secondLeader = first == initiators.get(0) ? b : a;
    assertThat(first.getContext().isLeader()).isTrue();
    assertThat(second.getContext().isLeader()).isFalse();
    assertThat(secondLeader.granted.getCount()).isEqualTo(1);

    // Yield: the other leads (the yielder waits 2.5 s before campaigning again; Spring's test waits 10 s).
    first.setBusyWaitMillis(2500);
    Thread.sleep(100);
    first.getContext().yield();
    assertThat(await(firstLeader.revoked)).isTrue();
    assertThat(await(secondLeader.granted)).isTrue();
    assertThat(second.getContext().isLeader()).isTrue();
    assertThat(first.getContext().isLeader()).isFalse();
    assertThat(secondLeader.term.isAfter(firstLeader.term)).as("%s after %s", secondLeader.term, firstLeader.term)
        .isTrue();

    // And back.
    firstLeader.granted = new CountDownLatch(1);
    first.setBusyWaitMillis(LockRegistryLeaderInitiator.DEFAULT_BUSY_WAIT_TIME);
    second.setBusyWaitMillis(2500);
    Thread.sleep(100);
    second.getContext().yield();
    assertThat(await(secondLeader.revoked)).isTrue();
    assertThat(await(firstLeader.granted)).isTrue();
    assertThat(first.getContext().isLeader()).isTrue();

    second.stop();
    firstLeader.revoked = new CountDownLatch(1);
    first.stop();
    assertThat(await(firstLeader.revoked)).isTrue();
    assertThat(first.getContext().isLeader()).isFalse();
    assertThat(Daemon.held(clients.get(0), key + "/jobs")).as("stopping released the lock").isFalse();
    sampling.set(false);
    sampler.join();
    assertThat(samples.get()).isGreaterThan(500);
    assertThat(bothLed.get()).as("samples in which both led").isZero();
  }

  @Test
  void aLeaderKilledWithKill9IsReplacedWithinTheTtl() throws Exception {
    String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        LeaderChild.class.getName(), key, "jobs").redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<String> grantedLine = CompletableFuture.supplyAsync(() -> {
      try {
        for (String line; (line = out.readLine()) != null; ) {
          if (line.startsWith("granted ")) {
            return line.substring(8);
          }
        }
        return null;
      } catch (java.io.IOException e) {
        return null;
      }
    });
    FencingToken childTerm = FencingToken.parse(grantedLine.get(30, TimeUnit.SECONDS));

    Duration ttl = Duration.ofSeconds(1);
    Leader here = candidate("here", ttl);
    initiators.get(0).start();
    Thread.sleep(2500); // over two TTLs: the child's heartbeats keep its leadership
    assertThat(here.granted.getCount()).as("elected while the child leads").isEqualTo(1);
    assertThat(initiators.get(0).getContext().isLeader()).isFalse();

    long killed = System.nanoTime();
    child.destroyForcibly(); // SIGKILL: no release, the lock runs out its TTL
    assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(await(here.granted)).isTrue();
    Duration takeover = Duration.ofNanos(System.nanoTime() - killed);
    assertThat(takeover).as("takeover after kill -9").isLessThanOrEqualTo(ttl.multipliedBy(2));
    assertThat(here.term.isAfter(childTerm)).as("%s after %s", here.term, childTerm).isTrue();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
