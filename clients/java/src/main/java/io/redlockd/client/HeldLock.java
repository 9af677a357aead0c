package io.redlockd.client;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.function.Function;
import redlockd.v1.LockOuterClass.HoldRelease;
import redlockd.v1.LockOuterClass.HoldRequest;
import redlockd.v1.LockOuterClass.HoldResponse;
import redlockd.v1.LockOuterClass.HoldStart;

/**
 * The lock of a Hold session ({@link RedlockdClient#hold}): the daemon extends it at about a third
 * of the TTL for as long as the session lives, and releases it when the session ends: {@link
 * #close()} (try-with-resources), or the process dying (the stream breaks, even on kill -9).
 *
 * <p>{@link #lost()} completes, with the reason, the moment the lock can no longer be guaranteed:
 * when the daemon says LOST, when it releases the lock on its own while it is in use (max_hold used
 * up, shutdown), when the stream breaks, and, should the daemon fall silent, on the client's own
 * timer 100 ms (at most a quarter of the validity) before {@link #validUntilNanos()} when no
 * extension came. Stop working under the lock then. Closing after
 * a loss, or a release that finds the lock gone, throws {@link LockLostException}. Thread-safe.
 */
public final class HeldLock extends Session<HoldRequest, HoldResponse> implements AutoCloseable {
  private final Granted granted;

  HeldLock(ClientCallStreamObserver<HoldRequest> requests, Granted granted, long received,
      com.google.protobuf.Duration validity) {
    super(requests, received, validity, "the lock", "release");
    this.granted = granted;
  }

  /**
   * Opens a session with {@code start}, asking to wait {@code wait} for the lock.
   *
   * @throws NotAcquiredException when the wait ran out
   */
  static HeldLock open(
      Function<StreamObserver<HoldResponse>, StreamObserver<HoldRequest>> call, HoldStart start, Duration wait) {
    HoldStart.Builder first = start.toBuilder();
    if (!wait.isZero()) {
      first.setWait(Wire.duration(wait));
    }
    // A daemon that never answers must not hang the caller.
    Duration limit = wait.plus(Backoff.callSlack);
    return SessionStream.open(
        call,
        HoldRequest.newBuilder().setStart(first).build(),
        "session",
        HeldLock::first,
        limit,
        () -> new DeadlineExceededException("no answer from the daemon within " + limit.toSeconds() + " s"));
  }

  private static HeldLock first(HoldResponse message, long received, ClientCallStreamObserver<HoldRequest> requests) {
    switch (message.getEvent()) {
      case HOLD_EVENT_ACQUIRED:
        return new HeldLock(requests, Granted.of(message.getLease()), received, message.getLease().getValidity());
      case HOLD_EVENT_NOT_ACQUIRED:
        throw new NotAcquiredException(message.getReason(), Wire.outcomes(message.getNodesValueList()));
      default:
        throw new RedlockdException("the session ended before the lock was held: " + message.getReason());
    }
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
   * Ends the session: the daemon releases the lock at once. True when the lock was held to the end;
   * false when it was lost, was no longer held by a majority when released, or the daemon did not
   * confirm the release within 10 s. {@link #close()} afterwards does nothing.
   */
  public boolean release() {
    return end();
  }

  /**
   * Ends the session, as {@link #release()}, unless that was called already.
   *
   * @throws LockLostException when the lock was lost, or was not held to the end
   * @throws RedlockdException when the daemon did not confirm the release
   */
  @Override
  public void close() {
    endOrThrow();
  }

  @Override
  HoldRequest endRequest() {
    return HoldRequest.newBuilder().setRelease(HoldRelease.getDefaultInstance()).build();
  }

  @Override
  RedlockdException lostError(String reason) {
    return new LockLostException(reason);
  }

  // What the session's messages mean (called on gRPC's thread, one at a time).

  @Override
  void on(HoldResponse message) {
    switch (message.getEvent()) {
      case HOLD_EVENT_EXTENDED:
        extendTo(System.nanoTime(), message.getLease().getValidity());
        break;
      case HOLD_EVENT_LOST:
        lostByDaemon(message.getReason());
        break;
      case HOLD_EVENT_RELEASED:
        endedByDaemon(
            message.getHeldToEnd() ? null : "released, but a majority of the masters no longer held the lock",
            "the daemon released the lock while it was in use: " + message.getReason());
        break;
      default:
        break;
    }
  }

  String value() {
    return granted.value;
  }

  /** The resource, the token, the kind, the time left and whether it is lost; never the value. */
  @Override
  public String toString() {
    return granted.describe("HeldLock", validUntilNanos(), isLost() ? ", lost" : "");
  }
}
