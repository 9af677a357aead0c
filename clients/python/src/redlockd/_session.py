"""A Hold session, once for the blocking and the asyncio drivers (no I/O
here): its checked start, its opening (one message the daemon answers once
the lock is held, NOT_ACQUIRED, or the wait it carries ran out; retried
after UNAVAILABLE), and what is a Hold's own in the session machine
(``_machine.py``: the lease's life, what leaving sends and raises;
docs/design.md#sessions). Validity counts from when each ACQUIRED /
EXTENDED message was received, on the driver's monotonic clock."""

from __future__ import annotations

import time
from typing import Optional, Tuple, Type

from . import _validate as v
from ._errors import DeadlineExceeded, LockLost, NotAcquired, RedlockdError, outcomes
from ._lease import H, HeldLeaseBase
from ._machine import CLOSED, EXTENDED, LOST, SessionMachine, durations
from ._retry import Clock
from ._steps import ENDED, TIMED_OUT, OpenSession, OpenStream, Receive, Steps
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
    durations(start, ttl, max_hold, lock_delay)
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


class Session(SessionMachine[HeldLeaseBase]):
    """One Hold session, from its checked start to what leaving raises (the
    machine's, ``_machine.py``): ``open`` asks the driver for one
    ``OpenSession`` a try (``opening`` performs it on a stream)."""

    CONFIRM_TIMEOUT = RELEASE_TIMEOUT
    _EVENTS = {pb.HOLD_EVENT_EXTENDED: EXTENDED, pb.HOLD_EVENT_LOST: LOST, pb.HOLD_EVENT_RELEASED: CLOSED}
    _NOUN = "session"
    _ONCE = "a Hold session is entered once; call client.hold() again"
    _LEAVING = "release"
    _UNASKED_END = "the daemon released the lock while it was in use"
    _SILENT = "no extension came from the daemon before valid_until"
    _LOST_ERROR = LockLost

    def __init__(self, start: pb.HoldStart, wait: float, clock: Clock = time.monotonic):
        super().__init__(wait, clock)
        self._start = start
        #: RELEASED's held_to_end, once it came.
        self.held_to_end: Optional[bool] = None

    @property
    def lease(self) -> Optional[HeldLeaseBase]:
        """The held lease, once opened."""
        return self.held

    def _attempt(self, kind: Type[H], left: float) -> Steps[H]:
        first = yield OpenSession(first_request(self._start, left), left)
        return opened(first, self._clock(), kind)

    def _validity(self, message: pb.HoldResponse) -> float:
        return v.from_wire(message.lease.validity)

    def _closed(self, message: pb.HoldResponse) -> None:
        self.held_to_end = message.held_to_end

    def _farewell(self) -> pb.HoldRequest:
        return pb.HoldRequest(release=pb.HoldRelease())

    def _confirmed_error(self) -> Optional[RedlockdError]:
        if not self.held_to_end:
            return LockLost("released, but a majority of the masters no longer held the lock")
        return None


def opening(step: OpenSession, slack: float) -> Steps[Optional[pb.HoldResponse]]:
    """How a driver performs ``OpenSession`` on its stream: opens it, and
    gives the daemon's first message (``None`` when the stream ended
    without one); ``DeadlineExceeded`` when none came within the wait and
    the driver's ``slack`` (a daemon that never answers must not hang the
    caller)."""
    yield OpenStream("Hold", step.request)
    got = yield Receive(step.wait + slack)
    if got == TIMED_OUT:
        raise DeadlineExceeded(f"no answer from the daemon within {step.wait + slack:g} s")
    return None if got == ENDED else got[0]
