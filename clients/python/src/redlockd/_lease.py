"""What every lease shows, whichever way it was taken: the resource, the
fencing token and until when the lock is guaranteed. The lock's value (the
secret that proves ownership) is kept, never shown. The leases of the
blocking and the asyncio clients share their bases here (they differ in
how they wait); the two session leases differ only in their kind of event."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Optional, Type, TypeVar

from . import _validate as v
from .v1 import lock_pb2 as pb

K = TypeVar("K", bound="LeaseBase")
H = TypeVar("H", bound="HeldLeaseBase")

#: How long before ``valid_until`` a session whose daemon fell silent is
#: said lost, by the client's own watch: 100 ms, or a quarter of the
#: validity when that is less. It covers a message's way from the daemon and
#: a late timer on a busy host, so that the holder is told before the
#: validity ends; it is below the daemon's own lead (LOST at 3 x
#: node_timeout, 150 ms by default, before the end: docs/design.md#sessions),
#: so the daemon's LOST, which says why, normally comes first.
LOST_MARGIN = 0.1


def lost_at(valid_until: float, validity: float) -> float:
    """When the client's own watch says it is lost, should no extension
    come: ``LOST_MARGIN`` (at most a quarter of ``validity``) before
    ``valid_until``."""
    return valid_until - min(LOST_MARGIN, max(0.0, validity) / 4)


class Deadline:
    """Whatever has a ``valid_until`` (a ``time.monotonic()`` deadline)."""

    __slots__ = ()
    valid_until: float

    @property
    def remaining(self) -> float:
        """Seconds left until ``valid_until`` (0 once it has passed)."""
        return max(0.0, self.valid_until - time.monotonic())


class Watched(Deadline):
    """What a session's lease and a campaign's leadership share: ``lost`` (a
    new ``_event()``: the driver's kind of event), set the moment it can no
    longer be guaranteed — with no word from the daemon, ``LOST_MARGIN``
    before ``valid_until`` — and why. The subclasses name the slots."""

    __slots__ = ()
    _event: type

    def _watched(self, valid_until: float) -> None:
        #: Set the moment it can no longer be guaranteed: stop working.
        self.lost = self._event()
        #: Why, once lost.
        self.lost_reason = ""
        #: When the session's watch says it is lost, should no extension come.
        self._lost_at = valid_until

    def _lose(self, reason: str) -> None:
        if not self.lost.is_set():
            self.lost_reason = reason
            self.lost.set()

    def _valid_for(self, received: float, validity: float) -> None:
        """Valid for ``validity`` from ``received``, when the message saying
        so came (the proto: a session's validity counts from then)."""
        self.valid_until = received + validity
        self._lost_at = lost_at(self.valid_until, validity)


class LeaseInfo(Deadline):
    """The common face of ``Lease``, ``HeldLease`` and their async twins."""

    __slots__ = ("resource", "fencing_token", "valid_until", "shared", "permits", "slot", "_value")

    def __init__(
        self,
        resource: str,
        value: str,
        fencing_token: int,
        valid_until: float,
        shared: bool = False,
        permits: int = 0,
        slot: int = 0,
    ):
        #: The locked resource, as requested.
        self.resource = resource
        #: ``True`` for a shared lock (a reader, taken with ``shared=True``):
        #: other readers may hold it too and share its fencing token; a
        #: writer's token is larger than every earlier reader's.
        self.shared = shared
        #: For a permit of a semaphore (taken with ``permits=N``, N >= 2):
        #: N, and the slot this lease holds (0 to N - 1). Fencing tokens
        #: increase per slot: compare a permit's token with earlier tokens
        #: of the same slot only. 0 and 0 for a lock.
        self.permits = permits
        self.slot = slot
        #: Strictly increases per resource (per slot for a permit); exact at
        #: any size (a Python int). Send it with every write to the protected
        #: storage.
        self.fencing_token = fencing_token
        #: A ``time.monotonic()`` deadline: the lock is guaranteed until
        #: then. Counted from the moment the request was sent (a session's,
        #: from each ACQUIRED / EXTENDED message, as the proto says).
        self.valid_until = valid_until
        self._value = value

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(resource={self.resource!r}, fencing_token={self.fencing_token}, "
            f"{'shared=True, ' if self.shared else ''}{self._permit()}remaining={self.remaining:.3f}s)"
        )

    def _permit(self) -> str:
        return f"slot={self.slot} of permits={self.permits}, " if self.permits >= 2 else ""

    @staticmethod
    def _wire(lease) -> dict:
        """What a wire ``Lease`` says of the kind of lock: keyword arguments."""
        return {"shared": lease.mode == pb.LOCK_MODE_SHARED, "permits": lease.permits, "slot": lease.slot}

    __str__ = __repr__


class LeaseBase(LeaseInfo):
    """What ``Lease`` and ``AsyncLease`` keep: the client that took the lock
    (to extend and release through it) and the TTL it was taken with."""

    __slots__ = ("_client", "_ttl", "_released")

    def __init__(
        self,
        client,
        resource: str,
        value: str,
        fencing_token: int,
        valid_until: float,
        ttl: Optional[float],
        shared: bool = False,
        permits: int = 0,
        slot: int = 0,
    ):
        super().__init__(resource, value, fencing_token, valid_until, shared, permits, slot)
        self._client = client
        self._ttl = ttl
        #: Released (or given to ``release_many``): it asks the daemon
        #: nothing more, since with a reentrancy key its value is another
        #: acquisition's too.
        self._released = False

    @classmethod
    def _of(cls: Type[K], client, wire: pb.Lease, sent: float, ttl: Optional[float]) -> K:
        """The lease of a wire ``Lease`` answering a request sent at ``sent``
        (the client rule: validity counts from the send)."""
        valid_until = sent + v.from_wire(wire.validity)
        return cls(client, wire.resource, wire.value, wire.fencing_token, valid_until, ttl, **cls._wire(wire))


class HeldLeaseBase(LeaseInfo, Watched):
    """A session's lock: ``valid_until`` moves on with every extension the
    daemon makes; ``lost`` (a new ``_event()``: the driver's kind of event)
    is set the moment the lock is lost: with no word from the daemon,
    ``LOST_MARGIN`` before ``valid_until``."""

    __slots__ = ("lost", "lost_reason", "_lost_at")

    def __init__(
        self,
        resource: str,
        value: str,
        fencing_token: int,
        valid_until: float,
        shared: bool = False,
        permits: int = 0,
        slot: int = 0,
    ):
        super().__init__(resource, value, fencing_token, valid_until, shared, permits, slot)
        self._watched(valid_until)

    @classmethod
    def _of(cls: Type[H], wire: pb.Lease, received: float) -> H:
        """The lease of a session's wire ``Lease``, in a message received at
        ``received``."""
        lease = cls(wire.resource, wire.value, wire.fencing_token, received, **cls._wire(wire))
        lease._valid_for(received, v.from_wire(wire.validity))
        return lease


class HeldLease(HeldLeaseBase):
    """The lock of a ``Hold`` session; ``lost`` is a ``threading.Event``."""

    __slots__ = ()
    _event = threading.Event


class AsyncHeldLease(HeldLeaseBase):
    """The lock of an async Hold session; ``lost`` is an ``asyncio.Event``."""

    __slots__ = ()
    _event = asyncio.Event
