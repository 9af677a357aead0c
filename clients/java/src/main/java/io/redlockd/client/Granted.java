package io.redlockd.client;

import java.time.Duration;
import redlockd.v1.LockOuterClass;

/**
 * What a granted lock is, whichever way it was taken ({@link Lease}, {@link HeldLock}): the
 * resource, the fencing token, the kind, and the value (the secret that proves ownership, kept and
 * never shown).
 */
final class Granted {
  final String resource;
  final String value;
  final FencingToken fencingToken;
  final boolean shared;
  final int permits;
  final int slot;

  private Granted(
      String resource, String value, FencingToken fencingToken, boolean shared, int permits, int slot) {
    this.resource = resource;
    this.value = value;
    this.fencingToken = fencingToken;
    this.shared = shared;
    this.permits = permits;
    this.slot = slot;
  }

  /** A wire Lease, its token read as the unsigned 64 bits it is. */
  static Granted of(LockOuterClass.Lease lease) {
    return new Granted(
        lease.getResource(),
        lease.getValue(),
        FencingToken.fromWire(lease.getFencingToken()),
        lease.getMode() == LockOuterClass.LockMode.LOCK_MODE_SHARED,
        lease.getPermits(),
        lease.getSlot());
  }

  /** The lease's validity counted from {@code fromNanos} (a System.nanoTime()): a deadline on that clock. */
  static long deadline(long fromNanos, com.google.protobuf.Duration validity) {
    return fromNanos + Wire.duration(validity).toNanos();
  }

  static Duration remaining(long validUntilNanos) {
    return Duration.ofNanos(Math.max(0, validUntilNanos - System.nanoTime()));
  }

  /** What toString shows: never the value. */
  String describe(String type, long validUntilNanos, String extra) {
    StringBuilder s = new StringBuilder(type).append("(resource=").append(resource);
    s.append(", fencingToken=").append(fencingToken);
    if (shared) {
      s.append(", shared");
    }
    if (permits >= 2) {
      s.append(", slot=").append(slot).append(" of permits=").append(permits);
    }
    double left = remaining(validUntilNanos).toNanos() / 1e9;
    s.append(String.format(java.util.Locale.ROOT, ", remaining=%.3fs", left)).append(extra).append(')');
    return s.toString();
  }
}
