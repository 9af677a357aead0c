package io.redlockd.client;

import java.util.Optional;
import redlockd.v1.LockOuterClass.Holder;
import redlockd.v1.LockOuterClass.WatchResponse;

/**
 * One message of {@link RedlockdClient#watch}: what changed, and the state now. A view, not a lock.
 */
public final class WatchChange {
  /** What a watch saw. */
  public enum Event {
    /** The state when the watch began (the first message). */
    CURRENT,
    /** A holder took it; {@link #holder()} is who. */
    ACQUIRED,
    /** The holder in {@link #holder()} let it go (or it was taken over before its TTL ran out). */
    RELEASED,
    /** The holder in {@link #holder()} let its TTL run out. */
    EXPIRED,
    /** An operator took it away through this daemon. */
    FORCE_RELEASED,
    /** Readers or permits came or went. */
    CHANGED,
    /** An event this client does not know (a newer daemon's). */
    UNKNOWN,
  }

  private final Event event;
  private final WatchResponse reply;

  private WatchChange(WatchResponse reply) {
    this.reply = reply;
    switch (reply.getEvent()) {
      case WATCH_EVENT_CURRENT:
        event = Event.CURRENT;
        break;
      case WATCH_EVENT_ACQUIRED:
        event = Event.ACQUIRED;
        break;
      case WATCH_EVENT_RELEASED:
        event = Event.RELEASED;
        break;
      case WATCH_EVENT_EXPIRED:
        event = Event.EXPIRED;
        break;
      case WATCH_EVENT_FORCE_RELEASED:
        event = Event.FORCE_RELEASED;
        break;
      case WATCH_EVENT_CHANGED:
        event = Event.CHANGED;
        break;
      default:
        event = Event.UNKNOWN;
        break;
    }
  }

  static WatchChange of(WatchResponse reply) {
    return new WatchChange(reply);
  }

  /** What changed. */
  public Event event() {
    return event;
  }

  /** Whether a majority holds it now. */
  public boolean held() {
    return reply.getHeld();
  }

  /**
   * Who holds it now (CURRENT, ACQUIRED), or who held it (RELEASED, EXPIRED, FORCE_RELEASED), as
   * {@code inspect} reports it; read its token with {@link #holderToken()}.
   */
  public Optional<Holder> holder() {
    return reply.hasHolder() ? Optional.of(reply.getHolder()) : Optional.empty();
  }

  /** The holder's fencing token, as Inspect rebuilds it from the masters' counters. */
  public Optional<FencingToken> holderToken() {
    return holder().map(h -> FencingToken.fromWire(h.getFencingToken()));
  }

  /** Readers holding it now (a shared lock). */
  public int readers() {
    return reply.getReaders();
  }

  /** A semaphore's permits. */
  public int permits() {
    return reply.getPermits();
  }

  /** How many of the permits are out now. */
  public int permitsOut() {
    return reply.getPermitsOut();
  }

  @Override
  public String toString() {
    return "WatchChange(" + event + ", held=" + held() + holderToken().map(t -> ", holder token=" + t).orElse("")
        + ", readers=" + readers() + ", permits=" + permitsOut() + "/" + permits() + ")";
  }
}
