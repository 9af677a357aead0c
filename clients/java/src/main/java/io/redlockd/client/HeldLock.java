package io.redlockd.client;

import io.grpc.stub.ClientCallStreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import redlockd.v1.LockOuterClass.HoldRelease;
import redlockd.v1.LockOuterClass.HoldRequest;
import redlockd.v1.LockOuterClass.HoldResponse;

/**
 * The lock of a Hold session ({@link RedlockdClient#hold}): the daemon extends it at about a third
 * of the TTL for as long as the session lives, and releases it when the session ends: {@link
 * #close()} (try-with-resources), or the process dying (the stream breaks, even on kill -9).
 *
 * <p>{@link #lost()} completes, with the reason, the moment the lock can no longer be guaranteed:
 * when the daemon says LOST, when it releases the lock on its own while it is in use (max_hold used
 * up, shutdown), when the stream breaks, and, should the daemon fall silent, when {@link
 * #validUntilNanos()} passes without an extension. Stop working under the lock then. Closing after
 * a loss, or a release that finds the lock gone, throws {@link LockLostException}. Thread-safe.
 */
public final class HeldLock implements AutoCloseable {
  /** How long closing waits for the daemon to confirm the release. */
  static final Duration RELEASE_TIMEOUT = Duration.ofSeconds(10);

