package io.redlockd.client;

import io.grpc.ClientInterceptor;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import redlockd.v1.LockGrpc;
import redlockd.v1.LockOuterClass.AcquireRequest;
import redlockd.v1.LockOuterClass.AcquireResponse;
import redlockd.v1.LockOuterClass.ExtendRequest;
import redlockd.v1.LockOuterClass.ExtendResponse;
import redlockd.v1.LockOuterClass.HoldStart;
import redlockd.v1.LockOuterClass.InspectRequest;
import redlockd.v1.LockOuterClass.InspectResponse;
import redlockd.v1.LockOuterClass.LockMode;
import redlockd.v1.LockOuterClass.ReleaseRequest;
import redlockd.v1.LockOuterClass.WatchRequest;

/**
 * A connection to one redlockd (or a load balancer in front of several). Thread-safe; close it when
 * done (open sessions then end, and their locks are released).
 *
 * <pre>{@code
 * try (RedlockdClient client = RedlockdClient.fromEnv();
 *     HeldLock lock = client.hold("jobs/nightly", HoldOptions.defaults().wait(Duration.ofSeconds(5)))) {
 *   store.write(row, lock.fencingToken()); // the store refuses tokens older than one it has seen
 * }
 * }</pre>
 */
public final class RedlockdClient implements AutoCloseable {
  private final ManagedChannel channel;
  private final LockGrpc.LockBlockingStub blocking;
  private final LockGrpc.LockStub async;
  private final Elections elections;
  private final Sets sets = new Sets(this);

  private RedlockdClient(Settings settings) {
    this.channel = Grpc.newChannelBuilder(settings.target, settings.credentials()).build();
    LockGrpc.LockBlockingStub blocking = LockGrpc.newBlockingStub(channel);
    LockGrpc.LockStub async = LockGrpc.newStub(channel);
    ClientInterceptor bearer = null;
    if (settings.token != null) {
      Metadata headers = new Metadata();
      Metadata.Key<String> authorization = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
      headers.put(authorization, "Bearer " + settings.token);
      bearer = MetadataUtils.newAttachHeadersInterceptor(headers);
      blocking = blocking.withInterceptors(bearer);
      async = async.withInterceptors(bearer);
    }
    this.blocking = blocking;
    this.async = async;
    this.elections = new Elections(channel, bearer);
  }

  /**
   * A client configured from the environment, as redlockctl reads it: REDLOCKD_ADDR (else
   * 127.0.0.1:7420; https://... turns TLS on), REDLOCKD_TOKEN (sent as {@code authorization:
   * Bearer ...}), and the PEM files REDLOCKD_CA, REDLOCKD_CERT with REDLOCKD_KEY (TLS; mutual with
   * the last two). Plaintext when none of the last three is set.
   */
  public static RedlockdClient fromEnv() {
    return builder().build();
  }

  /** A builder; what it is not given comes from the environment, as {@link #fromEnv()}. */
  public static Builder builder() {
    return new Builder();
  }

  /** Settings for a client; unset ones come from the environment. */
  public static final class Builder {
    private String address;
    private String token;
    private Tls tls;
    private Map<String, String> env = System.getenv();

    private Builder() {}

    /** host:port, http://host:port or https://host:port (instead of REDLOCKD_ADDR). */
    public Builder address(String address) {
      this.address = address;
      return this;
    }

    /** The bearer token (instead of REDLOCKD_TOKEN). */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /** TLS (instead of REDLOCKD_CA, REDLOCKD_CERT, REDLOCKD_KEY). */
    public Builder tls(Tls tls) {
      this.tls = tls;
      return this;
    }

    /** Where unset settings are read from (default: {@link System#getenv()}). */
    public Builder environment(Map<String, String> env) {
      this.env = Map.copyOf(env);
      return this;
    }

    /**
     * Connects (lazily: the first call opens the connection).
     *
     * @throws InvalidArgumentException when a setting is wrong, naming it
     */
    public RedlockdClient build() {
      return new RedlockdClient(Settings.resolve(address, token, tls, env));
    }
  }

