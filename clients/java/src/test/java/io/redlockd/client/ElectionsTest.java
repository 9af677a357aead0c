package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** campaign, leader, participants, proclaim and resign, terms above 2^53, lock delay, bad input. */
class ElectionsTest {
  RedlockdClient client;
  String election;

  @BeforeEach
  void connect() {
    client = Daemon.client();
    election = Daemon.election();
  }

  @AfterEach
  void close() {
    client.close();
  }

  static CampaignOptions as(String candidate) {
    return CampaignOptions.defaults().candidate(candidate).ttl(Duration.ofSeconds(5));
  }

  /** Polls participants until {@code wanted} holds, for up to 5 s; the last answer. */
  List<String> participantsUntil(Predicate<List<String>> wanted) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    List<String> candidates;
    while (!wanted.test(candidates = client.participants(election)) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    return candidates;
  }

  @Test
  void theFirstCandidateLeadsWithTheTermLeaderReadsAndTheNextLeadsAfterItWithALargerTerm() throws Exception {
    Leadership first = client.campaign(election, as("pod-a").value("pod-a:8080"));
    assertFalse(first.isLost());
    assertEquals("pod-a:8080", first.valueUtf8());
    assertTrue(first.remaining().compareTo(Duration.ofSeconds(3)) > 0, first.toString());
    LeaderState now = client.leader(election);
    assertTrue(now.elected());
    assertEquals("pod-a", now.candidate());
    assertEquals(first.term(), now.term());
    assertEquals("pod-a:8080", now.valueUtf8());
    Instant since = now.since().orElseThrow();
    assertTrue(Duration.between(since, Instant.now()).abs().toSeconds() < 60, since.toString());

    CompletableFuture<Leadership> second = CompletableFuture.supplyAsync(() -> client.campaign(election, as("pod-b")));
    assertEquals(List.of("pod-b"), participantsUntil(c -> !c.isEmpty()));
    Thread.sleep(300);
    assertFalse(second.isDone(), "a second candidate was elected beside the first");
    assertTrue(first.resign());
    assertFalse(first.isLost(), "a resignation counted as a loss");
    try (Leadership next = second.get(5, TimeUnit.SECONDS)) {
      assertTrue(next.term().isAfter(first.term()), next.term() + " after " + first.term());
      assertEquals(next.term(), client.leader(election).term());
      assertEquals(List.of(), client.participants(election));
    }
    assertFalse(client.leader(election).elected(), "closing did not resign");
  }

  @Test
  void proclaimOnTheLeadershipAndByTermStaleTermsRefusedNamingTheCurrentOneResignByTerm() throws Exception {
    Leadership leadership = client.campaign(election, as("pod-a").value("one"));
    leadership.proclaim("two");
    assertEquals("two", leadership.valueUtf8());
    assertEquals("two", client.leader(election).valueUtf8());
    byte[] bytes = {0, (byte) 255, 10, (byte) 128};
    client.proclaim(election, leadership.term(), bytes);
    assertArrayEquals(bytes, client.leader(election).value());
    FencingToken before = FencingToken.of(leadership.term().toBigInteger().subtract(BigInteger.ONE));
    FencingToken after = FencingToken.of(leadership.term().toBigInteger().add(BigInteger.ONE));
    for (Executable stale : List.<Executable>of(
        () -> client.proclaim(election, before, bytes), () -> client.resign(election, after))) {
      FailedPreconditionException refused = assertThrows(FailedPreconditionException.class, stale);
      assertTrue(refused.getMessage().contains(leadership.term().toString()), refused.getMessage());
    }

    client.resign(election, leadership.term());
    // Resigned from outside the stream: for the leader that is a loss.
    String reason = leadership.lost().get(2, TimeUnit.SECONDS);
    assertTrue(reason.startsWith("resigned by the daemon"), reason);
    assertFalse(client.leader(election).elected());
    assertThrows(LeadershipLostException.class, () -> leadership.proclaim("three"));
    assertThrows(LeadershipLostException.class, leadership::close);
    assertFalse(leadership.resign(), "a lost leadership was resigned");
  }

  @Test
  void termsAbove2To53StayExactFromElectedThroughLeaderBackInProclaimAndResign() throws Exception {
    long counter = Daemon.raiseFenceCounters();
    Leadership leadership = client.campaign(election, as("pod-a"));
    BigInteger term = leadership.term().toBigInteger();
    assertTrue(term.compareTo(BigInteger.ONE.shiftLeft(53)) > 0, term.toString());
    assertEquals(BigInteger.valueOf(counter + 1), term.shiftRight(4), term.toString());
    assertEquals(leadership.term(), client.leader(election).term());
    FencingToken next = FencingToken.of(term.add(BigInteger.ONE));
    assertThrows(FailedPreconditionException.class, () -> client.proclaim(election, next, new byte[0]));
    client.proclaim(election, leadership.term(), "exact".getBytes(StandardCharsets.UTF_8));
    client.resign(election, leadership.term());
    assertFalse(client.leader(election).elected());
    assertFalse(leadership.resign());
  }

