package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.math.BigInteger;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import redlockd.v1.LockOuterClass.AcquireRequest;
import redlockd.v1.LockOuterClass.InspectResponse;

/** tryAcquire, Lease.extend and Lease.release against a real daemon, and the checks made before sending. */
class LockingTest {
  static final Duration TEN = Duration.ofSeconds(10);
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

  Optional<Lease> acquire(String name, Duration ttl) {
    return client.tryAcquire(name, AcquireOptions.defaults().ttl(ttl));
  }

  @Test
  void aSecondHolderIsRefusedAndTheNextOneGetsALargerToken() {
    Lease first = acquire(resource, TEN).orElseThrow();
    assertEquals(resource, first.resource());
    assertTrue(acquire(resource, TEN).isEmpty(), "two holders");
    assertTrue(first.remaining().compareTo(Duration.ofSeconds(9)) > 0 && first.remaining().compareTo(TEN) <= 0, first.toString());
    assertTrue(first.release());
    Lease second = acquire(resource, TEN).orElseThrow();
    assertTrue(second.fencingToken().isAfter(first.fencingToken()), second.fencingToken() + " after " + first.fencingToken());
    assertTrue(second.release());
  }

  @Test
  void aLeaseNeverShowsItsValue() {
    Lease lease = acquire(resource, TEN).orElseThrow();
    String shown = lease.toString();
    assertEquals(40, lease.value().length());
    assertFalse(shown.contains(lease.value()), shown);
    assertTrue(shown.contains(lease.fencingToken().toString()) && shown.contains(resource), shown);
    lease.release();
  }

  @Test
  void extendMovesValidUntilOnWithTheTtlTheLeaseWasTakenWith() throws Exception {
    Lease lease = acquire(resource, Duration.ofSeconds(1)).orElseThrow();
    Thread.sleep(300);
    long before = lease.validUntilNanos();
    assertTrue(lease.extend());
    assertTrue(lease.validUntilNanos() > before, "valid_until did not move on");
    assertTrue(lease.validUntilNanos() <= System.nanoTime() + 1_000_000_000L, "not the TTL it was taken with");
    assertTrue(lease.extend(Duration.ofSeconds(20)));
    assertTrue(lease.remaining().compareTo(Duration.ofSeconds(19)) > 0, lease.toString());
    assertTrue(lease.release());
    assertFalse(lease.extend(Duration.ofSeconds(5)), "a released lease was extended");
  }

  @Test
  void aReleaseAfterTheLockExpiredSaysFalseAndCloseThrowsLockLost() throws Exception {
    Lease lease = acquire(resource, Duration.ofMillis(300)).orElseThrow();
    Thread.sleep(lease.remaining().toMillis() + 300);
    assertFalse(lease.release());
    LockLostException lost = assertThrows(LockLostException.class, () -> {
      try (Lease l = acquire(resource, Duration.ofMillis(300)).orElseThrow()) {
        Thread.sleep(l.remaining().toMillis() + 300);
      }
    });
    assertTrue(lost.getMessage().contains("expired or been taken over"), lost.getMessage());
    try (Lease l = acquire(resource, TEN).orElseThrow()) {
      assertTrue(acquire(resource, TEN).isEmpty(), "two holders");
    }
    Lease after = acquire(resource, TEN).orElseThrow(() -> new AssertionError("close did not release"));
    after.release();
    after.close(); // released already: nothing more, no exception
  }

  @Test
  void tokensAboveTwoToThe53AreKeptExact() throws Exception {
    long counter = Daemon.raiseFenceCounters();
    Lease lease = acquire(resource, TEN).orElseThrow();
    // (counter + 1) * 16 + the index of the first master that answered.
    BigInteger token = lease.fencingToken().toBigInteger();
    assertTrue(token.compareTo(BigInteger.ONE.shiftLeft(53)) > 0, token.toString());
    assertEquals(BigInteger.valueOf(counter + 1), token.shiftRight(4), token.toString());
    assertTrue(token.intValue() % 16 < 5);
    assertEquals(token.toString(), lease.fencingToken().toString());
    assertTrue(lease.release());
    Lease next = acquire(resource, TEN).orElseThrow();
    assertTrue(next.fencingToken().isAfter(lease.fencingToken()));
    assertTrue(next.release());
  }

  @Test
  void aWaitThatFindsNoDaemonIsRetriedUntilItRunsOut() {
    // Nothing listens on port 1: every try is UNAVAILABLE.
    try (RedlockdClient nowhere = RedlockdClient.builder().address("127.0.0.1:1").build()) {
      long started = System.nanoTime();
      UnavailableException e = assertThrows(UnavailableException.class,
          () -> nowhere.tryAcquire(resource, AcquireOptions.defaults().wait(Duration.ofMillis(800))));
      double took = (System.nanoTime() - started) / 1e9;
      assertTrue(took >= 0.8 && took < 3, "the wait was not retried until it ran out: " + took + " s");
      assertTrue(e.nodes().isEmpty(), e.nodes().toString());
      assertEquals(Status.Code.UNAVAILABLE, e.code());
      started = System.nanoTime();
      assertThrows(UnavailableException.class, () -> nowhere.tryAcquire(resource));
      assertTrue(System.nanoTime() - started < 500_000_000L, "wait 0 was retried");
      assertThrows(UnavailableException.class,
          () -> nowhere.hold(resource, HoldOptions.defaults().wait(Duration.ZERO)));
    }
  }

