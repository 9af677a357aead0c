package io.redlockd.client;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import redlockd.v1.ElectionOuterClass.CampaignEvent;
import redlockd.v1.ElectionOuterClass.CampaignProclaim;
import redlockd.v1.ElectionOuterClass.CampaignRequest;
import redlockd.v1.ElectionOuterClass.CampaignResign;
import redlockd.v1.ElectionOuterClass.CampaignResponse;
import redlockd.v1.ElectionOuterClass.CampaignStart;

/**
 * A campaign's leadership ({@link RedlockdClient#campaign}, docs/design.md#elections): a Hold
 * session with a value. The daemon extends the term for as long as the stream lives; closing
 * (try-with-resources) resigns, and the next candidate leads at once.
 *
 * <p>The leader's rule: send {@link #term()} with every write, to a resource that refuses terms
 * lower than one it has seen, and stop leading when {@link #lost()} completes: when the daemon says
 * LOST, when the leadership is resigned from elsewhere or max_hold is used up, when the stream
 * breaks, and, even with no word from the daemon, on the client's own timer 100 ms (at most a
 * quarter of the validity) before {@link #validUntilNanos()} (the last valid_for, counted from when
 * its message arrived). Closing after a loss throws {@link
 * LeadershipLostException}. Thread-safe.
 */
public final class Leadership extends Session<CampaignRequest, CampaignResponse> implements AutoCloseable {
  private final String election;
  private final String candidate;
  private final FencingToken term;
  private volatile ByteString value;
  /** Proclaims sent and not yet confirmed, in order; guarded by itself, with the sending. */
  private final ArrayDeque<CompletableFuture<Void>> proclaims = new ArrayDeque<>();

  private Leadership(
      ClientCallStreamObserver<CampaignRequest> requests, CampaignStart start, CampaignResponse elected, long received) {
    super(requests, received, elected.getValidFor(), "the leadership", "resignation");
    this.election = start.getElection();
    this.candidate = start.getCandidate();
    this.term = FencingToken.fromWire(elected.getTerm());
    this.value = elected.getValue();
    whenLost(reason -> failProclaims(new LeadershipLostException(reason)));
  }

  /**
   * Campaigns with {@code start}: returns once elected; waits at most {@code wait} (null: for as
   * long as it takes).
   *
   * @throws NotElectedException when the wait ran out, or the daemon ended the candidacy first
   */
  static Leadership open(
      Function<StreamObserver<CampaignResponse>, StreamObserver<CampaignRequest>> call,
      CampaignStart start,
      Duration wait) {
    return SessionStream.open(
        call,
        CampaignRequest.newBuilder().setStart(start).build(),
        "campaign",
        (message, received, requests) -> {
          if (message.getEvent() == CampaignEvent.CAMPAIGN_EVENT_ELECTED) {
            return new Leadership(requests, start, message, received);
          }
          throw new NotElectedException(
              "the campaign for " + start.getElection() + " ended before it was elected: " + message.getReason());
        },
        wait,
        () -> new NotElectedException("not elected in " + start.getElection() + " within " + wait));
  }

  /** The election, as named. */
  public String election() {
    return election;
  }

  /** This candidate's name. */
  public String candidate() {
    return candidate;
  }

  /**
   * The term: the election lock's fencing token, strictly increasing per election (unsigned, exact
   * at any size). Send it with every write.
   */
  public FencingToken term() {
    return term;
  }

  /** The value published now: ELECTED's, then each confirmed {@link #proclaim}'s. */
  public byte[] value() {
    return value.toByteArray();
  }

  /** {@link #value()} as UTF-8. */
  public String valueUtf8() {
    return value.toStringUtf8();
  }

  /** {@link #proclaim(byte[])} of {@code value} as UTF-8. */
  public void proclaim(String value) {
    proclaim(value.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Publishes {@code value} (at most 4096 bytes) for {@code leader} and {@code observe} to show;
   * returns once the daemon confirms it (PROCLAIMED).
   *
   * @throws LeadershipLostException when the leadership was lost first
   * @throws RedlockdException when it has been resigned, or the daemon did not confirm within 10 s
   */
  public void proclaim(byte[] value) {
    ByteString bytes = ByteString.copyFrom(Validate.electionValue(value));
    CompletableFuture<Void> confirmed = new CompletableFuture<>();
    synchronized (proclaims) {
      if (isLost()) {
        throw new LeadershipLostException(lostBecause());
      }
      if (isOver() || isEnding()) {
        throw new RedlockdException("the leadership of " + election + " has ended");
      }
      try {
        send(CampaignRequest.newBuilder().setProclaim(CampaignProclaim.newBuilder().setValue(bytes)).build());
      } catch (RuntimeException e) {
        // Cancelled meanwhile (a resignation, the watch): the stream is over.
        throw new RedlockdException("the leadership of " + election + " has ended");
      }
      proclaims.add(confirmed);
    }
    try {
      confirmed.get(END_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw (RedlockdException) e.getCause();
    } catch (TimeoutException e) {
      throw new RedlockdException("the daemon did not confirm the proclaim within " + END_TIMEOUT.toSeconds() + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RedlockdException("interrupted while proclaiming", Status.Code.CANCELLED, e);
    }
  }

  private void failProclaims(RedlockdException why) {
    synchronized (proclaims) {
      for (CompletableFuture<Void> pending; (pending = proclaims.poll()) != null; ) {
        pending.completeExceptionally(why);
      }
    }
  }

  /**
   * Resigns: the next candidate may lead at once. True when this candidate led until then; false
   * when the leadership was lost first, or the daemon did not confirm within 10 s. {@link #close()}
   * afterwards does nothing.
   */
  public boolean resign() {
    return end();
  }

  /**
   * Resigns, as {@link #resign()}, unless that was called already.
   *
   * @throws LeadershipLostException when the leadership was lost, or did not last until then
   * @throws RedlockdException when the daemon did not confirm the resignation
   */
  @Override
  public void close() {
    endOrThrow();
  }

  @Override
  CampaignRequest endRequest() {
    return CampaignRequest.newBuilder().setResign(CampaignResign.getDefaultInstance()).build();
  }

  @Override
  RedlockdException lostError(String reason) {
    return new LeadershipLostException(reason);
  }

  // What the campaign's messages mean (called on gRPC's thread, one at a time).

  @Override
  void on(CampaignResponse message) {
    switch (message.getEvent()) {
      case CAMPAIGN_EVENT_EXTENDED:
        extendTo(System.nanoTime(), message.getValidFor());
        break;
      case CAMPAIGN_EVENT_PROCLAIMED:
        value = message.getValue();
        synchronized (proclaims) {
          CompletableFuture<Void> first = proclaims.poll();
          if (first != null) {
            first.complete(null);
          }
        }
        break;
      case CAMPAIGN_EVENT_LOST:
        lostByDaemon(message.getReason());
        break;
      case CAMPAIGN_EVENT_RESIGNED:
        endedByDaemon(null, "resigned by the daemon: " + message.getReason());
        break;
      default:
        break;
    }
  }

  @Override
  void over() {
    super.over();
    failProclaims(isLost() ? lostError(lostBecause())
        : new RedlockdException("the leadership of " + election + " ended before the value was published"));
  }

  /** The election, the candidate, the term, the time left and whether it is lost. */
  @Override
  public String toString() {
    double left = remaining().toNanos() / 1e9;
    return String.format(Locale.ROOT, "Leadership(election=%s, candidate=%s, term=%s, remaining=%.3fs%s)",
        election, candidate, term, left, isLost() ? ", lost" : "");
  }
}
