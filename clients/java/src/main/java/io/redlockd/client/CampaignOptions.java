package io.redlockd.client;

import com.google.protobuf.ByteString;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import redlockd.v1.ElectionOuterClass.CampaignStart;

/**
 * How {@link RedlockdClient#campaign} campaigns. Immutable: each method returns a copy with one
 * setting changed.
 *
 * <pre>{@code
 * CampaignOptions.defaults().candidate("pod-a").value("pod-a:8080").ttl(Duration.ofSeconds(5))
 * }</pre>
 */
public final class CampaignOptions {
  final String candidate;
  final byte[] value;
  final Duration ttl;
  final Duration wait;
  final Duration maxHold;
  final Duration lockDelay;

  private CampaignOptions(
      String candidate, byte[] value, Duration ttl, Duration wait, Duration maxHold, Duration lockDelay) {
    this.candidate = candidate;
    this.value = value;
    this.ttl = ttl;
    this.wait = wait;
    this.maxHold = maxHold;
    this.lockDelay = lockDelay;
  }

  /**
   * The host name as the candidate (HOSTNAME, a pod's name in Kubernetes), no value, a TTL of 10
   * s, waiting for as long as it takes, the daemon's max_hold, no lock delay.
   */
  public static CampaignOptions defaults() {
    return new CampaignOptions(hostName(), new byte[0], Duration.ofSeconds(10), null, null, null);
  }

  private static String hostName() {
    String env = System.getenv("HOSTNAME");
    if (env != null && !env.isEmpty()) {
      return env;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "pid-" + ProcessHandle.current().pid();
    }
  }

  /** This candidate's name, 1 to 256 bytes (a pod name, say): {@code participants} lists it. */
  public CampaignOptions candidate(String candidate) {
    return new CampaignOptions(candidate, value, ttl, wait, maxHold, lockDelay);
  }

  /** The value to publish once elected, at most 4096 bytes. */
  public CampaignOptions value(byte[] value) {
    return new CampaignOptions(candidate, value == null ? null : value.clone(), ttl, wait, maxHold, lockDelay);
  }

  /** The value to publish once elected, as UTF-8: at most 4096 bytes. */
  public CampaignOptions value(String value) {
    return value(value == null ? null : value.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * The term's time to live (default 10 s); the daemon extends it at about a third of it. At least
   * 8 x the daemon's node_timeout.
   */
  public CampaignOptions ttl(Duration ttl) {
    return new CampaignOptions(candidate, value, ttl, wait, maxHold, lockDelay);
  }

  /**
   * How long to wait to be elected before giving up with {@link NotElectedException} (default: for
   * as long as it takes).
   */
  public CampaignOptions wait(Duration wait) {
    return new CampaignOptions(candidate, value, ttl, wait, maxHold, lockDelay);
  }

  /** The longest one term may last (default, and at most, the daemon's max_hold); then it is lost. */
  public CampaignOptions maxHold(Duration maxHold) {
    return new CampaignOptions(candidate, value, ttl, wait, maxHold, lockDelay);
  }

  /**
   * As {@link HoldOptions#lockDelay}: keep the election's lock this long after a leader vanishes
   * without resigning, so the next leader starts only after it.
   */
  public CampaignOptions lockDelay(Duration lockDelay) {
    return new CampaignOptions(candidate, value, ttl, wait, maxHold, lockDelay);
  }

  /** The Campaign's start in {@code election}, every field checked. */
  CampaignStart start(String election) {
    Validate.election(election);
    Validate.candidate(candidate);
    CampaignStart.Builder start =
        CampaignStart.newBuilder()
            .setElection(election)
            .setCandidate(candidate)
            .setValue(ByteString.copyFrom(Validate.electionValue(value)))
            .setTtl(Wire.duration(Validate.duration(ttl, "ttl")));
    if (maxHold != null) {
      start.setMaxHold(Wire.duration(Validate.duration(maxHold, "max_hold")));
    }
    if (lockDelay != null) {
      start.setLockDelay(Wire.duration(Validate.duration(lockDelay, "lock_delay")));
    }
    return start.build();
  }

  @Override
  public String toString() {
    return "CampaignOptions(candidate=" + candidate + ", value=" + (value == null ? "null" : value.length + " bytes")
        + ", ttl=" + ttl + ", wait=" + (wait == null ? "until elected" : wait) + ", maxHold="
        + (maxHold == null ? "the daemon's" : maxHold) + (lockDelay == null ? "" : ", lockDelay=" + lockDelay) + ")";
  }
}
