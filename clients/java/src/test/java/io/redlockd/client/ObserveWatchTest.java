package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** observe() and watch(): the state first, then each change, as a blocking iterator. */
class ObserveWatchTest {
  static final Duration SOON = Duration.ofSeconds(5);
  RedlockdClient client;

  @BeforeEach
  void connect() {
    client = Daemon.client();
  }

  @AfterEach
  void close() {
    client.close();
  }

  /** The next message within 5 s. */
  static <T> T next(Follower<T> follower, String what) {
    return follower.poll(SOON).orElseThrow(() -> new AssertionError(what + ": nothing within " + SOON));
  }

  static CampaignOptions as(String candidate) {
    return CampaignOptions.defaults().candidate(candidate);
  }

  @Test
  void observeSaysNoLeaderThenEachLeaderAndValueThenNoLeaderAndTermsNeverGoBack() throws Exception {
    String election = Daemon.election();
    try (Follower<LeaderState> states = client.observe(election)) {
      assertFalse(next(states, "the state now").elected());
      Leadership a = client.campaign(election, as("pod-a").value("one"));
      LeaderState first = next(states, "the first leader");
      assertEquals(List.of("pod-a", a.term(), "one"), List.of(first.candidate(), first.term(), first.valueUtf8()));
      a.proclaim("two");
      LeaderState proclaimed = next(states, "the proclaimed value");
      assertEquals(List.of("pod-a", a.term(), "two"),
          List.of(proclaimed.candidate(), proclaimed.term(), proclaimed.valueUtf8()));
      CompletableFuture<Leadership> waiting =
          CompletableFuture.supplyAsync(() -> client.campaign(election, as("pod-b").value("three")));
      assertTrue(a.resign());
      Leadership b = waiting.get(5, TimeUnit.SECONDS);
      // Between the two leaders the observer may or may not have seen no leader.
      LeaderState state = next(states, "the change after the resignation");
      if (!state.elected()) {
        state = next(states, "the second leader");
      }
      assertEquals(List.of("pod-b", b.term(), "three"), List.of(state.candidate(), state.term(), state.valueUtf8()));
      assertTrue(state.term().isAfter(a.term()));
      assertTrue(b.resign());
      assertFalse(next(states, "no leader").elected());
    }
  }

  @Test
  void observeAsAStreamAndACloseFromAnotherThreadEndsABlockedRead() throws Exception {
    String election = Daemon.election();
    Follower<LeaderState> states = client.observe(election);
    List<FencingToken> seen = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<Long> counted = CompletableFuture.supplyAsync(() -> {
      try (Stream<LeaderState> stream = states.stream()) { // closing the stream closes the follower
        return stream.filter(LeaderState::elected).peek(state -> seen.add(state.term())).limit(2).count();
      }
    });
    for (int i = 0; i < 2; i++) {
      try (Leadership leadership = client.campaign(election, as("pod-" + i))) {
        // Leads until the observer saw its term: only then the next leader.
        long deadline = System.nanoTime() + SOON.toNanos();
        while (!seen.contains(leadership.term()) && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
      }
    }
    assertEquals(2, counted.get(5, TimeUnit.SECONDS));
    assertTrue(seen.get(0).isBefore(seen.get(1)), seen.toString());
    assertFalse(states.hasNext(), "the stream's close did not close the follower");

    Follower<LeaderState> blocked = client.observe(election);
    assertFalse(next(blocked, "no leader").elected());
    CompletableFuture<Boolean> reading = CompletableFuture.supplyAsync(blocked::hasNext);
    Thread.sleep(200);
    assertFalse(reading.isDone(), "hasNext did not wait for a change");
    blocked.close();
    assertFalse(reading.get(5, TimeUnit.SECONDS), "a closed follower still has a next");
  }

  @Test
  void watchSaysCurrentThenAcquiredWithTheHolderReleasedExpiredAndChangedForReaders() throws Exception {
    String resource = Daemon.resource();
    try (Follower<WatchChange> changes = client.watch(resource)) {
      WatchChange current = next(changes, "the current state");
      assertEquals(WatchChange.Event.CURRENT, current.event());
      assertFalse(current.held());
      assertTrue(current.holder().isEmpty());

      Lease lease = client.tryAcquire(resource, AcquireOptions.defaults().owner("watched-owner")).orElseThrow();
      WatchChange acquired = next(changes, "acquired");
      assertEquals(WatchChange.Event.ACQUIRED, acquired.event());
      assertTrue(acquired.held());
      assertEquals("watched-owner", acquired.holder().orElseThrow().getOwner());
      // The holder's token as Inspect rebuilds it from the masters' counters: the lease's or above.
      FencingToken holderToken = acquired.holderToken().orElseThrow();
      assertFalse(holderToken.isBefore(lease.fencingToken()), holderToken + " below " + lease.fencingToken());
      assertTrue(lease.release());
      WatchChange released = next(changes, "released");
      assertEquals(WatchChange.Event.RELEASED, released.event());
      assertFalse(released.held());
      assertEquals(holderToken, released.holderToken().orElseThrow());

      Lease expiring = client.tryAcquire(resource, AcquireOptions.defaults().ttl(Duration.ofMillis(500))).orElseThrow();
      assertEquals(WatchChange.Event.ACQUIRED, next(changes, "acquired again").event());
      // Never released: its TTL runs out, seen by the daemon's next read.
      WatchChange expired = next(changes, "expired");
      assertEquals(WatchChange.Event.EXPIRED, expired.event());
      assertFalse(expired.holderToken().orElseThrow().isBefore(expiring.fencingToken()));

      Lease reader = client.tryAcquire(resource, AcquireOptions.defaults().shared()).orElseThrow();
      WatchChange oneReader = next(changes, "a reader");
      assertEquals(1, oneReader.readers(), oneReader.toString());
      Lease second = client.tryAcquire(resource, AcquireOptions.defaults().shared()).orElseThrow();
      WatchChange twoReaders = next(changes, "a second reader");
      assertEquals(WatchChange.Event.CHANGED, twoReaders.event());
      assertEquals(2, twoReaders.readers());
      assertTrue(reader.release());
      assertTrue(second.release());
    }
  }
}