  /** Watches every session's validity, should the daemon fall silent. */
  private static final ScheduledExecutorService WATCH =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "redlockd-hold-watch");
            t.setDaemon(true);
            return t;
          });

  private final ClientCallStreamObserver<HoldRequest> requests;
  private final Granted granted;
  private final CompletableFuture<String> lost = new CompletableFuture<>();
  /** Counted down when the session is over: RELEASED, LOST, or the stream's end. */
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile long validUntilNanos;
  private volatile boolean releasing;
  /** RELEASED's held_to_end, once it came. */
  private volatile Boolean heldToEnd;
  /** Why the stream ended without RELEASED, if it did. */
  private volatile String endedBecause = "";
  private ScheduledFuture<?> watch;
  private boolean finished;
  private boolean releaseCalled;
  private RedlockdException failure;

  HeldLock(ClientCallStreamObserver<HoldRequest> requests, Granted granted, long validUntilNanos) {
    this.requests = requests;
    this.granted = granted;
    this.validUntilNanos = validUntilNanos;
  }

  /** The locked resource, as requested. */
  public String resource() {
    return granted.resource;
  }

  /** The session's fencing token (it never changes within a session): send it with every write. */
  public FencingToken fencingToken() {
    return granted.fencingToken;
  }

  /** Whether this is a shared lock (a reader). */
  public boolean shared() {
    return granted.shared;
  }

  /** The semaphore's number of permits (0 for a lock). */
  public int permits() {
    return granted.permits;
  }

  /** The permit's slot, 0 to permits - 1 (0 for a lock). */
  public int slot() {
    return granted.slot;
  }

  /**
   * Until when the lock is guaranteed, on {@link System#nanoTime()}'s clock: counted from each
   * ACQUIRED / EXTENDED message's arrival, as the proto says; it moves on with every extension.
   */
  public long validUntilNanos() {
    return validUntilNanos;
  }

  /** What is left of the validity (zero once it has passed). */
  public Duration remaining() {
    return Granted.remaining(validUntilNanos);
  }

  /**
   * Completes with the reason the moment the lock is lost; never completes while it is held. Its
   * dependent actions run on a client thread: hand long work to an executor of your own.
   */
  public CompletableFuture<String> lost() {
    return lost.copy();
  }

  /** Whether the lock was lost (see {@link #lost()}). */
  public boolean isLost() {
    return lost.isDone();
  }

  /**
   * Ends the session: the daemon releases the lock at once. True when the lock was held to the end;
   * false when it was lost, was no longer held by a majority when released, or the daemon did not
   * confirm the release within 10 s. {@link #close()} afterwards does nothing.
   */
  public boolean release() {
    synchronized (this) {
      releaseCalled = true;
    }
    return finish() == null;
  }

  /**
   * Ends the session, as {@link #release()}, unless that was called already.
   *
   * @throws LockLostException when the lock was lost, or was not held to the end
   * @throws RedlockdException when the daemon did not confirm the release
   */
  @Override
  public void close() {
    synchronized (this) {
      if (releaseCalled) {
        return;
      }
    }
    RedlockdException failed = finish();
    if (failed != null) {
      throw failed;
    }
  }

  private synchronized RedlockdException finish() {
    if (finished) {
      return failure;
    }
    finished = true;
    releasing = true;
    boolean answered;
    if (lost.isDone()) {
      // Nothing to confirm: the daemon releases a cancelled session at once (and one that said
      // LOST has released already).
      cancel("the lock was lost");
      answered = true;
    } else {
      try {
        synchronized (requests) {
          requests.onNext(HoldRequest.newBuilder().setRelease(HoldRelease.getDefaultInstance()).build());
          requests.onCompleted();
        }
      } catch (RuntimeException e) {
        // The call is over already: done says how it ended.
      }
      try {
        answered = done.await(RELEASE_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        answered = false;
      }
      if (!answered) {
        cancel("no answer to the release");
      }
    }
    stopWatch();
    failure = exitError(answered);
    return failure;
  }

  /** What closing throws: never silent about a failed release. */
  private RedlockdException exitError(boolean answered) {
    if (lost.isDone()) {
      return new LockLostException(lost.getNow(""));
    }
    if (Boolean.FALSE.equals(heldToEnd)) {
      return new LockLostException("released, but a majority of the masters no longer held the lock");
    }
    if (heldToEnd == null) {
      String why = answered ? endedBecause : "no answer within " + RELEASE_TIMEOUT.toSeconds() + " s";
      return new RedlockdException("the daemon did not confirm the release (" + why + ")");
    }
    return null;
  }

  // What the session's messages mean (called on gRPC's thread, one at a time).

  void on(HoldResponse message) {
    switch (message.getEvent()) {
      case HOLD_EVENT_EXTENDED:
        validUntilNanos = Granted.deadline(System.nanoTime(), message.getLease().getValidity());
        break;
      case HOLD_EVENT_LOST:
        lose("lost: " + message.getReason());
        over();
        break;
      case HOLD_EVENT_RELEASED:
        heldToEnd = message.getHeldToEnd();
        if (!releasing) {
          lose("the daemon released the lock while it was in use: " + message.getReason());
        }
        over();
        break;
      default:
        break;
    }
  }

  /** The stream ended (or broke). */
  void ended(String why) {
    if (heldToEnd == null) {
      endedBecause = why;
      if (!releasing) {
        lose(why);
      }
    }
    over();
  }

  private void over() {
    done.countDown();
    stopWatch();
  }

  private void lose(String reason) {
    lost.complete(reason);
  }

  private void cancel(String why) {
    synchronized (requests) {
      requests.cancel(why, null);
    }
  }

  // The watch: should the daemon fall silent, the lock is lost when valid_until passes.

  synchronized void startWatch() {
    scheduleCheck(Math.max(0, validUntilNanos - System.nanoTime()));
  }

  private synchronized void scheduleCheck(long delayNanos) {
    if (done.getCount() == 0 || lost.isDone()) {
      return;
    }
    watch = WATCH.schedule(this::check, delayNanos, TimeUnit.NANOSECONDS);
  }

  private void check() {
    long left = validUntilNanos - System.nanoTime();
    if (left <= 0) {
      lose("no extension came from the daemon before valid_until");
    } else {
      scheduleCheck(left);
    }
  }

  private synchronized void stopWatch() {
    if (watch != null) {
      watch.cancel(false);
    }
  }

  String value() {
    return granted.value;
  }

  /** The resource, the token, the kind, the time left and whether it is lost; never the value. */
  @Override
  public String toString() {
    return granted.describe("HeldLock", validUntilNanos, isLost() ? ", lost" : "");
  }
}
