package io.redlockd.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One session's stream (a Hold, a Campaign: docs/design.md#sessions): opens it, waits for its
 * first message, then hands every later one to the {@link Session} that message made.
 *
 * @param <Q> the stream's requests
 * @param <R> the stream's replies
 * @param <S> the session
 */
final class SessionStream<Q, R, S extends Session<Q, R>> implements ClientResponseObserver<Q, R> {
  /** What the first message makes: the session, or the exception to throw instead. */
  interface First<Q, R, S> {
    S open(R message, long receivedNanos, ClientCallStreamObserver<Q> requests);
  }

  private final CompletableFuture<S> opened = new CompletableFuture<>();
  private final First<Q, R, S> first;
  private final String noun;
  private ClientCallStreamObserver<Q> requests;
  /** Set by the first message; touched only on gRPC's thread. */
  private S session;

  private SessionStream(First<Q, R, S> first, String noun) {
    this.first = first;
    this.noun = noun;
  }

  /**
   * Opens a stream with {@code call}, sends {@code start}, and returns the session the first
   * message makes. Waits at most {@code limit} (null: for as long as it takes), then cancels the
   * stream and throws what {@code late} gives. {@code noun} names the stream in messages.
   */
  static <Q, R, S extends Session<Q, R>> S open(
      Function<StreamObserver<R>, StreamObserver<Q>> call,
      Q start,
      String noun,
      First<Q, R, S> first,
      Duration limit,
      Supplier<RedlockdException> late) {
    SessionStream<Q, R, S> stream = new SessionStream<>(first, noun);
    call.apply(stream);
    synchronized (stream.requests) {
      stream.requests.onNext(start);
    }
    try {
      S session = limit == null
          ? stream.opened.get()
          : stream.opened.get(limit.toNanos(), TimeUnit.NANOSECONDS);
      session.startWatch();
      return session;
    } catch (TimeoutException e) {
      stream.cancel("no answer in time");
      throw late.get();
    } catch (ExecutionException e) {
      stream.cancel("not opened");
      throw Errors.from(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stream.cancel("interrupted");
      throw new RedlockdException("interrupted while waiting for the " + noun, Status.Code.CANCELLED, e);
    }
  }

  private void cancel(String why) {
    synchronized (requests) {
      requests.cancel(why, null);
    }
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<Q> requests) {
    this.requests = requests;
  }

  @Override
  public void onNext(R message) {
    if (session != null) {
      session.on(message);
      return;
    }
    if (opened.isDone()) {
      return;
    }
    // The proto: count a session's validity from receiving the message.
    long received = System.nanoTime();
    try {
      session = first.open(message, received, requests);
      opened.complete(session);
    } catch (RedlockdException e) {
      opened.completeExceptionally(e);
    }
  }

  @Override
  public void onError(Throwable t) {
    if (session != null) {
      session.ended("the " + noun + " broke: " + Errors.from(t).getMessage());
    } else {
      opened.completeExceptionally(t);
    }
  }

  @Override
  public void onCompleted() {
    if (session != null) {
      session.ended("the daemon ended the " + noun);
    } else {
      opened.completeExceptionally(new RedlockdException("the daemon ended the " + noun + " before answering"));
    }
  }
}
