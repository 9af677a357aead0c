package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redlockd.v1.LockOuterClass.InspectResponse;

/** The kinds of lock: shared (read-write), permits (semaphores) and reentrancy keys. */
class KindsTest {
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

  static final AcquireOptions LOCK = AcquireOptions.defaults();
  static final HoldOptions SESSION = HoldOptions.defaults().ttl(Duration.ofSeconds(5));

  static FencingToken max(FencingToken a, FencingToken b) {
    return a.isAfter(b) ? a : b;
  }

  @Test
  void sharedLeasesHoldTogetherAndAWriterAfterThemGetsALargerToken() {
    Lease first = client.tryAcquire(resource, LOCK.shared()).orElseThrow();
    Lease second = client.tryAcquire(resource, LOCK.shared()).orElseThrow(() -> new AssertionError("a second reader was refused"));
    assertTrue(first.shared() && second.shared());
    // A shared lease's value is the daemon's "r" + 40 hex digits, never shown.
    assertTrue(first.value().startsWith("r") && !first.toString().contains(first.value()));
    assertTrue(first.toString().contains("shared"), first.toString());
    InspectResponse view = client.inspect(resource);
    assertTrue(view.getHeld());
    assertEquals(2, view.getReaders());
    assertTrue(client.tryAcquire(resource).isEmpty(), "a writer was granted beside two readers");
    assertTrue(first.release() && second.release());
    Lease writer = client.tryAcquire(resource).orElseThrow();
    assertFalse(writer.shared());
    assertTrue(writer.fencingToken().isAfter(max(first.fencingToken(), second.fencingToken())));
    assertTrue(writer.release());
  }

  @Test
  void sharedSessionsHoldTogetherAndKeepAWriterOut() {
    FencingToken readers;
    try (HeldLock first = client.hold(resource, SESSION.shared());
        HeldLock second = client.hold(resource, SESSION.shared().wait(Duration.ZERO))) {
      assertTrue(first.shared() && second.shared());
      assertTrue(client.tryAcquire(resource).isEmpty(), "a writer was granted beside two shared sessions");
      readers = max(first.fencingToken(), second.fencingToken());
    }
    Lease writer = client.tryAcquire(resource).orElseThrow();
    assertTrue(writer.fencingToken().isAfter(readers));
    assertTrue(writer.release());
  }

  @Test
  void permitsOfTwoTakeTwoSlotsRefuseAThirdAndRefuseAnotherNumber() {
    Lease first = client.tryAcquire(resource, LOCK.permits(2)).orElseThrow();
    Lease second = client.tryAcquire(resource, LOCK.permits(2)).orElseThrow(() -> new AssertionError("the second of two permits was refused"));
    assertEquals(2, first.permits());
    assertEquals(2, second.permits());
    assertEquals(Set.of(0, 1), Set.of(first.slot(), second.slot()), "two permits on one slot");
    assertTrue(first.toString().contains("slot=" + first.slot() + " of permits=2"), first.toString());
    InspectResponse view = client.inspect(resource);
    assertEquals(2, view.getPermits());
    assertEquals(2, view.getPermitsOut());
    assertTrue(client.tryAcquire(resource, LOCK.permits(2)).isEmpty(), "a third permit of two was granted");
    FailedPreconditionException other = assertThrows(FailedPreconditionException.class,
        () -> client.tryAcquire(resource, LOCK.permits(3)));
    assertTrue(other.getMessage().contains("2 permits"), other.getMessage());
    assertEquals(Status.Code.FAILED_PRECONDITION, other.code());
    assertTrue(first.release());
    Lease third = client.tryAcquire(resource, LOCK.permits(2)).orElseThrow(() -> new AssertionError("the freed permit was not handed out"));
    assertEquals(first.slot(), third.slot());
    // Tokens increase per slot: the third permit is fenced above the first.
    assertTrue(third.fencingToken().isAfter(first.fencingToken()));
    assertTrue(second.release() && third.release());
  }

