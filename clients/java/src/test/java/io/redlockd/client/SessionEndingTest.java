package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import redlockd.v1.ElectionOuterClass.CampaignEvent;
import redlockd.v1.ElectionOuterClass.CampaignRequest;
import redlockd.v1.ElectionOuterClass.CampaignResponse;
import redlockd.v1.ElectionOuterClass.CampaignStart;
import redlockd.v1.LockOuterClass.HoldEvent;
import redlockd.v1.LockOuterClass.HoldRequest;
import redlockd.v1.LockOuterClass.HoldResponse;
import redlockd.v1.LockOuterClass.HoldStart;
import redlockd.v1.LockOuterClass.Lease;

/**
 * The ending both sessions share ({@link Session}): a {@link HeldLock} and a {@link Leadership},
 * each on a stream played by hand (no daemon), end the same way: asked and confirmed, ended by the
 * daemon unasked (a loss), told LOST, the stream ending without a confirmation, the stream breaking.
 */
class SessionEndingTest {
  private static final com.google.protobuf.Duration MINUTE =
      com.google.protobuf.Duration.newBuilder().setSeconds(60).build();

  /** The client's side of a stream: records what was sent, and plays the daemon's answers. */
  static final class Played<Q, R> extends ClientCallStreamObserver<Q> {
    final List<Object> sent = new ArrayList<>();
    final R first;
    final R confirmation;
    /** Whether the daemon confirms the end when the client half-closes (else it just ends). */
    boolean confirms = true;
    StreamObserver<R> daemon;

    Played(R first, R confirmation) {
      this.first = first;
      this.confirmation = confirmation;
    }

    StreamObserver<Q> call(StreamObserver<R> observer) {
      daemon = observer;
      ((ClientResponseObserver<Q, R>) observer).beforeStart(this);
      return this;
    }

    @Override
    public void onNext(Q message) {
      sent.add(message);
      if (sent.size() == 1) {
        daemon.onNext(first);
      }
    }

    @Override
    public void onCompleted() {
      sent.add("half-closed");
      if (confirms) {
        daemon.onNext(confirmation);
      }
      daemon.onCompleted();
    }

    @Override
    public void cancel(String message, Throwable cause) {
      sent.add("cancelled: " + message);
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setOnReadyHandler(Runnable onReadyHandler) {}

    @Override
    public void request(int count) {}

    @Override
    public void setMessageCompression(boolean enable) {}

    @Override
    public void disableAutoInboundFlowControl() {}
  }

  /** One twin, opened on a stream played by hand; its words, to check both say them alike. */
  record Twin(
      String name,
      Session<?, ?> session,
      Played<?, ?> stream,
      Runnable daemonEnds,
      Runnable daemonSaysLost,
      Class<? extends RedlockdException> lostType,
      String unasked,
      String confirmNotice) {
    boolean end() {
      return session instanceof HeldLock h ? h.release() : ((Leadership) session).resign();
    }

    void close() {
      if (session instanceof HeldLock h) {
        h.close();
      } else {
        ((Leadership) session).close();
      }
    }

    @Override
    public String toString() {
      return name;
    }
  }

  static Twin hold() {
    return hold(true);
  }

  /** A HeldLock whose release the daemon confirms with held_to_end {@code heldToEnd}. */
  static Twin hold(boolean heldToEnd) {
    Played<HoldRequest, HoldResponse> stream = new Played<>(
        HoldResponse.newBuilder().setEvent(HoldEvent.HOLD_EVENT_ACQUIRED)
            .setLease(Lease.newBuilder().setResource("r").setValue("v").setValidity(MINUTE)).build(),
        HoldResponse.newBuilder().setEvent(HoldEvent.HOLD_EVENT_RELEASED).setHeldToEnd(heldToEnd).build());
    HeldLock lock = HeldLock.open(stream::call, HoldStart.newBuilder().setResource("r").build(), Duration.ZERO);
    return new Twin("HeldLock", lock, stream,
        () -> stream.daemon.onNext(HoldResponse.newBuilder().setEvent(HoldEvent.HOLD_EVENT_RELEASED)
            .setHeldToEnd(true).setReason("max_hold").build()),
        () -> stream.daemon.onNext(HoldResponse.newBuilder().setEvent(HoldEvent.HOLD_EVENT_LOST)
            .setReason("gone").build()),
        LockLostException.class,
        "the daemon released the lock while it was in use: max_hold",
        "the daemon did not confirm the release (the daemon ended the session)");
  }

