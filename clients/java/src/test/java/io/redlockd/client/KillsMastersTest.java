package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Three of the five masters killed under an open session. Killed masters stay dead for the rest
 * of that daemon's life, so test.sh runs this on a daemon of its own (the kills-masters tag).
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
  void theLostFutureCompletesBeforeValidUntilThenUnavailableSaysWhatEachMasterSaid() throws Exception {
    String resource = Daemon.resource();
    Duration wait = Duration.ofSeconds(1);
    try (RedlockdClient client = Daemon.client()) {
      LockLostException lost = assertThrows(LockLostException.class, () -> {
        try (HeldLock lock = client.hold(resource, HoldOptions.defaults().ttl(Duration.ofSeconds(2)))) {
          long[] pids = Daemon.masterPids();
          for (int i = 0; i < 3; i++) {
            Daemon.run("kill", "-9", Long.toString(pids[i]));
          }
          String reason = lock.lost().get(10, TimeUnit.SECONDS);
          long told = System.nanoTime();
          assertTrue(told < lock.validUntilNanos(),
              "told " + (told - lock.validUntilNanos()) / 1e6 + " ms after the validity ran out");
          assertTrue(reason.startsWith("lost: "), reason);
          // The body ends normally; closing still throws.
        }
      });
      assertTrue(lost.getMessage().startsWith("lost: "), lost.getMessage());

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
