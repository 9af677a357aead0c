package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The real daemon and five real masters the tests run against, started by
 * scripts/with-dev-daemon (test.sh does it): REDLOCKD_ADDR names the daemon,
 * REDLOCKD_DEV_MASTER_PIDS and REDLOCKD_DEV_MASTER_PORTS its masters, REDLOCKD_DEV_DAEMON_PID
 * its process.
 */
final class Daemon {
  private Daemon() {}

  static RedlockdClient client() {
    addr();
    return RedlockdClient.fromEnv();
  }

  static String addr() {
    String addr = System.getenv("REDLOCKD_ADDR");
    if (addr == null || addr.isEmpty()) {
      fail("REDLOCKD_ADDR is not set: run the tests through clients/java/test.sh");
    }
    return addr;
  }

  /** A fresh resource name, under "examples/": the prefix the secure daemon's tenant may lock. */
  static String resource() {
    return "examples/java-" + UUID.randomUUID().toString().substring(0, 12);
  }

  /** A fresh election name (a tenant's prefixes apply to election names too). */
  static String election() {
    return "examples/java-election-" + UUID.randomUUID().toString().substring(0, 12);
  }

  /** The daemon's pid (to freeze it with SIGSTOP). */
  static long daemonPid() {
    String pid = System.getenv("REDLOCKD_DEV_DAEMON_PID");
    if (pid == null || pid.isEmpty()) {
      fail("REDLOCKD_DEV_DAEMON_PID is not set: run the tests through clients/java/test.sh");
    }
    return Long.parseLong(pid.trim());
  }

  static long[] masterPids() {
    return Arrays.stream(System.getenv("REDLOCKD_DEV_MASTER_PIDS").trim().split("\\s+"))
        .mapToLong(Long::parseLong)
        .toArray();
  }

  static int[] masterPorts() {
    return Arrays.stream(System.getenv("REDLOCKD_DEV_MASTER_PORTS").trim().split("\\s+"))
        .mapToInt(Integer::parseInt)
        .toArray();
  }

  /** Runs a command; its standard output, trimmed. Fails the test when it fails. */
  static String run(String... command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "still running: " + String.join(" ", command));
      assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + out);
      return out;
    } catch (IOException e) {
      throw new AssertionError("cannot run " + command[0], e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** One command to one master, with redis-cli; its reply. */
  static String redis(int port, Object... args) {
    List<String> command = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
    for (Object a : args) {
      command.add(a.toString());
    }
    return run(command.toArray(new String[0]));
  }

  // Every key of a lock carries its bucket's hash tag (docs/design.md#keys): a lock is
  // redlockd:{<tag>}:lock:<resource>, and each bucket has a fence counter redlockd:{<tag>}:fence
  // and a marker redlockd:{<tag>}:verified on every master the daemon verified. The tests find
  // keys with KEYS in a Lua script rather than compute the tag.
  static final int BUCKETS = 16384;

  private static final String DELETE_MATCHING =
      "local n = 0\n"
          + "for _, key in ipairs(redis.call('KEYS', ARGV[1])) do n = n + redis.call('DEL', key) end\n"
          + "return n\n";

  private static final String HIGHEST_FENCE =
      "local highest = 0\n"
          + "for _, key in ipairs(redis.call('KEYS', 'redlockd:{*}:fence')) do\n"
          + "  highest = math.max(highest, tonumber(redis.call('GET', key)))\n"
          + "end\n"
          + "return highest\n";

  // Every bucket the master verified (its marker) gets its fence counter set. (A bucket's counter
  // is written by its first lock, so a fresh bucket has none: the markers name every bucket once
  // the daemon verified the master.)
  private static final String SET_EVERY_FENCE =
      "local markers = redis.call('KEYS', 'redlockd:{*}:verified')\n"
          + "for _, marker in ipairs(markers) do\n"
          + "  redis.call('SET', string.sub(marker, 1, -1 - #'verified') .. 'fence', ARGV[1])\n"
          + "end\n"
          + "return #markers\n";

  /** {@code text} as a KEYS pattern that matches only itself. */
  private static String globEscaped(String text) {
    return text.replaceAll("([*?\\[\\]\\\\])", "\\\\$1");
  }

  /** Deletes the lock's key on every master, as if it had expired. */
  static void deleteLockEverywhere(String resource) {
    String pattern = "redlockd:{*}:lock:" + globEscaped(resource);
    long deleted = 0;
    for (int port : masterPorts()) {
      deleted += Long.parseLong(redis(port, "EVAL", DELETE_MATCHING, 0, pattern));
    }
    assertTrue(deleted >= 3, "the lock of " + resource + " was on " + deleted + " masters, not a majority");
  }

  /**
   * Sets the fence counter of every bucket on every master to one value above all of them (never
   * lower: tokens must keep rising), and at least 2^50 so that tokens (16 times it) pass 2^53, and
   * returns it.
   */
  static long raiseFenceCounters() throws InterruptedException {
    long counter = 1L << 50;
    for (int port : masterPorts()) {
      counter = Math.max(counter, Long.parseLong(redis(port, "EVAL", HIGHEST_FENCE, 0)));
    }
    counter += 12_345;
    assertTrue(counter < (1L << 53), "the daemon keeps counters below 2^53");
    for (int port : masterPorts()) {
      // Right after the daemon started, it may still be verifying the master.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      long buckets;
      while ((buckets = Long.parseLong(redis(port, "EVAL", SET_EVERY_FENCE, 0, counter))) < BUCKETS) {
        assertTrue(System.nanoTime() < deadline, "the master on port " + port + " has " + buckets + " verified buckets");
        Thread.sleep(100);
      }
      assertEquals(BUCKETS, buckets, "the master on port " + port + " has " + buckets + " buckets");
    }
    return counter;
  }
}
