package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** hold(), the Hold session, against a real daemon. */
class SessionsTest {
  RedlockdClient client;
  String resource;

  @BeforeEach
  void connect() {
    client = Daemon.client();
    resource = Daemon.resource();
  }

  @AfterEach
  void close() {
    client.close();
  }

  static HoldOptions ttl(long seconds) {
    return HoldOptions.defaults().ttl(Duration.ofSeconds(seconds));
  }

  @Test
  void holdWithAWaitHandsTheLockOverInFifoOrder() throws Exception {
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    List<FencingToken> tokens = Collections.synchronizedList(new ArrayList<>());
    List<Thread> waiters = new ArrayList<>();
    try (HeldLock holding = client.hold(resource, ttl(5))) {
      tokens.add(holding.fencingToken());
      for (String name : new String[] {"second", "third"}) {
        Thread waiter = new Thread(() -> {
          try (HeldLock lock = client.hold(resource, ttl(5).wait(Duration.ofSeconds(30)))) {
            order.add(name);
            tokens.add(lock.fencingToken());
          }
        });
        waiter.start();
        waiters.add(waiter);
        Thread.sleep(500); // orders the two waiters; no timing is asserted
      }
      assertEquals(List.of(), order, "a waiter got the lock while it was held");
    }
    for (Thread waiter : waiters) {
      waiter.join(30_000);
    }
    assertEquals(List.of("second", "third"), order);
    assertEquals(3, Set.copyOf(tokens).size());
    List<FencingToken> sorted = new ArrayList<>(tokens);
    Collections.sort(sorted);
    assertEquals(sorted, tokens, "tokens did not rise");
  }

  @Test
  void aSessionIsReleasedOnCloseAndWhenItsBodyThrows() {
    try (HeldLock lock = client.hold(resource, ttl(30))) {
      assertFalse(lock.isLost());
      assertTrue(client.tryAcquire(resource).isEmpty(), "two holders");
    }
    // TTL 30 s: only a release frees it this soon.
    assertTrue(client.tryAcquire(resource).orElseThrow().release());
    assertThrows(IllegalStateException.class, () -> {
      try (HeldLock lock = client.hold(resource, ttl(30))) {
        throw new IllegalStateException("the work failed");
      }
    });
    Lease after = client.tryAcquire(resource).orElseThrow(() -> new AssertionError("a session whose body threw kept its lock"));
    assertTrue(after.release());
  }

  @Test
  void releaseSaysWhetherTheLockWasHeldToTheEndAndCloseAfterItDoesNothing() {
    HeldLock lock = client.hold(resource, ttl(30));
    assertTrue(lock.release());
    assertTrue(lock.release(), "the same answer again");
    lock.close();
    assertTrue(client.tryAcquire(resource).orElseThrow().release());
  }

  @Test
  void holdThrowsNotAcquiredWhenTheWaitRunsOut() {
    Lease lease = client.tryAcquire(resource).orElseThrow();
    long started = System.nanoTime();
    NotAcquiredException e = assertThrows(NotAcquiredException.class,
        () -> client.hold(resource, ttl(5).wait(Duration.ofMillis(500))));
    double took = (System.nanoTime() - started) / 1e9;
    assertTrue(took >= 0.5 && took < 5, took + " s");
    assertEquals("FAILURE_REASON_TAKEN", e.reason());
    assertEquals(Set.of("held by another owner"), Set.copyOf(e.nodes().values()), e.nodes().toString());
    assertEquals(5, e.nodes().size());
    assertTrue(lease.release());
  }

  @Test
  void theDaemonExtendsASessionAndValidUntilMovesOn() throws Exception {
    try (HeldLock lock = client.hold(resource, ttl(2))) {
      long first = lock.validUntilNanos();
      assertTrue(lock.remaining().compareTo(Duration.ofSeconds(2)) <= 0);
      Thread.sleep(2500); // past the first TTL: only extensions keep it
      assertFalse(lock.isLost(), () -> lock.lost().getNow("?"));
      assertTrue(lock.validUntilNanos() > first + 500_000_000L, "valid_until did not move on");
      assertTrue(client.tryAcquire(resource).isEmpty(), "two holders");
    }
  }

  @Test
  void aReleaseByTheDaemonWhileTheLockIsInUseIsALoss() throws Exception {
    CompletableFuture<String> told = new CompletableFuture<>();
    LockLostException e = assertThrows(LockLostException.class, () -> {
      try (HeldLock lock = client.hold(resource, ttl(5).maxHold(Duration.ofMillis(500)))) {
        lock.lost().thenAccept(told::complete);
        String reason = lock.lost().get(5, TimeUnit.SECONDS);
        assertTrue(reason.contains("max_hold"), reason);
        assertTrue(lock.isLost());
        // The body returns normally: closing still throws.
      }
    });
    assertTrue(e.getMessage().contains("max_hold"), e.getMessage());
    assertTrue(told.get(1, TimeUnit.SECONDS).contains("max_hold"), "a dependent action did not run");
  }

  @Test
  void aReleaseThatFindsTheLockGoneIsReportedNotSwallowed() {
    LockLostException e = assertThrows(LockLostException.class, () -> {
      try (HeldLock lock = client.hold(resource, ttl(30))) {
        Daemon.deleteLockEverywhere(resource); // as if it had expired meanwhile
      }
    });
    assertTrue(e.getMessage().contains("no longer held"), e.getMessage());
  }

  @Test
  void aJvmKilledWithKill9FreesItsLockAtOnce() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Process holder = new ProcessBuilder(java, "-cp", classpath, HoldingChild.class.getName(), resource)
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      String said = CompletableFuture.supplyAsync(() -> {
        try {
          return out.readLine();
        } catch (java.io.IOException e) {
          return null;
        }
      }).get(60, TimeUnit.SECONDS);
      if (said == null || !said.startsWith("held ")) {
        fail("the child JVM did not hold the lock: " + said);
      }
      FencingToken childs = FencingToken.parse(said.substring("held ".length()));
      assertTrue(client.tryAcquire(resource).isEmpty(), "the child's lock was not held");
      Daemon.run("kill", "-9", Long.toString(holder.pid()));
      long started = System.nanoTime();
      Lease lease = client.tryAcquire(resource, AcquireOptions.defaults().wait(Duration.ofSeconds(10)))
          .orElseThrow(() -> new AssertionError("not acquired within 10 s of the kill"));
      double took = (System.nanoTime() - started) / 1e9;
      // TTL 30 s: only the daemon seeing the stream break frees it this soon.
      assertTrue(took < 5, "took " + took + " s");
      assertTrue(lease.fencingToken().isAfter(childs));
      assertTrue(holder.waitFor(10, TimeUnit.SECONDS));
      assertEquals(137, holder.exitValue(), "not killed by SIGKILL");
      assertTrue(lease.release());
    } finally {
      holder.destroyForcibly();
      holder.waitFor();
    }
  }
}
