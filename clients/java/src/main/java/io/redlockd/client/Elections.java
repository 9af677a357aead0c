package io.redlockd.client;

import com.google.protobuf.ByteString;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import redlockd.v1.ElectionGrpc;
import redlockd.v1.ElectionOuterClass.LeaderRequest;
import redlockd.v1.ElectionOuterClass.ObserveRequest;
import redlockd.v1.ElectionOuterClass.ParticipantsRequest;
import redlockd.v1.ElectionOuterClass.ProclaimRequest;
import redlockd.v1.ElectionOuterClass.ResignRequest;

/**
 * The calls to the Election service behind {@link RedlockdClient}'s campaign, leader, observe,
 * proclaim, resign and participants (docs/design.md#elections): checked, sent, answers typed.
 */
final class Elections {
  private final ElectionGrpc.ElectionBlockingStub blocking;
  private final ElectionGrpc.ElectionStub async;

  /** The stubs on {@code channel}, with {@code bearer} when there is a token (else null). */
  Elections(ManagedChannel channel, ClientInterceptor bearer) {
    ElectionGrpc.ElectionBlockingStub blocking = ElectionGrpc.newBlockingStub(channel);
    ElectionGrpc.ElectionStub async = ElectionGrpc.newStub(channel);
    this.blocking = bearer == null ? blocking : blocking.withInterceptors(bearer);
    this.async = bearer == null ? async : async.withInterceptors(bearer);
  }

  Leadership campaign(String election, CampaignOptions options) {
    var start = options.start(election);
    Duration wait = options.wait == null ? null : Validate.duration(options.wait, "wait");
    return Leadership.open(async::campaign, start, wait);
  }

  LeaderState leader(String election) {
    Validate.election(election);
    return LeaderState.of(call(s -> s.leader(LeaderRequest.newBuilder().setElection(election).build())));
  }

  Follower<LeaderState> observe(String election) {
    Validate.election(election);
    return Follower.open(async::observe, ObserveRequest.newBuilder().setElection(election).build(), LeaderState::of);
  }

  void proclaim(String election, FencingToken term, byte[] value) {
    Validate.election(election);
    ProclaimRequest request = ProclaimRequest.newBuilder()
        .setElection(election)
        .setTerm(Validate.term(term))
        .setValue(ByteString.copyFrom(Validate.electionValue(value)))
        .build();
    call(s -> s.proclaim(request));
  }

  void resign(String election, FencingToken term) {
    Validate.election(election);
    ResignRequest request = ResignRequest.newBuilder().setElection(election).setTerm(Validate.term(term)).build();
    call(s -> s.resign(request));
  }

  List<String> participants(String election) {
    Validate.election(election);
    ParticipantsRequest request = ParticipantsRequest.newBuilder().setElection(election).build();
    return List.copyOf(call(s -> s.participants(request)).getCandidatesList());
  }

  /** One unary call, with a deadline of the call slack; its failure typed. */
  private <T> T call(Function<ElectionGrpc.ElectionBlockingStub, T> method) {
    try {
      return method.apply(blocking.withDeadlineAfter(Backoff.callSlack.toNanos(), TimeUnit.NANOSECONDS));
    } catch (StatusRuntimeException e) {
      throw Errors.from(e);
    }
  }
}
