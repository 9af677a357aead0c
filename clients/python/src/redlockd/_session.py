"""What a Hold session's messages mean for its lease, shared by the blocking
and the asyncio sessions (no IO here).

The lease is lost — ``lease.lost`` set, and leaving the block raises
``LockLost`` — when the daemon says LOST, when it releases the lock on its
own while the block still runs (``max_hold`` used up, shutdown), when the
stream ends or breaks before the client released, and, should the daemon
fall silent, when ``valid_until`` passes without an extension."""

from __future__ import annotations

import time
from typing import Optional, Tuple, Type, TypeVar

from . import _validate as v
from ._errors import LockLost, NotAcquired, RedlockdError, outcomes
from ._lease import LeaseInfo
from .v1 import lock_pb2 as pb

#: How long leaving a session waits for the daemon to confirm the release.
RELEASE_TIMEOUT = 10.0


class HeldLeaseBase(LeaseInfo):
    """A session's lock: ``valid_until`` moves on with every extension the
    daemon makes; ``lost`` is set the moment the lock is lost."""

    __slots__ = ("lost", "lost_reason")

    def __init__(
        self,
        resource: str,
        value: str,
        fencing_token: int,
        valid_until: float,
        lost,
        shared: bool = False,
        permits: int = 0,
        slot: int = 0,
    ):
        super().__init__(resource, value, fencing_token, valid_until, shared, permits, slot)
        #: Set the moment the lock can no longer be guaranteed: stop working.
        self.lost = lost
        #: Why, once lost.
        self.lost_reason = ""

    def _lose(self, reason: str) -> None:
        if not self.lost.is_set():
            self.lost_reason = reason
            self.lost.set()


L = TypeVar("L", bound=HeldLeaseBase)


def start_message(
    resource: str, ttl, wait, owner: str, max_hold, shared: bool = False, permits: int = 0, reentrancy_key: str = ""
) -> Tuple[pb.HoldStart, float]:
    """The checked ``start`` (without its wait, set per try) and the wait."""
    v.resource(resource)
    v.owner(owner)
    start = pb.HoldStart(resource=resource, owner=owner, **v.kind(shared, permits, reentrancy_key))
    ttl_s = v.optional_seconds(ttl, "ttl")
    if ttl_s is not None:
        start.ttl.CopyFrom(v.to_wire(ttl_s))
    max_hold_s = v.optional_seconds(max_hold, "max_hold")
    if max_hold_s is not None:
        start.max_hold.CopyFrom(v.to_wire(max_hold_s))
    return start, v.seconds(wait, "wait")


def first_request(start: pb.HoldStart, wait: float) -> pb.HoldRequest:
    """The session's opening message, with what is left of the wait."""
    this = pb.HoldStart()
    this.CopyFrom(start)
    if wait > 0:
        this.wait.CopyFrom(v.to_wire(wait))
    return pb.HoldRequest(start=this)


def opened(first: Optional[pb.HoldResponse], received: float, lease_type: Type[L]) -> L:
    """The lease from the session's first message (received at
    ``received``), or the error that says why there is none."""
    if first is None:
        raise RedlockdError("the daemon ended the session before answering")
    if first.event == pb.HOLD_EVENT_NOT_ACQUIRED:
        raise NotAcquired(first.reason, outcomes(first.nodes))
    if first.event != pb.HOLD_EVENT_ACQUIRED:
        raise RedlockdError(f"the session ended before the lock was held: {first.reason}")
    lease = first.lease
    # The proto: count a session's validity from receiving the message.
    valid_until = received + v.from_wire(lease.validity)
    return lease_type(lease.resource, lease.value, lease.fencing_token, valid_until, **LeaseInfo._wire(lease))


class SessionState:
    """The bookkeeping of one open session."""

    def __init__(self, lease: HeldLeaseBase):
        self.lease = lease
        #: Set when the client starts releasing (leaving the block).
        self.releasing = False
        #: RELEASED's held_to_end, once it came.
        self.held_to_end: Optional[bool] = None
        #: Why the stream ended without RELEASED, if it did.
        self.ended_because = ""

    def on(self, message: pb.HoldResponse) -> bool:
        """Takes one message; ``True`` when the session is over."""
        if message.event == pb.HOLD_EVENT_EXTENDED:
            self.lease.valid_until = time.monotonic() + v.from_wire(message.lease.validity)
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

    def ended(self, why: str) -> None:
        """The stream ended (or broke) before RELEASED."""
        if self.held_to_end is None:
            self.ended_because = why
            if not self.releasing:
                self.lease._lose(why)

    def silent(self) -> None:
        """``valid_until`` passed without an extension."""
        self.lease._lose("no extension came from the daemon before valid_until")

    def exit_error(self, answered: bool) -> Optional[RedlockdError]:
        """What leaving the block raises: never silent about a failed release."""
        if self.lease.lost.is_set():
            return LockLost(self.lease.lost_reason)
        if self.held_to_end is False:
            return LockLost("released, but a majority of the masters no longer held the lock")
        if self.held_to_end is None:
            why = self.ended_because if answered else f"no answer within {RELEASE_TIMEOUT:g} s"
            return RedlockdError(f"the daemon did not confirm the release ({why})")
        return None
