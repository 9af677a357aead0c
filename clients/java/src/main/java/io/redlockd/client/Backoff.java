package io.redlockd.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The pauses between tries of one wait that the daemon cuts short with UNAVAILABLE (no quorum of
 * masters, or no daemon): jittered, 50 ms doubling to 1 s, until the caller's wait runs out; then
 * the last {@link UnavailableException} is thrown.
 */
final class Backoff {
  static final long FIRST_PAUSE_NANOS = 50_000_000L;
  static final long MAX_PAUSE_NANOS = 1_000_000_000L;
  /**
   * Extra time a call may take beyond its wait before its gRPC deadline (a daemon that stopped
   * answering must not hang the caller). 30 s; the tests shorten it to see it work.
   */
  static volatile Duration callSlack = Duration.ofSeconds(30);

  private final long deadline;
  private final Duration first;
  private boolean tried;
  private long pause = FIRST_PAUSE_NANOS;

  Backoff(Duration wait) {
    this.first = wait;
    this.deadline = System.nanoTime() + wait.toNanos();
  }

  /**
   * What is left of the wait, to send as the next try's wait: the caller's own on the first try
   * (so the daemon's message about it shows what the caller gave).
   */
  Duration left() {
    return tried ? Duration.ofNanos(Math.max(0, deadline - System.nanoTime())) : first;
  }

  /**
   * Sleeps before the next try and returns true; false when the wait has run out. Full jitter in
   * [pause/2, pause], so that waiters that lost the same quorum do not come back in step; the last
   * pause ends at the deadline, where one more single attempt is made.
   */
  boolean pause() {
    tried = true;
    long left = left().toNanos();
    if (left <= 0) {
      return false;
    }
    long jittered = ThreadLocalRandom.current().nextLong(pause / 2, pause + 1);
    pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
    try {
      TimeUnit.NANOSECONDS.sleep(Math.min(jittered, left));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
    return true;
  }
}
