package io.redlockd.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A follower of an election ({@link RedlockdClient#observe}) or a lock ({@link
 * RedlockdClient#watch}): the state now first, then every change, as a blocking {@link Iterator}
 * (docs/design.md#observe-and-watch). Close it (try-with-resources) to end the stream. The daemon
 * sends the next message only once the last was taken. A view, not a lock.
 *
 * <pre>{@code
 * try (Follower<LeaderState> states = client.observe("jobs")) {
 *   while (states.hasNext()) {
 *     LeaderState state = states.next(); // blocks until the next change
 *   }
 * }
 * }</pre>
 *
 * <p>{@link #hasNext()} blocks until a message comes; it is false once the daemon ends the stream
 * (it shuts down) or after {@link #close()}, and throws the typed exception when the stream fails
 * (e.g. {@link UnavailableException} when no majority can say the first state). One thread reads
 * it; any thread may close it.
 *
 * @param <T> what each message is
 */
public final class Follower<T> implements Iterator<T>, AutoCloseable {
  private static final Object END = new Object();

  private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  private volatile ClientCallStreamObserver<?> call;
  private volatile boolean closed;
  /** The next item taken from the queue: a T, END, or the RedlockdException to throw. */
  private Object next;

  private Follower() {}

  /** Calls {@code method} with {@code request}, each reply through {@code map}. */
  static <Q, R, T> Follower<T> open(BiConsumer<Q, StreamObserver<R>> method, Q request, Function<R, T> map) {
    Follower<T> follower = new Follower<>();
    method.accept(request, new ClientResponseObserver<Q, R>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<Q> requests) {
        follower.call = requests;
        requests.disableAutoRequestWithInitial(1);
      }

      @Override
      public void onNext(R reply) {
        follower.queue.add(map.apply(reply));
      }

      @Override
      public void onError(Throwable t) {
        follower.queue.add(follower.closed ? END : Errors.from(t));
      }

      @Override
      public void onCompleted() {
        follower.queue.add(END);
      }
    });
    return follower;
  }

  /** Blocks until the next message, the end, or a failure (thrown). */
  @Override
  public synchronized boolean hasNext() {
    if (next == null) {
      try {
        next = closed ? END : queue.take();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        close();
        throw new RedlockdException("interrupted while following", Status.Code.CANCELLED, e);
      }
    }
    return check();
  }

  /** True when {@link #next} is a message; throws a failure once, then says the end. */
  private boolean check() {
    if (closed) {
      next = END;
    }
    if (next instanceof RedlockdException) {
      RedlockdException failure = (RedlockdException) next;
      next = END;
      throw failure;
    }
    return next != END;
  }

  /** The next message, once it comes. */
  @Override
  public synchronized T next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the stream has ended");
    }
    return take();
  }

  /**
   * The next message if one comes within {@code timeout}; empty when none did, or the stream has
   * ended ({@link #hasNext()} is then false).
   */
  public synchronized Optional<T> poll(Duration timeout) {
    if (next == null) {
      try {
        next = closed ? END : queue.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        close();
        throw new RedlockdException("interrupted while following", Status.Code.CANCELLED, e);
      }
      if (next == null) {
        return Optional.empty();
      }
    }
    return check() ? Optional.of(take()) : Optional.empty();
  }

  @SuppressWarnings("unchecked")
  private T take() {
    T message = (T) next;
    next = null;
    call.request(1);
    return message;
  }

  /** The messages as a sequential Stream; closing it closes this follower. */
  public Stream<T> stream() {
    return StreamSupport.stream(Spliterators.spliteratorUnknownSize(this, Spliterator.ORDERED | Spliterator.NONNULL), false)
        .onClose(this::close);
  }

  /** Ends the stream; a blocked {@link #hasNext()} returns false. Any thread may call it. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      call.cancel("the follower was closed", null);
      queue.add(END);
    }
  }
}
