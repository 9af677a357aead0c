package io.redlockd.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlockd.client.RedlockdClient;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * ShedLock's own test kit for an extensible provider (with every test of the plain provider kit it
 * extends), unchanged, against a real daemon: assertLocked and assertUnlocked ask the masters
 * (Inspect), not the provider.
 */
class RedlockdLockProviderIntegrationTest extends AbstractExtensibleLockProviderIntegrationTest {
  private static RedlockdClient client;
  private static RedlockdLockProvider provider;
  private static String prefix;

  @BeforeAll
  static void connect() {
    client = Daemon.client();
    prefix = Daemon.prefix("extensible");
    provider = RedlockdLockProvider.builder(client).prefix(prefix).build();
  }

  @AfterAll
  static void disconnect() {
    provider.close();
    client.close();
  }

  @Override
  protected ExtensibleLockProvider getLockProvider() {
    return provider;
  }

  @Override
  protected void assertUnlocked(String lockName) {
    assertThat(Daemon.held(client, prefix + lockName)).as("the masters hold " + lockName).isFalse();
  }

  @Override
  protected void assertLocked(String lockName) {
    assertThat(Daemon.held(client, prefix + lockName)).as("the masters hold " + lockName).isTrue();
  }
}
