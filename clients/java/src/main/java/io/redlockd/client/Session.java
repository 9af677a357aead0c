package io.redlockd.client;

import io.grpc.stub.ClientCallStreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What a Hold session's lock ({@link HeldLock}) and a campaign's leadership ({@link Leadership})
 * share: a stream the daemon keeps alive, and a {@link #lost()} future completed the moment what it
 * holds is lost: when the daemon says so, when the stream breaks, and, should the daemon fall
 * silent, {@link #LOST_MARGIN} before the last validity runs out with no extension (the client's
 * own deadline, counted from when each message arrived on {@link System#nanoTime()}'s monotonic
 * clock: docs/design.md#sessions, docs/design.md#elections). The client's own timer fires it,
 * whether or not any message ever comes again. Ending is shared too: the holder asks (a Release, a
 * Resign) and waits up to {@link #END_TIMEOUT} for the daemon's confirmation (RELEASED, RESIGNED);
 * the daemon's own end, unasked, is a loss; and ending throws, never silent, when it was lost or not
 * confirmed.
 *
 * @param <Q> the stream's requests
 * @param <R> the stream's replies
 */
abstract class Session<Q, R> {
  /** How long ending a session waits for the daemon to confirm it. */
  static final Duration END_TIMEOUT = Duration.ofSeconds(10);

  /**
   * How long before {@link #validUntilNanos()} a silent daemon's session is said lost: 100 ms, or a
   * quarter of the validity when that is less. It covers a message's way from the daemon and a
   * late timer on a busy host, so the holder is told before the validity ends; it is below the
   * daemon's own lead (LOST at 3 x node_timeout, 150 ms by default, before the end:
   * docs/design.md#sessions), so the daemon's LOST, which says why, normally comes first.
   */
  static final Duration LOST_MARGIN = Duration.ofMillis(100);

  /** Watches every session's validity, should the daemon fall silent. */
  private static final ScheduledExecutorService WATCH =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "redlockd-session-watch");
            t.setDaemon(true);
            return t;
          });

  private final ClientCallStreamObserver<Q> requests;
  private final CompletableFuture<String> lost = new CompletableFuture<>();
  /** Counted down when the session is over: its last message, or the stream's end. */
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile long validUntilNanos;
  /** When the watch says it is lost, should no extension come: {@link #LOST_MARGIN} before. */
  private volatile long lostAtNanos;
  /** Guards {@link #watch}; never held while waiting (the watch thread serves every session). */
  private final Object watchLock = new Object();
  private ScheduledFuture<?> watch;
  /** What it holds ("the lock"), and what ending it is called ("release"), for messages. */
  private final String holds;
  private final String endNoun;
  /** Whether ending was asked for: the daemon's end is then no loss. */
  private volatile boolean ending;
  /** Whether the daemon's end (RELEASED, RESIGNED) came. */
  private volatile boolean confirmed;
  /** Why it came short of the end it confirmed (RELEASED with held_to_end false), if it did. */
  private volatile String shortOfEnd;
  /** Why the stream ended without the daemon's end, if it did. */
  private volatile String endedBecause = "";
  /** Guarded by this: whether ending ran, whether end() asked for it, and what it found. */
  private boolean finished;
  private boolean endCalled;
  private RedlockdException failure;

  /**
   * A session valid for {@code validity} from {@code fromNanos} (when its first message came).
   * {@code holds} names what it holds ("the lock"), {@code endNoun} its ending ("release").
   */
  Session(ClientCallStreamObserver<Q> requests, long fromNanos, com.google.protobuf.Duration validity,
      String holds, String endNoun) {
    this.requests = requests;
    this.holds = holds;
    this.endNoun = endNoun;
    extendTo(fromNanos, validity);
  }

  /**
   * Until when it is guaranteed, on {@link System#nanoTime()}'s clock: counted from each message's
   * arrival, as the proto says; it moves on with every extension.
   */
  public long validUntilNanos() {
    return validUntilNanos;
  }

  /** What is left of the validity (zero once it has passed, or it was lost). */
  public Duration remaining() {
    return isLost() ? Duration.ZERO : Granted.remaining(validUntilNanos);
  }

  /**
   * Completes with the reason the moment it is lost; never completes while it is held. Its
   * dependent actions run on a client thread: hand long work to an executor of your own.
   */
  public CompletableFuture<String> lost() {
    return lost.copy();
  }

  /** Whether it was lost (see {@link #lost()}). */
  public boolean isLost() {
    return lost.isDone();
  }

  /** A message after the first (called on gRPC's thread, one at a time). */
  abstract void on(R message);

  /** The request that ends it when asked (a Release, a Resign). */
  abstract Q endRequest();

  /** What ending throws once it was lost, saying {@code reason}. */
  abstract RedlockdException lostError(String reason);

  /** Valid for {@code validity} from {@code fromNanos} (when the message saying so came). */
  final void extendTo(long fromNanos, com.google.protobuf.Duration validity) {
    long validFor = Wire.duration(validity).toNanos();
    long until = fromNanos + validFor;
    // The alarm first: a watch that reads the new deadline also reads its alarm.
    this.lostAtNanos = until - margin(validFor);
    this.validUntilNanos = until;
  }

  /** {@link #LOST_MARGIN}, or a quarter of {@code validForNanos} when that is less. */
  static long margin(long validForNanos) {
    return Math.min(LOST_MARGIN.toNanos(), Math.max(0, validForNanos) / 4);
  }

  /** Completes {@link #lost()} with {@code reason}, unless it is complete already. */
  final void lose(String reason) {
    lost.complete(reason);
  }

  /** The reason it was lost, or null. */
  final String lostBecause() {
    return lost.getNow(null);
  }

  /** Runs {@code action} with the reason once it is lost (on the thread that loses it). */
  final void whenLost(Consumer<String> action) {
    lost.thenAccept(action);
  }

  /** The session is over: no more watching. */
  void over() {
    done.countDown();
    stopWatch();
  }

  final boolean isOver() {
    return done.getCount() == 0;
  }

  /** Whether ending was asked for (it may not be over yet). */
  final boolean isEnding() {
    return ending;
  }

  final void send(Q message) {
    synchronized (requests) {
      requests.onNext(message);
    }
  }

  final void cancel(String why) {
    synchronized (requests) {
      requests.cancel(why, null);
    }
  }

  /**
   * Sends {@code last}, half-closes, and waits up to {@link #END_TIMEOUT} for the session to be
   * over; cancels it (the daemon lets go at once) and returns false when it is not.
   */
  final boolean endWith(Q last) {
    try {
      synchronized (requests) {
        requests.onNext(last);
        requests.onCompleted();
      }
    } catch (RuntimeException e) {
      // The call is over already: done says how it ended.
    }
    boolean answered;
    try {
      answered = done.await(END_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      answered = false;
    }
    if (!answered) {
      cancel("no answer");
    }
    stopWatch();
    return answered;
  }

  // Ending: asked by the holder, or by the daemon (called on gRPC's thread), or the stream's end.

  /** The daemon said LOST, saying {@code reason}: nothing follows. */
  final void lostByDaemon(String reason) {
    lose("lost: " + reason);
    over();
  }

  /**
   * The daemon's end came (RELEASED, RESIGNED): a loss, saying {@code unasked}, unless ending was
   * asked for; {@code shortOf} says why it did not hold to the end (null when it did).
   */
  final void endedByDaemon(String shortOf, String unasked) {
    shortOfEnd = shortOf;
    confirmed = true;
    if (!ending) {
      lose(unasked);
    }
    over();
  }

  /** The stream ended (or broke), saying {@code why}: a loss, unless ending was asked for. */
  final void ended(String why) {
    if (!confirmed) {
      endedBecause = why;
      if (!ending) {
        lose(why);
      }
    }
    over();
  }

  /**
   * Ends it (HeldLock.release, Leadership.resign): true when it was held to the end and the daemon
   * confirmed it. {@link #endOrThrow()} afterwards does nothing.
   */
  final boolean end() {
    synchronized (this) {
      endCalled = true;
    }
    return finish() == null;
  }

  /** Ends it (close), unless {@link #end()} did, and throws what {@link #end()} says false for. */
  final void endOrThrow() {
    synchronized (this) {
      if (endCalled) {
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
    ending = true;
    boolean answered;
    if (isLost()) {
      // Nothing to confirm: the daemon lets go of a cancelled session at once (and one that said
      // LOST has let go already).
      cancel(holds + " was lost");
      over();
      answered = true;
    } else {
      answered = endWith(endRequest());
    }
    failure = endError(answered);
    return failure;
  }

  /** What ending throws: never silent about a failed release or resignation. */
  private RedlockdException endError(boolean answered) {
    if (isLost()) {
      return lostError(lostBecause());
    }
    if (!confirmed) {
      String why = answered ? endedBecause : "no answer within " + END_TIMEOUT.toSeconds() + " s";
      return new RedlockdException("the daemon did not confirm the " + endNoun + " (" + why + ")");
    }
    return shortOfEnd == null ? null : lostError(shortOfEnd);
  }

  // The watch: should the daemon fall silent, it is lost LOST_MARGIN before valid_until.

  final void startWatch() {
    scheduleCheck(Math.max(0, lostAtNanos - System.nanoTime()));
  }

  private void scheduleCheck(long delayNanos) {
    synchronized (watchLock) {
      if (isOver() || lost.isDone()) {
        return;
      }
      watch = WATCH.schedule(this::check, delayNanos, TimeUnit.NANOSECONDS);
    }
  }

  private void check() {
    long left = lostAtNanos - System.nanoTime();
    if (left <= 0) {
      lose("no extension came from the daemon before valid_until (the client's own deadline)");
    } else {
      scheduleCheck(left);
    }
  }

  private void stopWatch() {
    synchronized (watchLock) {
      if (watch != null) {
        watch.cancel(false);
      }
    }
  }
}
