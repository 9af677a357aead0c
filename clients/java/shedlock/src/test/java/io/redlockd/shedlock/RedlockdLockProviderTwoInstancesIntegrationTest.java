package io.redlockd.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlockd.client.RedlockdClient;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.test.support.AbstractLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * ShedLock's own test kit for a provider, unchanged, with two "instances": each getLockProvider()
 * hands out the other of two providers, each on a connection of its own. So "a second lock is
 * refused", "locked at least for" and "free again after lockAtMostFor" are checked between
 * instances as well as within one.
 */
class RedlockdLockProviderTwoInstancesIntegrationTest extends AbstractLockProviderIntegrationTest {
  private static final AtomicInteger CALLS = new AtomicInteger();
  private static RedlockdClient[] clients;
  private static RedlockdLockProvider[] providers;
  private static String prefix;

  @BeforeAll
  static void connect() {
    prefix = Daemon.prefix("two-instances");
    clients = new RedlockdClient[] {Daemon.client(), Daemon.client()};
    providers = new RedlockdLockProvider[] {
      RedlockdLockProvider.builder(clients[0]).prefix(prefix).owner("instance-0").build(),
      RedlockdLockProvider.builder(clients[1]).prefix(prefix).owner("instance-1").build(),
    };
  }

  @AfterAll
  static void disconnect() {
    for (int i = 0; i < 2; i++) {
      providers[i].close();
      clients[i].close();
    }
  }

  @Override
  protected LockProvider getLockProvider() {
    return providers[CALLS.getAndIncrement() % 2];
  }

  @Override
  protected void assertUnlocked(String lockName) {
    assertThat(Daemon.held(clients[0], prefix + lockName)).as("the masters hold " + lockName).isFalse();
  }

  @Override
  protected void assertLocked(String lockName) {
    assertThat(Daemon.held(clients[1], prefix + lockName)).as("the masters hold " + lockName).isTrue();
  }
}