  @Test
  void permitSessionsTakeTwoSlotsAndAThirdIsNotAcquired() {
    try (HeldLock first = client.hold(resource, SESSION.permits(2));
        HeldLock second = client.hold(resource, SESSION.permits(2).wait(Duration.ZERO))) {
      assertEquals(Set.of(0, 1), Set.of(first.slot(), second.slot()));
      assertEquals(2, first.permits());
      assertThrows(NotAcquiredException.class, () -> client.hold(resource, SESSION.permits(2).wait(Duration.ZERO)));
      assertThrows(FailedPreconditionException.class, () -> client.tryAcquire(resource, LOCK.permits(3)));
    }
    assertTrue(client.tryAcquire(resource, LOCK.permits(2)).orElseThrow().release());
  }

  @Test
  void acquiresWithOneReentrancyKeyShareTheLockUntilTheLastRelease() {
    String key = "job-" + resource;
    Lease outer = client.tryAcquire(resource, LOCK.reentrancyKey(key)).orElseThrow();
    Lease inner = client.tryAcquire(resource, LOCK.reentrancyKey(key)).orElseThrow(() -> new AssertionError("the same key was refused the lock it holds"));
    assertEquals(outer.fencingToken(), inner.fencingToken());
    assertEquals(outer.value(), inner.value());
    assertFalse(inner.toString().contains(key));
    assertTrue(client.tryAcquire(resource).isEmpty(), "granted without the key while held twice");
    assertTrue(client.tryAcquire(resource, LOCK.reentrancyKey("another job")).isEmpty(), "granted to another key");
    assertTrue(inner.release());
    assertTrue(client.inspect(resource).getHeld(), "released at the first of two releases");
    assertTrue(client.tryAcquire(resource).isEmpty(), "granted without the key while held once");
    assertTrue(outer.release());
    Lease after = client.tryAcquire(resource).orElseThrow(() -> new AssertionError("still held after both releases"));
    assertTrue(after.fencingToken().isAfter(outer.fencingToken()));
    assertTrue(after.release());
  }

  @Test
  void aSessionWithAReentrancyKeyIsOneHoldOfItsLock() {
    try (HeldLock session = client.hold(resource, SESSION.reentrancyKey("session-key"))) {
      Lease lease = client.tryAcquire(resource, LOCK.reentrancyKey("session-key")).orElseThrow();
      assertEquals(session.fencingToken(), lease.fencingToken());
      assertTrue(lease.release());
      assertTrue(client.tryAcquire(resource).isEmpty(), "the session's hold was given back by another's release");
    }
    assertTrue(client.tryAcquire(resource).orElseThrow().release());
  }

  @Test
  void permitsAndReentrancyKeysAreCheckedBeforeSending() {
    try (RedlockdClient nowhere = RedlockdClient.builder().address("127.0.0.1:1").build()) {
      List<org.junit.jupiter.api.function.Executable> negative = List.of(
          () -> nowhere.tryAcquire("examples/x", LOCK.permits(-1)),
          () -> nowhere.hold("examples/x", SESSION.permits(-1)));
      for (org.junit.jupiter.api.function.Executable call : negative) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call);
        assertEquals("invalid permits: -1 is not a number of permits (0 or 1: a lock; N >= 2: a semaphore)", e.getMessage());
      }
      InvalidArgumentException shared = assertThrows(InvalidArgumentException.class,
          () -> nowhere.tryAcquire("examples/x", LOCK.permits(2).shared()));
      assertTrue(shared.getMessage().startsWith("invalid permits: a shared lock takes no permits"), shared.getMessage());
      InvalidArgumentException tooLong = assertThrows(InvalidArgumentException.class,
          () -> nowhere.hold("examples/x", SESSION.reentrancyKey("é".repeat(64) + "k")));
      assertEquals("invalid reentrancy_key: is 129 bytes; at most 128 are allowed", tooLong.getMessage());
      for (String bad : new String[] {null, "\ud800"}) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
            () -> nowhere.tryAcquire("examples/x", LOCK.reentrancyKey(bad)));
        assertTrue(e.getMessage().startsWith("invalid reentrancy_key: "), e.getMessage());
      }
    }
  }
}
