package io.redlockd.client;

import com.google.protobuf.ByteString;
import java.time.Instant;
import java.util.Optional;
import redlockd.v1.ElectionOuterClass.LeaderResponse;

/**
 * Who leads an election, as a majority of the masters agree ({@link RedlockdClient#leader}, {@link
 * RedlockdClient#observe}). A view, not a lock: by the time it is read the leadership may have
 * changed; only the term, checked by the resource, makes a write safe.
 */
public final class LeaderState {
  private final boolean elected;
  private final String candidate;
  private final ByteString value;
  private final FencingToken term;
  private final Instant since;

  private LeaderState(LeaderResponse reply) {
    this.elected = reply.getElected();
    this.candidate = reply.getCandidate();
    this.value = reply.getValue();
    this.term = FencingToken.fromWire(reply.getTerm());
    this.since = reply.hasSince()
        ? Instant.ofEpochSecond(reply.getSince().getSeconds(), reply.getSince().getNanos())
        : null;
  }

  static LeaderState of(LeaderResponse reply) {
    return new LeaderState(reply);
  }

  /** False when no candidate leads (then the other fields are empty). */
  public boolean elected() {
    return elected;
  }

  /** The leader's candidate name. */
  public String candidate() {
    return candidate;
  }

  /** The value the leader published. */
  public byte[] value() {
    return value.toByteArray();
  }

  /** {@link #value()} as UTF-8. */
  public String valueUtf8() {
    return value.toStringUtf8();
  }

  /** The leader's term, exactly as ELECTED gave it (0 when none leads). */
  public FencingToken term() {
    return term;
  }

  /** When the term began, on the masters' clocks. */
  public Optional<Instant> since() {
    return Optional.ofNullable(since);
  }

  @Override
  public String toString() {
    return elected
        ? "LeaderState(candidate=" + candidate + ", term=" + term + ", value=" + value.size() + " bytes, since=" + since + ")"
        : "LeaderState(no leader)";
  }
}
