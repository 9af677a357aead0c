package io.redlockd.spring.integration;

import io.redlockd.client.RedlockdClient;
import java.time.Duration;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * A process that campaigns through LockRegistryLeaderInitiator on a RedlockdLockRegistry (TTL 1 s)
 * and prints "granted TOKEN" when it leads: the leader LeaderInitiatorTest kills with kill -9.
 *
 * <p>java -cp ... io.redlockd.spring.integration.LeaderChild REGISTRY_KEY ROLE
 */
public final class LeaderChild {
  private LeaderChild() {}

  public static void main(String[] args) throws Exception {
    RedlockdClient client = RedlockdClient.fromEnv();
    RedlockdLockRegistry registry = new RedlockdLockRegistry(client, args[0], Duration.ofSeconds(1));
    Leader leader = new Leader("child", args[1], registry, term -> {
      System.out.println("granted " + term);
      System.out.flush();
    });
    new LockRegistryLeaderInitiator(registry, leader).start();
    Thread.sleep(120_000);
  }
}
