package io.redlockd.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import redlockd.v1.LockGrpc;
import redlockd.v1.LockOuterClass.HoldRequest;
import redlockd.v1.LockOuterClass.HoldResponse;
import redlockd.v1.LockOuterClass.HoldStart;

/**
 * One Hold stream (docs/design.md#sessions): opens it, waits for its first message, then hands
 * every later one to the {@link HeldLock} it made.
 */
final class HoldStream implements ClientResponseObserver<HoldRequest, HoldResponse> {
  private final CompletableFuture<HeldLock> opened = new CompletableFuture<>();
  private ClientCallStreamObserver<HoldRequest> requests;
  /** Set by the first message, ACQUIRED; touched only on gRPC's thread. */
  private HeldLock lock;

  private HoldStream() {}

  /**
   * Opens a session with {@code start}, asking to wait {@code wait} for the lock.
   *
   * @throws NotAcquiredException when the wait ran out
   */
  static HeldLock open(LockGrpc.LockStub stub, HoldStart start, Duration wait) {
    HoldStream stream = new HoldStream();
    stub.hold(stream);
    HoldStart.Builder first = start.toBuilder();
    if (!wait.isZero()) {
      first.setWait(Wire.duration(wait));
    }
    synchronized (stream.requests) {
      stream.requests.onNext(HoldRequest.newBuilder().setStart(first).build());
    }
    // A daemon that never answers must not hang the caller.
    Duration limit = wait.plus(Backoff.callSlack);
    try {
      HeldLock lock = stream.opened.get(limit.toNanos(), TimeUnit.NANOSECONDS);
      lock.startWatch();
      return lock;
    } catch (TimeoutException e) {
      stream.cancel("no answer");
      throw new DeadlineExceededException("no answer from the daemon within " + limit.toSeconds() + " s");
    } catch (ExecutionException e) {
      stream.cancel("not held");
      throw Errors.from(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stream.cancel("interrupted");
      throw new RedlockdException("interrupted while waiting for the lock", Status.Code.CANCELLED, e);
    }
  }

  private void cancel(String why) {
    synchronized (requests) {
      requests.cancel(why, null);
    }
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<HoldRequest> requests) {
    this.requests = requests;
  }

  @Override
  public void onNext(HoldResponse message) {
    if (lock != null) {
      lock.on(message);
      return;
    }
    if (opened.isDone()) {
      return;
    }
    // The proto: count a session's validity from receiving the message.
    long received = System.nanoTime();
    switch (message.getEvent()) {
      case HOLD_EVENT_ACQUIRED:
        long validUntil = Granted.deadline(received, message.getLease().getValidity());
        lock = new HeldLock(requests, Granted.of(message.getLease()), validUntil);
        opened.complete(lock);
        break;
      case HOLD_EVENT_NOT_ACQUIRED:
        opened.completeExceptionally(
            new NotAcquiredException(message.getReason(), Wire.outcomes(message.getNodesValueList())));
        break;
      default:
        opened.completeExceptionally(
            new RedlockdException("the session ended before the lock was held: " + message.getReason()));
        break;
    }
  }

  @Override
  public void onError(Throwable t) {
    if (lock != null) {
      lock.ended("the session broke: " + Errors.from(t).getMessage());
    } else {
      opened.completeExceptionally(t);
    }
  }

  @Override
  public void onCompleted() {
    if (lock != null) {
      lock.ended("the daemon ended the session");
    } else {
      opened.completeExceptionally(new RedlockdException("the daemon ended the session before answering"));
    }
  }
}