  @Test
  void aLeaderOrHolderThatVanishesKeepsItsLockForTheLockDelayAResignationOrReleaseFreesItAtOnce() throws Exception {
    String resource = Daemon.resource();
    Duration delay = Duration.ofMillis(1500);
    RedlockdClient gone = Daemon.client();
    gone.campaign(election, as("pod-gone").lockDelay(delay));
    gone.hold(resource, HoldOptions.defaults().lockDelay(delay));
    gone.close(); // its connection goes: no resignation, no release
    long started = System.nanoTime();
    try (Leadership next = client.campaign(election, as("pod-next").wait(Duration.ofSeconds(10)))) {
      long tookMillis = (System.nanoTime() - started) / 1_000_000;
      assertTrue(tookMillis >= 1300, "elected " + tookMillis + " ms after the leader vanished");
      Lease lease = client.tryAcquire(resource, AcquireOptions.defaults().wait(Duration.ofSeconds(5))).orElseThrow();
      assertTrue(System.nanoTime() - started >= 1_300_000_000L);
      assertTrue(lease.release());
    }
    Leadership delayed = client.campaign(election, as("pod-c").lockDelay(Duration.ofSeconds(3)));
    assertTrue(delayed.resign());
    assertTrue(client.hold(resource, HoldOptions.defaults().lockDelay(Duration.ofSeconds(3))).release());
    started = System.nanoTime();
    try (Leadership last = client.campaign(election, as("pod-d").wait(Duration.ofSeconds(1)))) {
      assertTrue(last.term().isAfter(delayed.term()));
      assertTrue(client.tryAcquire(resource, AcquireOptions.defaults().wait(Duration.ofSeconds(1))).orElseThrow().release());
    }
    long tookMillis = (System.nanoTime() - started) / 1_000_000;
    assertTrue(tookMillis < 1000, "a resigned election was free only after " + tookMillis + " ms");
  }

  @Test
  void aCampaignWhoseWaitRunsOutIsWithdrawn() throws Exception {
    try (Leadership first = client.campaign(election, as("pod-a"))) {
      long started = System.nanoTime();
      NotElectedException notElected = assertThrows(NotElectedException.class,
          () -> client.campaign(election, as("pod-b").wait(Duration.ofMillis(500))));
      assertTrue(System.nanoTime() - started >= 490_000_000L);
      assertTrue(notElected.getMessage().contains(election), notElected.getMessage());
      assertEquals(List.of(), participantsUntil(List::isEmpty), "the withdrawn candidate is still queued");
      assertFalse(first.isLost());
    }
  }

  @Test
  void badInputFailsBeforeAnythingIsSentNamingTheFieldRangesOnlyTheDaemonKnowsComeBackFromIt() {
    Object[][] cases = {
      {(Executable) () -> client.campaign("", as("a")), "invalid election: is 0 bytes long; it must be 1 to 256 bytes"},
      {(Executable) () -> client.campaign(election, as("")), "invalid candidate: is 0 bytes long"},
      {(Executable) () -> client.campaign(election, as("x".repeat(257))), "invalid candidate: is 257 bytes long"},
      {(Executable) () -> client.campaign(election, as("a").value(new byte[4097])),
          "invalid value: is 4097 bytes long; at most 4096 are allowed"},
      {(Executable) () -> client.campaign(election, as("a").lockDelay(Duration.ofMillis(-1))),
          "invalid lock_delay: 0s -1000000ns is not a valid non-negative duration"},
      {(Executable) () -> client.hold(Daemon.resource(), HoldOptions.defaults().lockDelay(Duration.ofMillis(-1))),
          "invalid lock_delay: 0s -1000000ns is not a valid non-negative duration"},
      {(Executable) () -> client.campaign(election, as("a").wait(Duration.ofMillis(-1))),
          "invalid wait: 0s -1000000ns"},
      {(Executable) () -> client.leader("a\nb"), "invalid election: contains the control character '\\n'"},
      {(Executable) () -> client.proclaim(election, FencingToken.fromWire(0), new byte[0]),
          "invalid term: must be set: the term ELECTED or Leader gave"},
      {(Executable) () -> client.resign(election, null), "invalid term: must be a FencingToken, not null"},
      {(Executable) () -> client.observe(""), "invalid election: is 0 bytes long"},
      {(Executable) () -> client.watch("x".repeat(257)), "invalid resource: is 257 bytes long"},
      // From the daemon:
      {(Executable) () -> client.campaign(election, as("a").lockDelay(Duration.ofSeconds(61))),
          "invalid lock_delay: 1m 1s is outside the allowed range [0s, 1m]"},
      {(Executable) () -> client.hold(Daemon.resource(), HoldOptions.defaults().lockDelay(Duration.ofSeconds(61))),
          "invalid lock_delay: 1m 1s is outside the allowed range"},
      {(Executable) () -> client.campaign(election, as("a").ttl(Duration.ofMillis(300))),
          "invalid ttl: a campaign needs a TTL of at least"},
    };
    for (Object[] c : cases) {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, (Executable) c[0], (String) c[1]);
      assertTrue(e.getMessage().startsWith((String) c[1]), e.getMessage());
    }
    try (Leadership leadership = client.campaign(election, as("a"))) {
      assertThrows(InvalidArgumentException.class, () -> leadership.proclaim(new byte[4097]));
      assertFalse(leadership.isLost(), "a proclaim refused before sending ended the leadership");
    }
  }
}