  /** Closes the connection; open sessions end, and the daemon releases their locks. */
  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** {@link #tryAcquire(String, AcquireOptions)} with {@link AcquireOptions#defaults()}. */
  public Optional<Lease> tryAcquire(String resource) {
    return tryAcquire(resource, AcquireOptions.defaults());
  }

  /**
   * Takes the lock on {@code resource}, trying for up to the options' wait. Empty when someone else
   * kept it all along: contention is a value, not an error. A wait the daemon cuts short with
   * UNAVAILABLE is retried with jitter until it runs out; then {@link UnavailableException} is
   * thrown. The lease's validity counts from the moment the request was sent.
   *
   * @throws InvalidArgumentException before sending anything, when an argument is out of range
   */
  public Optional<Lease> tryAcquire(String resource, AcquireOptions options) {
    Validate.resource(resource);
    Validate.owner(options.owner);
    Validate.kind(options.shared, options.permits, options.reentrancyKey);
    Duration ttl = Validate.duration(options.ttl, "ttl");
    Duration lockDelay =
        options.lockDelay == null ? null : Validate.duration(options.lockDelay, "lock_delay");
    Backoff backoff = new Backoff(Validate.duration(options.wait, "wait"));
    while (true) {
      Duration left = backoff.left();
      AcquireRequest.Builder request =
          AcquireRequest.newBuilder()
              .setResource(resource)
              .setOwner(options.owner)
              .setTtl(Wire.duration(ttl))
              .setMode(options.shared ? LockMode.LOCK_MODE_SHARED : LockMode.LOCK_MODE_EXCLUSIVE)
              .setPermits(options.permits)
              .setReentrancyKey(options.reentrancyKey);
      if (!left.isZero()) {
        request.setWait(Wire.duration(left));
      }
      if (lockDelay != null) {
        request.setLockDelay(Wire.duration(lockDelay));
      }
      long sent = System.nanoTime(); // the client rule: validity counts from here
      AcquireResponse reply;
      try {
        reply = call(s -> s.acquire(request.build()), left);
      } catch (UnavailableException e) {
        if (!backoff.pause()) {
          throw e;
        }
        continue;
      }
      if (!reply.getAcquired()) {
        return Optional.empty();
      }
      Granted granted = Granted.of(reply.getLease());
      long validUntil = Granted.deadline(sent, reply.getLease().getValidity());
      return Optional.of(new Lease(this, granted, validUntil, ttl));
    }
  }

  /**
   * Takes the locks on several resources at once, all or none (docs/design.md#sets),
   * trying for up to the options' wait: 1 to 16 names, repeats dropped. One {@link Lease} per
   * resource, sorted by resource, or empty when any of them stayed with someone else all along:
   * then none is held, and none was held while waiting (callers with overlapping sets cannot
   * deadlock). The leases share one value and validity; each has its own fencing token. Each is an
   * ordinary lease, extended and released on its own, or released together with {@link
   * #releaseMany}. A set's locks are exclusive: the options' shared, permits and reentrancy key
   * must be left unset.
   */
  public Optional<List<Lease>> tryAcquireMany(Collection<String> resources, AcquireOptions options) {
    return sets.acquire(resources, options);
  }

  /**
   * Extends leases of one set (what {@link #tryAcquireMany} returned, or some of them) in one call
   * to {@code ttl}, counted from the moment it is sent; each extended lease's {@link
   * Lease#validUntilNanos()} moves on. True when every one was extended; false when any was lost
   * (expired, taken over, or released): stop working under the set.
   *
   * @throws InvalidArgumentException for no lease, over 16, or leases of more than one set (before
   *     sending), or a {@code ttl} out of the daemon's range
   */
  public boolean extendMany(Collection<Lease> leases, Duration ttl) {
    return sets.extend(leases, Validate.duration(ttl, "ttl"));
  }

  /** {@link #extendMany(Collection, Duration)} to the TTL the set was taken with. */
  public boolean extendMany(Collection<Lease> leases) {
    return sets.extend(leases, null);
  }

  /**
   * Gives back leases of one set (what {@link #tryAcquireMany} returned, or some of them) in one
   * call. True when every one was still held to the end; false when any had expired, been taken
   * over or been released already.
   *
   * @throws InvalidArgumentException for no lease, over 16, or leases of more than one set
   */
  public boolean releaseMany(Collection<Lease> leases) {
    return sets.release(leases);
  }

  /** {@link #hold(String, HoldOptions)} with {@link HoldOptions#defaults()}. */
  public HeldLock hold(String resource) {
    return hold(resource, HoldOptions.defaults());
  }

  /**
   * Opens a Hold session: returns once the lock is held; the daemon extends it at about a third of
   * the TTL until the session ends ({@link HeldLock#close()}, or the process dying). A wait cut
   * short by UNAVAILABLE is retried as {@link #tryAcquire}'s is.
   *
   * @throws NotAcquiredException when the wait ran out while someone else held the lock
   */
  public HeldLock hold(String resource, HoldOptions options) {
    Validate.resource(resource);
    Validate.owner(options.owner);
    Validate.kind(options.shared, options.permits, options.reentrancyKey);
    HoldStart.Builder start =
        HoldStart.newBuilder()
            .setResource(resource)
            .setOwner(options.owner)
            .setTtl(Wire.duration(Validate.duration(options.ttl, "ttl")))
            .setMode(options.shared ? LockMode.LOCK_MODE_SHARED : LockMode.LOCK_MODE_EXCLUSIVE)
            .setPermits(options.permits)
            .setReentrancyKey(options.reentrancyKey);
    if (options.maxHold != null) {
      start.setMaxHold(Wire.duration(Validate.duration(options.maxHold, "max_hold")));
    }
    if (options.lockDelay != null) {
      start.setLockDelay(Wire.duration(Validate.duration(options.lockDelay, "lock_delay")));
    }
    Backoff backoff = new Backoff(Validate.duration(options.wait, "wait"));
    while (true) {
      try {
        return HeldLock.open(async::hold, start.build(), backoff.left());
      } catch (UnavailableException e) {
        if (!backoff.pause()) {
          throw e;
        }
      }
    }
  }

  /** What each master holds for {@code resource}, who holds it and who waits (never lock values). */
  public InspectResponse inspect(String resource) {
    Validate.resource(resource);
    return call(s -> s.inspect(InspectRequest.newBuilder().setResource(resource).build()), Duration.ZERO);
  }

  /**
   * Follows who holds {@code resource}: the state now first ({@link WatchChange.Event#CURRENT}),
   * then each change as the daemon sees it. A view, not a lock; close it to end the stream.
   */
  public Follower<WatchChange> watch(String resource) {
    Validate.resource(resource);
    return Follower.open(async::watch, WatchRequest.newBuilder().setResource(resource).build(), WatchChange::of);
  }

  /**
   * Campaigns in {@code election} (docs/design.md#elections): waits in line behind the other
   * candidates, here and on other daemons, and returns once this one leads. Its {@link
   * Leadership#lost()} completes the moment the leadership is lost, or when its last validity runs
   * out with no word from the daemon: stop leading then, and send {@link Leadership#term()} with
   * every write. Closing it resigns.
   *
   * @throws NotElectedException when the options' wait ran out first
   */
  public Leadership campaign(String election, CampaignOptions options) {
    return elections.campaign(election, options);
  }

  /** Who leads {@code election} now, as a majority of the masters agree. */
  public LeaderState leader(String election) {
    return elections.leader(election);
  }

  /**
   * Follows {@code election}: the state now first, then every change (a new leader, a new value, no
   * leader); terms never go back. A view, not a lock; close it to end the stream.
   */
  public Follower<LeaderState> observe(String election) {
    return elections.observe(election);
  }

  /**
   * Publishes {@code value} (at most 4096 bytes) for the leader of {@code term}, from anywhere.
   *
   * @throws FailedPreconditionException naming the current term, when {@code term} no longer leads
   */
  public void proclaim(String election, FencingToken term, byte[] value) {
    elections.proclaim(election, term, value);
  }

  /**
   * Ends the leadership of {@code term}, from anywhere: its lock is released at once.
   *
   * @throws FailedPreconditionException naming the current term, when {@code term} no longer leads
   */
  public void resign(String election, FencingToken term) {
    elections.resign(election, term);
  }

  /** The candidates THIS daemon queues for {@code election}, first in line first. */
  public List<String> participants(String election) {
    return elections.participants(election);
  }

  /**
   * The generated blocking stub on this client's connection, with its bearer token, for the methods
   * the client does not wrap.
   */
  public LockGrpc.LockBlockingStub blockingStub() {
    return blocking;
  }

  /** The generated asynchronous stub, as {@link #blockingStub()} (Pipeline, say). */
  public LockGrpc.LockStub asyncStub() {
    return async;
  }

  boolean extend(Lease lease, Duration ttl) {
    ExtendRequest request =
        ExtendRequest.newBuilder()
            .setResource(lease.resource())
            .setValue(lease.value())
            .setTtl(Wire.duration(ttl))
            .build();
    long sent = System.nanoTime();
    ExtendResponse reply = call(s -> s.extend(request), Duration.ZERO);
    if (reply.getExtended()) {
      lease.extended(Granted.deadline(sent, reply.getValidity()));
    }
    return reply.getExtended();
  }

  boolean release(Lease lease) {
    ReleaseRequest request =
        ReleaseRequest.newBuilder().setResource(lease.resource()).setValue(lease.value()).build();
    return call(s -> s.release(request), Duration.ZERO).getReleased();
  }

  /** One unary call, with a deadline of its wait plus a slack; its failure typed. */
  <T> T call(Function<LockGrpc.LockBlockingStub, T> method, Duration wait) {
    try {
      long deadline = wait.plus(Backoff.callSlack).toNanos();
      return method.apply(blocking.withDeadlineAfter(deadline, TimeUnit.NANOSECONDS));
    } catch (StatusRuntimeException e) {
      throw Errors.from(e);
    }
  }
}
