package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * lockDelay on tryAcquire (docs/design.md#lock-delay), against a real daemon: a lease never
 * released stays on the masters that long past its validity; a release frees it at once; beyond
 * lock.max_lock_delay is refused naming the field.
 */
class AcquireLockDelayTest {
  static final Duration TTL = Duration.ofSeconds(1);
  static final Duration DELAY = Duration.ofSeconds(2);
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

  @Test
  void anUnreleasedLeaseWithALockDelayKeepsOthersOutPastItsTtl() {
    long taken = System.nanoTime();
    client.tryAcquire(resource, AcquireOptions.defaults().ttl(TTL).lockDelay(DELAY)).orElseThrow();
    assertTrue(
        client.tryAcquire(resource, AcquireOptions.defaults().wait(TTL.plusMillis(500))).isEmpty(),
        "taken before its ttl and lock delay ran out");
    Lease other = client.tryAcquire(resource, AcquireOptions.defaults().wait(Duration.ofSeconds(5))).orElseThrow();
    long waited = (System.nanoTime() - taken) / 1_000_000;
    assertTrue(other.release());
    long expected = TTL.plus(DELAY).toMillis();
    assertTrue(waited >= expected - 300 && waited < expected + 1_500, "taken " + waited + " ms after the first acquire");
  }

  @Test
  void aReleaseFreesALeaseWithALockDelayAtOnce() {
    Lease lease = client.tryAcquire(resource, AcquireOptions.defaults().ttl(TTL).lockDelay(Duration.ofSeconds(30))).orElseThrow();
    assertTrue(lease.release());
    Lease other = client.tryAcquire(resource).orElseThrow(() -> new AssertionError("a release waited for the lock delay"));
    assertTrue(other.release());
  }

  @Test
  void aLockDelayOutOfRangeIsRefusedNamingIt() {
    InvalidArgumentException beyond = assertThrows(InvalidArgumentException.class,
        () -> client.tryAcquire(resource, AcquireOptions.defaults().lockDelay(Duration.ofSeconds(61))));
    assertTrue(beyond.getMessage().startsWith("invalid lock_delay: 1m 1s is outside the allowed range [0s, 1m]"), beyond.getMessage());
    InvalidArgumentException negative = assertThrows(InvalidArgumentException.class,
        () -> client.tryAcquire(resource, AcquireOptions.defaults().lockDelay(Duration.ofMillis(-1))));
    assertTrue(negative.getMessage().startsWith("invalid lock_delay: 0s -1000000ns is not a valid non-negative duration"),
        negative.getMessage());
    InvalidArgumentException set = assertThrows(InvalidArgumentException.class,
        () -> client.tryAcquireMany(java.util.List.of(resource), AcquireOptions.defaults().lockDelay(Duration.ofSeconds(1))));
    assertTrue(set.getMessage().startsWith("invalid lock_delay: a set takes no lock delay"), set.getMessage());
  }
}
