package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The daemon frozen with SIGSTOP: it sends nothing, not even LOST, so a leader (and a holder) must
 * stop on its own deadline, the last valid_for counted from when its message arrived. test.sh runs
 * this on a daemon of its own (the frozen-daemon tag).
 */
@Tag("frozen-daemon")
class FrozenDaemonTest {
  @Test
  void aLeaderAndAHolderWhoseDaemonIsFrozenStopOnTheirOwnDeadline() throws Exception {
    String pid = Long.toString(Daemon.daemonPid());
    try (RedlockdClient client = Daemon.client()) {
      Leadership leadership = client.campaign(Daemon.election(),
          CampaignOptions.defaults().candidate("pod-a").ttl(Duration.ofMillis(1500)));
      HeldLock lock = client.hold(Daemon.resource(), HoldOptions.defaults().ttl(Duration.ofMillis(1500)));
      long frozenAt;
      Daemon.run("kill", "-STOP", pid);
      try {
        frozenAt = System.nanoTime();
        for (Session<?, ?> session : List.<Session<?, ?>>of(leadership, lock)) {
          String reason = session.lost().get(5, TimeUnit.SECONDS);
          long at = System.nanoTime();
          // validUntilNanos is the last deadline the daemon gave (an extension on its way at the
          // freeze may have moved it on).
          long until = session.validUntilNanos();
          assertTrue(until > frozenAt, session + ": valid until " + (until - frozenAt) / 1e6 + " ms after the freeze");
          assertTrue(at >= until, session + ": stopped " + (until - at) / 1e6 + " ms before its deadline");
          assertTrue(at - until < 250_000_000L, session + ": stopped " + (at - until) / 1e6 + " ms after its deadline");
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
