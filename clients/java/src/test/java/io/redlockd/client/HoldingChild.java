package io.redlockd.client;

import java.time.Duration;

/**
 * A process that holds a lock in a Hold session (TTL 30 s), says "held <token>" and sleeps: the
 * JVM that SessionsTest kills with kill -9.
 *
 * <p>java -cp ... io.redlockd.client.HoldingChild RESOURCE
 */
public final class HoldingChild {
  private HoldingChild() {}

  public static void main(String[] args) throws Exception {
    RedlockdClient client = RedlockdClient.fromEnv();
    HeldLock lock = client.hold(args[0], HoldOptions.defaults().ttl(Duration.ofSeconds(30)));
    System.out.println("held " + lock.fencingToken());
    System.out.flush();
    Thread.sleep(60_000);
  }
}
