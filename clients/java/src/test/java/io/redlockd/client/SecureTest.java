package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.grpc.Status;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Mutual TLS and a bearer token, read from the environment, against the --secure daemon (its
 * tenant may lock only "examples/...").
 */
@Tag("secure")
class SecureTest {
  @BeforeEach
  void secureDaemon() {
    String ca = System.getenv("REDLOCKD_CA");
    String token = System.getenv("REDLOCKD_TOKEN");
    if (ca == null || ca.isEmpty() || token == null || token.isEmpty()) {
      fail("needs the --secure daemon (scripts/with-dev-daemon --secure)");
    }
  }

  @Test
  void tlsAndABearerTokenFromTheEnvironment() {
    String resource = Daemon.resource();
    try (RedlockdClient client = Daemon.client()) {
      Lease lease = client.tryAcquire(resource).orElseThrow();
      assertTrue(lease.release());
      try (HeldLock held = client.hold(resource)) {
        assertTrue(held.fencingToken().isAfter(lease.fencingToken()));
      }
      PermissionDeniedException denied = assertThrows(PermissionDeniedException.class,
          () -> client.tryAcquire("outside/" + resource));
      assertTrue(denied.getMessage().contains("examples/"), denied.getMessage());
      assertEquals(Status.Code.PERMISSION_DENIED, denied.code());
      // Elections: the tenant's prefixes apply to election names.
      try (Leadership leadership = client.campaign(resource, CampaignOptions.defaults().candidate("secure"));
          Follower<LeaderState> states = client.observe(resource)) {
        assertEquals(leadership.term(), client.leader(resource).term());
        assertEquals(leadership.term(), states.next().term());
      }
      assertThrows(PermissionDeniedException.class, () -> client.campaign("outside/" + resource, CampaignOptions.defaults()));
      try (Follower<LeaderState> states = client.observe("outside/" + resource)) {
        assertThrows(PermissionDeniedException.class, states::hasNext);
      }
    }
    try (RedlockdClient https = RedlockdClient.builder().address("https://" + Daemon.addr()).build()) {
      assertTrue(https.tryAcquire(resource).orElseThrow().release());
    }
    try (RedlockdClient stranger = RedlockdClient.builder().token("not-the-token-0123456789abcdefgh").build()) {
      assertThrows(UnauthenticatedException.class, () -> stranger.tryAcquire(resource));
      assertThrows(UnauthenticatedException.class, () -> stranger.hold(resource));
    }
    // Without the client certificate the TLS handshake fails: no daemon to speak to.
    try (RedlockdClient noCert = RedlockdClient.builder()
        .tls(Tls.fromFiles(java.nio.file.Path.of(System.getenv("REDLOCKD_CA")), null, null)).build()) {
      assertThrows(UnavailableException.class, () -> noCert.tryAcquire(resource));
    }
    // TLS from the environment and an http:// address contradict each other.
    InvalidArgumentException contradiction = assertThrows(InvalidArgumentException.class,
        () -> RedlockdClient.builder().address("http://" + Daemon.addr()).build());
    assertTrue(contradiction.getMessage().contains("need an https:// address"), contradiction.getMessage());
  }
}
