package io.redlockd.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import redlockd.v1.LockOuterClass.AcquireManyRequest;
import redlockd.v1.LockOuterClass.AcquireManyResponse;
import redlockd.v1.LockOuterClass.ExtendManyRequest;
import redlockd.v1.LockOuterClass.ExtendManyResponse;
import redlockd.v1.LockOuterClass.ReleaseManyRequest;

/**
 * Several resources at once (docs/design.md#sets): {@link RedlockdClient#tryAcquireMany}, {@link
 * RedlockdClient#extendMany} and {@link RedlockdClient#releaseMany}.
 */
final class Sets {
  private final RedlockdClient client;

  Sets(RedlockdClient client) {
    this.client = client;
  }

  Optional<List<Lease>> acquire(Collection<String> resources, AcquireOptions options) {
    List<String> names = Validate.resources(resources);
    Validate.owner(options.owner);
    if (options.shared || options.permits != 0 || !options.reentrancyKey.isEmpty()) {
      throw new InvalidArgumentException(
          "invalid options: a set's locks are exclusive: leave shared, permits and reentrancyKey unset");
    }
    if (options.lockDelay != null) {
      throw new InvalidArgumentException("invalid lock_delay: a set takes no lock delay (docs/design.md#lock-delay)");
    }
    Duration ttl = Validate.duration(options.ttl, "ttl");
    Backoff backoff = new Backoff(Validate.duration(options.wait, "wait"));
    while (true) {
      Duration left = backoff.left();
      AcquireManyRequest.Builder request =
          AcquireManyRequest.newBuilder()
              .addAllResources(names)
              .setOwner(options.owner)
              .setTtl(Wire.duration(ttl));
      if (!left.isZero()) {
        request.setWait(Wire.duration(left));
      }
      long sent = System.nanoTime(); // the client rule: validity counts from here
      AcquireManyResponse reply;
      try {
        reply = client.call(s -> s.acquireMany(request.build()), left);
      } catch (UnavailableException e) {
        if (!backoff.pause()) {
          throw e;
        }
        continue;
      }
      if (!reply.getAcquired()) {
        return Optional.empty();
      }
      List<Lease> leases = new ArrayList<>();
      for (redlockd.v1.LockOuterClass.Lease lease : reply.getLeasesList()) {
        leases.add(new Lease(client, Granted.of(lease), Granted.deadline(sent, lease.getValidity()), ttl));
      }
      return Optional.of(List.copyOf(leases));
    }
  }

  /**
   * Extends {@code leases} to {@code ttl} (null: the TTL the first was taken with). One given back
   * before is not sent, and makes the answer false.
   */
  boolean extend(Collection<Lease> leases, Duration ttl) {
    String value = valueOf(leases, "extendMany");
    List<Lease> members = leases.stream().filter(lease -> !lease.isReleased()).toList();
    if (members.isEmpty()) {
      return false;
    }
    ExtendManyRequest.Builder request =
        ExtendManyRequest.newBuilder()
            .setValue(value)
            .setTtl(Wire.duration(ttl != null ? ttl : members.get(0).ttl()));
    members.forEach(lease -> request.addResources(lease.resource()));
    long sent = System.nanoTime(); // the client rule: validity counts from here
    ExtendManyResponse reply = client.call(s -> s.extendMany(request.build()), Duration.ZERO);
    for (int i = 0; i < members.size() && i < reply.getMembersCount(); i++) {
      if (reply.getMembers(i)) {
        members.get(i).extended(Granted.deadline(sent, reply.getValidity()));
      }
    }
    return reply.getExtended() && members.size() == leases.size();
  }

  /** Releases {@code leases}; one released before is not sent again, and makes the answer false. */
  boolean release(Collection<Lease> leases) {
    String value = valueOf(leases, "releaseMany");
    ReleaseManyRequest.Builder request = ReleaseManyRequest.newBuilder().setValue(value);
    boolean all = true;
    for (Lease lease : leases) {
      if (lease.releasing()) {
        request.addResources(lease.resource());
      } else {
        all = false;
      }
    }
    if (request.getResourcesCount() == 0) {
      return false;
    }
    return client.call(s -> s.releaseMany(request.build()), Duration.ZERO).getReleased() && all;
  }

  /** The one value {@code leases} hold: 1 to 16 leases of one set, as the daemon checks them. */
  private static String valueOf(Collection<Lease> leases, String call) {
    if (leases == null || leases.size() < 1 || leases.size() > Validate.MAX_SET) {
      throw new InvalidArgumentException(
          "invalid leases: " + (leases == null ? 0 : leases.size()) + " leases; 1 to " + Validate.MAX_SET
              + " are allowed");
    }
    HashSet<String> values = new HashSet<>();
    for (Lease lease : leases) {
      values.add(lease.value());
    }
    if (values.size() != 1) {
      throw new InvalidArgumentException(
          "invalid leases: they hold more than one value: " + call + " takes leases of one tryAcquireMany");
    }
    return values.iterator().next();
  }
}
