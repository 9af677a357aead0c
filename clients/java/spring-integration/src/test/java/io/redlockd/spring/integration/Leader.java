package io.redlockd.spring.integration;

import io.redlockd.client.FencingToken;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;

/**
 * A candidate for LockRegistryLeaderInitiator that notes its term on each grant: the fencing token
 * of the leadership's lock, read on the initiator's thread, which holds it.
 */
final class Leader extends AbstractCandidate {
  private final RedlockdLockRegistry registry;
  private final Consumer<FencingToken> onGranted;
  volatile CountDownLatch granted = new CountDownLatch(1);
  volatile CountDownLatch revoked = new CountDownLatch(1);
  volatile FencingToken term;

  Leader(String id, String role, RedlockdLockRegistry registry, Consumer<FencingToken> onGranted) {
    super(id, role);
    this.registry = registry;
    this.onGranted = onGranted;
  }

  @Override
  public void onGranted(Context context) {
    term = registry.obtain(getRole()).fencingToken();
    onGranted.accept(term);
    granted.countDown();
  }

  @Override
  public void onRevoked(Context context) {
    revoked.countDown();
  }
}