  static Stream<Arguments> bad() {
    AcquireOptions ok = AcquireOptions.defaults();
    return Stream.of(
        Arguments.of("", ok, "invalid resource: is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8"),
        Arguments.of("é".repeat(129), ok,
            "invalid resource: is 258 bytes long; it must be 1 to 256 bytes of printable UTF-8"),
        Arguments.of("a\nb", ok,
            "invalid resource: contains the control character '\\n'; only printable UTF-8 is allowed"),
        Arguments.of("a\u001bb", ok,
            "invalid resource: contains the control character '\\u{1b}'; only printable UTF-8 is allowed"),
        Arguments.of("examples/ok", ok.owner("o".repeat(257)),
            "invalid owner: is 257 bytes long; it must be 0 to 256 bytes of printable UTF-8"),
        Arguments.of("examples/ok", ok.ttl(Duration.ofMillis(-1500)),
            "invalid ttl: -1s -500000000ns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)"),
        Arguments.of("examples/ok", ok.wait(Duration.ofSeconds(-2)),
            "invalid wait: -2s 0ns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)"));
  }

  @ParameterizedTest
  @MethodSource("bad")
  void badArgumentsFailBeforeSendingInTheDaemonsWords(String name, AcquireOptions options, String message) {
    // What the daemon says to the same request, sent around the client.
    AcquireRequest request = AcquireRequest.newBuilder()
        .setResource(name).setOwner(options.owner)
        .setTtl(Wire.duration(options.ttl)).setWait(Wire.duration(options.wait)).build();
    StatusRuntimeException daemon = assertThrows(StatusRuntimeException.class, () -> client.blockingStub().acquire(request));
    assertEquals(Status.Code.INVALID_ARGUMENT, daemon.getStatus().getCode());
    assertEquals(message, daemon.getStatus().getDescription());
    // The client says it without sending: nothing listens on port 1.
    try (RedlockdClient nowhere = RedlockdClient.builder().address("127.0.0.1:1").build()) {
      InvalidArgumentException said = assertThrows(InvalidArgumentException.class, () -> nowhere.tryAcquire(name, options));
      assertEquals(message, said.getMessage());
      assertEquals(Status.Code.INVALID_ARGUMENT, said.code());
      HoldOptions hold = HoldOptions.defaults().owner(options.owner).ttl(options.ttl).wait(options.wait);
      InvalidArgumentException session = assertThrows(InvalidArgumentException.class, () -> nowhere.hold(name, hold));
      assertEquals(message, session.getMessage());
    }
  }

  @Test
  void badDurationsAndSettingsAreRefusedNamingTheField() {
    try (RedlockdClient nowhere = RedlockdClient.builder().address("127.0.0.1:1").build()) {
      assertMessage("invalid ttl: ", () -> nowhere.tryAcquire("examples/x", AcquireOptions.defaults().ttl(null)));
      assertMessage("invalid ttl: ", () -> nowhere.tryAcquire("examples/x", AcquireOptions.defaults().ttl(Duration.ofDays(4_000_000))));
      assertMessage("invalid max_hold: ", () -> nowhere.hold("examples/x", HoldOptions.defaults().maxHold(Duration.ofSeconds(-1))));
      assertMessage("invalid resource: is not valid UTF-8", () -> nowhere.tryAcquire("examples/\ud800"));
      assertMessage("invalid resource: must be a string, not null", () -> nowhere.tryAcquire(null));
    }
    assertMessage("invalid token: ", () -> RedlockdClient.builder().address("127.0.0.1:1").token("bad\ntoken").build());
    assertMessage("REDLOCKD_CERT and REDLOCKD_KEY must be set together",
        () -> RedlockdClient.builder().environment(java.util.Map.of("REDLOCKD_CERT", "/nowhere.pem")).build());
  }

  static void assertMessage(String start, org.junit.jupiter.api.function.Executable call) {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call);
    assertTrue(e.getMessage().startsWith(start), e.getMessage());
  }

  @Test
  void aTtlOutsideTheDaemonsRangeIsItsInvalidArgument() {
    String[][] cases = {{"1", "1ms"}, {"0", "0s"}, {"61000", "1m 1s"}};
    for (String[] c : cases) {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> acquire(resource, Duration.ofMillis(Long.parseLong(c[0]))));
      assertEquals("invalid ttl: " + c[1] + " is outside the allowed range [250ms, 1m]", e.getMessage());
    }
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> client.tryAcquire(resource, AcquireOptions.defaults().wait(Duration.ofSeconds(61))));
    assertEquals("invalid wait: 1m 1s is above the allowed maximum of 1m", e.getMessage());
  }

  @Test
  void inspectShowsTheQuorumTheHolderAndNeverTheValue() {
    Lease lease = client.tryAcquire(resource, AcquireOptions.defaults().owner("junit")).orElseThrow();
    InspectResponse view = client.inspect(resource);
    assertTrue(view.getHeld());
    assertEquals(5, view.getAgreeing());
    assertEquals(3, view.getQuorum());
    assertEquals("junit", view.getHolder().getOwner());
    assertFalse(view.getHolder().getDaemon().isEmpty());
    FencingToken holder = FencingToken.fromWire(view.getHolder().getFencingToken());
    assertFalse(holder.isBefore(lease.fencingToken()));
    assertFalse(view.toString().contains(lease.value()));
    assertTrue(lease.release());
    assertFalse(client.inspect(resource).getHeld());
  }

  @Test
  void theClientRefusesNoResourceTheDaemonTakes() {
    // Printable to the daemon (not a control character), though Java's own notions may differ.
    for (String odd : new String[] {"zero\u200bwidth", "no\u00a0break", "emoji \ud83d\udd12", "x".repeat(200)}) {
      String name = (resource + "/" + odd);
      name = name.substring(0, Math.min(name.length(), 240));
      Lease lease = acquire(name, Duration.ofSeconds(5)).orElseThrow();
      assertEquals(name, lease.resource());
      assertTrue(lease.release());
    }
  }
}