  static Twin campaign() {
    Played<CampaignRequest, CampaignResponse> stream = new Played<>(
        CampaignResponse.newBuilder().setEvent(CampaignEvent.CAMPAIGN_EVENT_ELECTED).setTerm(7)
            .setValidFor(MINUTE).build(),
        CampaignResponse.newBuilder().setEvent(CampaignEvent.CAMPAIGN_EVENT_RESIGNED).build());
    Leadership leadership = Leadership.open(stream::call,
        CampaignStart.newBuilder().setElection("e").setCandidate("c").build(), Duration.ofSeconds(5));
    return new Twin("Leadership", leadership, stream,
        () -> stream.daemon.onNext(CampaignResponse.newBuilder().setEvent(CampaignEvent.CAMPAIGN_EVENT_RESIGNED)
            .setReason("max_hold").build()),
        () -> stream.daemon.onNext(CampaignResponse.newBuilder().setEvent(CampaignEvent.CAMPAIGN_EVENT_LOST)
            .setReason("gone").build()),
        LeadershipLostException.class,
        "resigned by the daemon: max_hold",
        "the daemon did not confirm the resignation (the daemon ended the campaign)");
  }

  static Stream<Twin> twins() {
    return Stream.of(hold(), campaign());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("twins")
  void endingAskedAndConfirmedIsClean(Twin twin) {
    assertTrue(twin.end());
    assertFalse(twin.session().isLost());
    assertEquals(3, twin.stream().sent.size(), "start, the end request, half-closed: " + twin.stream().sent);
    assertEquals("half-closed", twin.stream().sent.get(2));
    assertDoesNotThrow(twin::close); // ended already: nothing more
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("twins")
  void theDaemonsEndUnaskedIsALoss(Twin twin) {
    twin.daemonEnds().run();
    assertEquals(twin.unasked(), twin.session().lost().getNow(null));
    RedlockdException e = assertThrows(twin.lostType(), twin::close);
    assertEquals(twin.unasked(), e.getMessage());
    assertTrue(twin.stream().sent.get(1).toString().startsWith("cancelled: the "), twin.stream().sent.toString());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("twins")
  void lostSaysWhyAndEndingSaysFalse(Twin twin) {
    twin.daemonSaysLost().run();
    assertEquals("lost: gone", twin.session().lost().getNow(null));
    assertFalse(twin.end());
    assertDoesNotThrow(twin::close);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("twins")
  void aStreamEndingUnconfirmedIsNoLossButThrows(Twin twin) {
    twin.stream().confirms = false;
    RedlockdException e = assertThrows(RedlockdException.class, twin::close);
    assertFalse(twin.lostType().isInstance(e), e.toString());
    assertEquals(twin.confirmNotice(), e.getMessage());
    assertFalse(twin.session().isLost());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("twins")
  void aBrokenStreamIsALoss(Twin twin) {
    twin.stream().daemon.onError(Status.UNAVAILABLE.withDescription("down").asRuntimeException());
    String why = twin.session().lost().getNow(null);
    assertTrue(why != null && why.contains(" broke: "), String.valueOf(why));
    assertInstanceOf(twin.lostType(), assertThrows(RedlockdException.class, twin::close));
  }

  @Test
  void aReleaseNotHeldToTheEndIsALoss() {
    HeldLock lock = (HeldLock) hold(false).session();
    LockLostException e = assertThrows(LockLostException.class, lock::close);
    assertEquals("released, but a majority of the masters no longer held the lock", e.getMessage());
    assertFalse(lock.isLost());
    assertFalse(((HeldLock) hold(false).session()).release());
  }
}
