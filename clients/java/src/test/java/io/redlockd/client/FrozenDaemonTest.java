package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The daemon frozen with SIGSTOP: it sends nothing, not even LOST, so a leader (and a holder) must
 * stop on its own deadline, the last valid_for counted from when its message arrived, and be told
 * before that deadline (within {@link Session#LOST_MARGIN} of it). test.sh runs this on a daemon of
 * its own (the frozen-daemon tag).
 */
@Tag("frozen-daemon")
class FrozenDaemonTest {
  @Test
  void aLeaderAndAHolderWhoseDaemonIsFrozenAreToldBeforeTheirOwnDeadline() throws Exception {
    String pid = Long.toString(Daemon.daemonPid());
    try (RedlockdClient client = Daemon.client()) {
      Leadership leadership = client.campaign(Daemon.election(),
          CampaignOptions.defaults().candidate("pod-a").ttl(Duration.ofMillis(1500)));
      HeldLock lock = client.hold(Daemon.resource(), HoldOptions.defaults().ttl(Duration.ofMillis(1500)));
      // When each holder is told: a dependent action runs on the thread that completes lost().
      List<CompletableFuture<Long>> told = List.of(
          leadership.lost().thenApply(reason -> System.nanoTime()), lock.lost().thenApply(reason -> System.nanoTime()));
      long frozenAt;
      Daemon.run("kill", "-STOP", pid);
      try {
        frozenAt = System.nanoTime();
        List<Session<?, ?>> sessions = List.of(leadership, lock);
        for (int i = 0; i < 2; i++) {
          Session<?, ?> session = sessions.get(i);
          String reason = session.lost().get(5, TimeUnit.SECONDS);
          long at = told.get(i).get();
          // validUntilNanos is the last deadline the daemon gave (an extension on its way at the
          // freeze may have moved it on).
          long until = session.validUntilNanos();
          assertTrue(until > frozenAt, session + ": valid until " + (until - frozenAt) / 1e6 + " ms after the freeze");
          System.out.printf("FrozenDaemonTest: %s told %.1f ms before valid_until%n", session, (until - at) / 1e6);
          assertTrue(at < until, session + ": told " + (at - until) / 1e6 + " ms after its deadline");
          assertTrue(until - at <= Session.LOST_MARGIN.toNanos(),
              session + ": told " + (until - at) / 1e6 + " ms before its deadline, more than the margin");
          assertTrue(reason.contains("no extension came from the daemon"), reason);
        }
        assertEquals(Duration.ZERO, leadership.remaining());
      } finally {
        Daemon.run("kill", "-CONT", pid);
      }
      assertThrows(LeadershipLostException.class, leadership::close);
      assertFalse(leadership.resign());
      assertThrows(LockLostException.class, lock::close);
    }
  }
}
