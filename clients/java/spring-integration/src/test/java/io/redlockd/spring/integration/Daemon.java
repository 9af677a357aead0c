package io.redlockd.spring.integration;

import static org.junit.jupiter.api.Assertions.fail;

import io.redlockd.client.RedlockdClient;
import java.util.UUID;

/**
 * The real daemon and five real masters the tests run against, started by
 * scripts/with-dev-daemon (../test.sh does it): REDLOCKD_ADDR names the daemon.
 */
final class Daemon {
  private Daemon() {}

  static RedlockdClient client() {
    String addr = System.getenv("REDLOCKD_ADDR");
    if (addr == null || addr.isEmpty()) {
      fail("REDLOCKD_ADDR is not set: run the tests through clients/java/test.sh");
    }
    return RedlockdClient.fromEnv();
  }

  /** A fresh registry key, so that tests never meet on a resource. */
  static String registryKey(String what) {
    return "si-test/" + what + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Whether a majority of the masters hold a lock on {@code resource}. */
  static boolean held(RedlockdClient client, String resource) {
    return client.inspect(resource).getHeld();
  }
}
