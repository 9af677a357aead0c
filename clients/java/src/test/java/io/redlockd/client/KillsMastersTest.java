package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Three of the five masters killed under an open session and a leader. Killed masters stay dead
 * for the rest of that daemon's life, so test.sh runs this on a daemon of its own (the
 * kills-masters tag).
 */
@Tag("kills-masters")
class KillsMastersTest {
  static void checkNoQuorum(UnavailableException failure, long started, Duration wait) {
    double took = (System.nanoTime() - started) / 1e9;
    assertTrue(took >= wait.toMillis() / 1000.0 * 0.9, "the wait was not retried until it ran out: " + took + " s");
    assertEquals(3, failure.needed().orElse(-1), failure.getMessage());
    assertEquals(List.of(0, 1, 2, 3, 4), List.copyOf(failure.nodes().keySet()), failure.nodes().toString());
    long down = failure.nodes().values().stream()
        .filter(said -> said.equals("errored") || said.equals("timed out") || said.equals("unusable"))
        .count();
    assertTrue(down >= 3, failure.nodes().toString());
  }

  @Test
  void theLostFuturesCompleteBeforeValidUntilThenUnavailableSaysWhatEachMasterSaid() throws Exception {
    String resource = Daemon.resource();
    String election = Daemon.election();
    Duration wait = Duration.ofSeconds(1);
    try (RedlockdClient client = Daemon.client()) {
      Leadership leadership = client.campaign(election, CampaignOptions.defaults().ttl(Duration.ofSeconds(2)));
      LockLostException lost = assertThrows(LockLostException.class, () -> {
        try (HeldLock lock = client.hold(resource, HoldOptions.defaults().ttl(Duration.ofSeconds(2)))) {
          // When each holder is told: a dependent action runs on the thread that completes lost().
          List<CompletableFuture<Long>> toldAt = List.of(
              lock.lost().thenApply(why -> System.nanoTime()), leadership.lost().thenApply(why -> System.nanoTime()));
          long[] pids = Daemon.masterPids();
          for (int i = 0; i < 3; i++) {
            Daemon.run("kill", "-9", Long.toString(pids[i]));
          }
          List<Session<?, ?>> sessions = List.of(lock, leadership);
          for (int i = 0; i < 2; i++) {
            Session<?, ?> session = sessions.get(i);
            String reason = session.lost().get(10, TimeUnit.SECONDS);
            long told = toldAt.get(i).get();
            System.out.printf("KillsMastersTest: %s told %.1f ms before valid_until (%s)%n",
                session, (session.validUntilNanos() - told) / 1e6, reason);
            assertTrue(told < session.validUntilNanos(),
                session + ": told " + (told - session.validUntilNanos()) / 1e6 + " ms after the validity ran out");
            // The daemon's LOST, not the client's own deadline.
            assertTrue(reason.startsWith("lost: "), reason);
          }
          // The body ends normally; closing still throws.
        }
      });
      assertTrue(lost.getMessage().startsWith("lost: "), lost.getMessage());
      assertThrows(LeadershipLostException.class, leadership::close);
      assertThrows(UnavailableException.class, () -> client.leader(election));
      // An observer starts from a known state: without a majority, its first read is an error.
      try (Follower<LeaderState> states = client.observe(election)) {
        assertThrows(UnavailableException.class, states::hasNext);
        assertFalse(states.hasNext(), "a failed follower goes on");
      }
      // A candidate waits on without a quorum (the daemon tries again and again) until its wait runs out.
      assertThrows(NotElectedException.class,
          () -> client.campaign(election, CampaignOptions.defaults().wait(Duration.ofSeconds(1))));

      long started = System.nanoTime();
      UnavailableException acquire = assertThrows(UnavailableException.class,
          () -> client.tryAcquire(resource + "-again", AcquireOptions.defaults().ttl(Duration.ofSeconds(5)).wait(wait)));
      checkNoQuorum(acquire, started, wait);

      started = System.nanoTime();
      UnavailableException session = assertThrows(UnavailableException.class, () -> {
        try (HeldLock lock = client.hold(resource + "-session", HoldOptions.defaults().ttl(Duration.ofSeconds(5)).wait(wait))) {
          fail("held without a quorum");
        }
      });
      checkNoQuorum(session, started, wait);
    }
  }
}
