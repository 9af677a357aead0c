package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A slow and a silent network, made by a TCP proxy in front of the real daemon. The client rule:
 * a lease's validity counts from the moment the request was SENT; the proxy holds every reply
 * back for a second, so a client that counted from the reply would promise the lock for a second
 * longer than the masters keep it. And a session whose daemon falls silent is lost when its
 * validity passes.
 */
class SlowNetworkTest {
  static final Duration DELAY = Duration.ofSeconds(1);
  static final long SECOND = 1_000_000_000L;
  String resource;

  @BeforeEach
  void name() {
    resource = Daemon.resource();
  }

  @AfterEach
  void restoreTheSlack() {
    Backoff.callSlack = Duration.ofSeconds(30);
  }

  @Test
  void validityCountsFromTheSendNotFromTheReply() throws Exception {
    try (DelayingProxy proxy = new DelayingProxy(Daemon.addr(), DELAY);
        RedlockdClient slow = RedlockdClient.builder().address(proxy.addr).build()) {
      assertTrue(slow.tryAcquire(resource + "-warm-up").isPresent()); // connects
      AcquireOptions five = AcquireOptions.defaults().ttl(Duration.ofSeconds(5));
      long sent = System.nanoTime();
      Lease lease = slow.tryAcquire(resource, five).orElseThrow();
      long received = System.nanoTime();
      assertTrue(received - sent >= DELAY.toNanos(), "the proxy did not delay the reply");
      long validity = lease.validUntilNanos() - sent;
      assertTrue(validity > 4 * SECOND && validity <= 5 * SECOND, validity + " ns");
      // Counted from the reply, it would have promised past the TTL:
      assertTrue(received + validity > sent + 5 * SECOND);
      sent = System.nanoTime();
      assertTrue(lease.extend(Duration.ofSeconds(5)));
      assertTrue(System.nanoTime() - sent >= DELAY.toNanos());
      assertTrue(lease.validUntilNanos() <= sent + 5 * SECOND, "the extension counted from the reply");
      assertTrue(lease.release());
    }
  }

  @Test
  void aSessionWhoseDaemonFallsSilentIsLostJustBeforeItsValidityPasses() throws Exception {
    try (RedlockdClient client = Daemon.client();
        DelayingProxy proxy = new DelayingProxy(Daemon.addr(), Duration.ZERO);
        RedlockdClient cutOff = RedlockdClient.builder().address(proxy.addr).build()) {
      LockLostException lost = assertThrows(LockLostException.class, () -> {
        try (HeldLock lock = cutOff.hold(resource, HoldOptions.defaults().ttl(Duration.ofSeconds(1)))) {
          CompletableFuture<Long> told = lock.lost().thenApply(why -> System.nanoTime());
          proxy.freeze(); // the daemon goes on extending; nobody hears it
          String reason = lock.lost().get(5, TimeUnit.SECONDS);
          // Told by the client's own timer, ahead of its validity by at most the margin.
          long early = lock.validUntilNanos() - told.get();
          assertTrue(early > 0, "told " + -early / 1e6 + " ms after its validity passed");
          assertTrue(early <= Session.LOST_MARGIN.toNanos(), "told " + early / 1e6 + " ms before its validity passed");
          assertTrue(reason.contains("no extension"), reason);
        }
      });
      assertTrue(lost.getMessage().contains("no extension"), lost.getMessage());
      // Closing cancelled the session: the daemon released at once.
      assertTrue(client.tryAcquire(resource, AcquireOptions.defaults().wait(Duration.ofMillis(500))).isPresent(),
          "the silent session's lock was not released");
    }
  }

  @Test
  void aDaemonThatNeverAnswersDoesNotHangTheCaller() throws Exception {
    Backoff.callSlack = Duration.ofMillis(500); // 30 s in real life
    try (DelayingProxy proxy = new DelayingProxy(Daemon.addr(), Duration.ZERO)) {
      proxy.freeze(); // not a byte from the daemon, not even its handshake
      try (RedlockdClient unheard = RedlockdClient.builder().address(proxy.addr).build()) {
        long started = System.nanoTime();
        assertThrows(DeadlineExceededException.class,
            () -> unheard.tryAcquire(resource, AcquireOptions.defaults().wait(Duration.ofMillis(500))));
        assertThrows(DeadlineExceededException.class, () -> {
          try (HeldLock lock = unheard.hold(resource, HoldOptions.defaults().wait(Duration.ofMillis(500)))) {
            fail("held without an answer");
          }
        });
        assertTrue(System.nanoTime() - started < 5 * SECOND);
      }
    }
  }
}
