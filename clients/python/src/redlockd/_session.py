"""A Hold session, once for the blocking and the asyncio drivers (no I/O
here): its checked start, its opening (retried as a wait is), what each
message of the daemon means for the lease, and what leaving sends and
raises (docs/design.md#sessions).

The lease is lost — ``lease.lost`` set, and leaving the block raises
``LockLost`` — when the daemon says LOST, when it releases the lock on its
own while the block still runs (``max_hold`` used up, shutdown), when the
stream ends or breaks before the client released, and, should the daemon
fall silent, ``LOST_MARGIN`` (100 ms, at most a quarter of the validity)
before ``valid_until`` when no extension came, on the client's own watch.
Validity counts from when each ACQUIRED / EXTENDED message was received, on
the driver's monotonic clock."""

from __future__ import annotations

import time
from typing import Optional, Tuple, Type

from . import _validate as v
from ._errors import LockLost, NotAcquired, RedlockdError, outcomes
from ._lease import H, HeldLeaseBase
from ._retry import Clock, retried
from ._steps import OpenSession, Steps
from .v1 import lock_pb2 as pb

#: How long leaving a session waits for the daemon to confirm the release.
RELEASE_TIMEOUT = 10.0


def start_message(
    resource: str,
    ttl,
    wait,
    owner: str,
    max_hold,
    shared: bool = False,
    permits: int = 0,
    reentrancy_key: str = "",
    lock_delay=None,
) -> Tuple[pb.HoldStart, float]:
    """The checked ``start`` (without its wait, set per try) and the wait."""
    v.resource(resource)
    v.owner(owner)
    start = pb.HoldStart(resource=resource, owner=owner, **v.kind(shared, permits, reentrancy_key))
    for field, given in (("ttl", ttl), ("max_hold", max_hold), ("lock_delay", lock_delay)):
        seconds = v.optional_seconds(given, field)
        if seconds is not None:
            getattr(start, field).CopyFrom(v.to_wire(seconds))
    return start, v.seconds(wait, "wait")


def first_request(start: pb.HoldStart, wait: float) -> pb.HoldRequest:
    """The session's opening message, with what is left of the wait."""
    this = pb.HoldStart()
    this.CopyFrom(start)
    if wait > 0:
        this.wait.CopyFrom(v.to_wire(wait))
    return pb.HoldRequest(start=this)


def opened(first: Optional[pb.HoldResponse], received: float, kind: Type[H]) -> H:
    """The lease from the session's first message (received at
    ``received``), or the error that says why there is none."""
    if first is None:
        raise RedlockdError("the daemon ended the session before answering")
    if first.event == pb.HOLD_EVENT_NOT_ACQUIRED:
        raise NotAcquired(first.reason, outcomes(first.nodes))
    if first.event != pb.HOLD_EVENT_ACQUIRED:
        raise RedlockdError(f"the session ended before the lock was held: {first.reason}")
    return kind._of(first.lease, received)


class Session:
    """One Hold session, from its checked start to what leaving raises. The
    driver opens it (``open``), feeds it what the stream does (``on``,
    ``stream_ended``, ``stream_broke``, ``cancelled``), asks ``watch`` when
    to look at ``valid_until`` again, and leaves it (``leave``, ``left``)."""

    def __init__(self, start: pb.HoldStart, wait: float, clock: Clock = time.monotonic):
        self._start = start
        self._wait = wait
        self._clock = clock
        #: The held lease, once opened.
        self.lease: Optional[HeldLeaseBase] = None
        #: Set when the client starts releasing (leaving the block).
        self.releasing = False
        #: RELEASED's held_to_end, once it came.
        self.held_to_end: Optional[bool] = None
        #: Why the stream ended without RELEASED, if it did.
        self.ended_because = ""

    def open(self, kind: Type[H]) -> Steps[H]:
        """Opens the session: tries until the daemon grants the lock (a
        ``kind`` lease), says NOT_ACQUIRED, or the wait runs out."""
        if self.lease is not None:
            raise RuntimeError("a Hold session is entered once; call client.hold() again")

        def attempt(left: float) -> Steps[H]:
            first = yield OpenSession(first_request(self._start, left), left)
            self.lease = opened(first, self._clock(), kind)
            return self.lease

        return retried(attempt, self._wait, self._clock)

    def on(self, message: pb.HoldResponse, received: float) -> bool:
        """Takes one message, received at ``received``; ``True`` when the
        session is over."""
        if message.event == pb.HOLD_EVENT_EXTENDED:
            self.lease._valid_for(received, v.from_wire(message.lease.validity))
            return False
        if message.event == pb.HOLD_EVENT_LOST:
            self.lease._lose(f"lost: {message.reason}")
            return True
        if message.event == pb.HOLD_EVENT_RELEASED:
            self.held_to_end = message.held_to_end
            if not self.releasing:
                self.lease._lose(f"the daemon released the lock while it was in use: {message.reason}")
            return True
        return False

    def stream_ended(self) -> None:
        """The daemon ended the stream (without RELEASED or LOST)."""
        self._ended("the daemon ended the session")

    def stream_broke(self, error: RedlockdError) -> None:
        """The stream failed with ``error``."""
        self._ended(f"the session broke: {error}")

    def cancelled(self) -> None:
        """The driver stopped following the stream."""
        self._ended("the session was cancelled")

    def _ended(self, why: str) -> None:
        if self.held_to_end is None:
            self.ended_because = why
            if not self.releasing:
                self.lease._lose(why)

    def watch(self, now: float) -> Optional[float]:
        """Seconds until the lease is due to be said lost (look again then),
        or ``None`` — stop watching — once it is lost: when ``now`` is
        ``LOST_MARGIN`` or less before ``valid_until`` without an extension,
        this loses it, so the holder is told before the validity ends."""
        if self.lease.lost.is_set():
            return None
        left = self.lease._lost_at - now
        if left > 0:
            return left
        self.lease._lose("no extension came from the daemon before valid_until")
        return None

    def leave(self) -> Optional[pb.HoldRequest]:
        """Starts releasing: the message to send, then half-close and wait
        for RELEASED up to ``RELEASE_TIMEOUT``; ``None`` when the lease is
        lost: then nothing is to confirm, cancel the stream (the daemon
        releases a cancelled session at once, and one that said LOST has
        released already)."""
        self.releasing = True
        return None if self.lease.lost.is_set() else pb.HoldRequest(release=pb.HoldRelease())

    def exit_error(self, answered: bool) -> Optional[RedlockdError]:
        """What leaving the block raises (``answered``: the stream ended
        before ``RELEASE_TIMEOUT``): never silent about a failed release."""
        if self.lease.lost.is_set():
            return LockLost(self.lease.lost_reason)
        if self.held_to_end is False:
            return LockLost("released, but a majority of the masters no longer held the lock")
        if self.held_to_end is None:
            why = self.ended_because if answered else f"no answer within {RELEASE_TIMEOUT:g} s"
            return RedlockdError(f"the daemon did not confirm the release ({why})")
        return None

    def left(self, answered: bool, cause: Optional[BaseException]) -> bool:
        """Leaving the block: raises ``exit_error`` (chained to what the
        block raised, ``cause``) if there is one; else ``False`` (whatever
        the block raised goes on)."""
        failure = self.exit_error(answered)
        if failure is not None:
            raise failure from cause
        return False
