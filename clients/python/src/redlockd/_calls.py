"""The unary operations, once for both clients, as steps (``_steps.py``):
each checks its arguments at once — before anything is sent — and returns
the generator that a driver runs. ``clock`` (``time.monotonic``) is read
right before each request is sent: the client rule counts a lease's
validity from then (docs/design.md#the-wire-contract).

A set (docs/design.md#sets) is taken all or none: one
value for the set, a fencing token per member."""

from __future__ import annotations

import time
from collections import abc
from typing import Iterable, List, Optional, Sequence, Type

from . import _validate as v
from ._errors import InvalidArgument
from ._lease import K, LeaseBase, LeaseInfo
from ._retry import Clock, retried
from ._steps import Call, Steps, T
from .v1 import lock_pb2 as pb

#: What leaving a lease's ``with`` block raises (as ``LockLost``) when the
#: release found the lock gone.
NOT_HELD_TO_END = "released, but the lock had expired or been taken over"


def acquire(
    client,
    kind: Type[K],
    resource: str,
    ttl: Optional[v.Seconds],
    wait: v.Seconds,
    owner: str,
    shared: bool,
    permits: int,
    reentrancy_key: str,
    clock: Clock = time.monotonic,
    lock_delay: Optional[v.Seconds] = None,
) -> Steps[Optional[K]]:
    """``Client.acquire``: a ``kind`` lease, or ``None`` under contention."""
    v.resource(resource)
    v.owner(owner)
    fields = v.kind(shared, permits, reentrancy_key)
    ttl_s = v.optional_seconds(ttl, "ttl")
    wait_s = v.seconds(wait, "wait")
    delay_s = v.optional_seconds(lock_delay, "lock_delay")
    if delay_s:
        fields["lock_delay"] = v.to_wire(delay_s)

    def attempt(left: float) -> Steps[Optional[K]]:
        request = pb.AcquireRequest(resource=resource, owner=owner, **fields)
        _durations(request, ttl_s, left)
        sent = clock()
        reply = yield Call("Acquire", request, left)
        return kind._of(client, reply.lease, sent, ttl_s) if reply.acquired else None

    return retried(attempt, wait_s, clock)


def acquire_many(
    client,
    kind: Type[K],
    resources: Iterable[str],
    ttl: Optional[v.Seconds],
    wait: v.Seconds,
    owner: str,
    clock: Clock = time.monotonic,
) -> Steps[Optional[List[K]]]:
    """``Client.acquire_many``: ``kind`` leases sorted by resource, as the
    daemon sends them, or ``None`` when the set was not granted."""
    names = v.resources(resources)
    v.owner(owner)
    ttl_s = v.optional_seconds(ttl, "ttl")
    wait_s = v.seconds(wait, "wait")

    def attempt(left: float) -> Steps[Optional[List[K]]]:
        request = pb.AcquireManyRequest(resources=names, owner=owner)
        _durations(request, ttl_s, left)
        sent = clock()
        reply = yield Call("AcquireMany", request, left)
        return [kind._of(client, lease, sent, ttl_s) for lease in reply.leases] if reply.acquired else None

    return retried(attempt, wait_s, clock)


def release_many(leases: Iterable[LeaseInfo], kind: type) -> Steps[bool]:
    """``Client.release_many``: 1 to 16 ``kind`` leases (those
    ``acquire_many`` returns, or some of them), all with one value."""
    given = _one_set(leases, kind, "release_many")
    for lease in given:
        lease._released = True
    request = pb.ReleaseManyRequest(resources=[lease.resource for lease in given], value=given[0]._value)
    return _field(Call("ReleaseMany", request), "released")


def extend_many(
    leases: Iterable[LeaseBase], kind: type, ttl: Optional[v.Seconds], clock: Clock = time.monotonic
) -> Steps[bool]:
    """``Client.extend_many``: resets the TTL of 1 to 16 ``kind`` leases of
    one set to ``ttl`` (``None``: the TTL the set was taken with) and moves
    each extended lease's ``valid_until`` on; ``False`` when any was lost."""
    given = _one_set(leases, kind, "extend_many")
    ttl_s = given[0]._ttl if ttl is None else v.seconds(ttl, "ttl")
    request = pb.ExtendManyRequest(resources=[lease.resource for lease in given], value=given[0]._value)
    _durations(request, ttl_s, 0)

    def attempt() -> Steps[bool]:
        sent = clock()
        reply = yield Call("ExtendMany", request)
        # The validity is the shortest of the extended ones'.
        for lease, extended in zip(given, reply.members):
            if extended:
                lease.valid_until = sent + v.from_wire(reply.validity)
        return reply.extended

    return attempt()


def _one_set(leases: Iterable[LeaseInfo], kind: type, method: str) -> Sequence:
    """``leases`` as a list: 1 to 16 ``kind`` leases that hold one value
    (of one ``acquire_many``); ``InvalidArgument`` naming ``leases``."""
    if isinstance(leases, LeaseInfo) or not isinstance(leases, abc.Iterable):
        raise InvalidArgument(f"invalid leases: must be a list of {kind.__name__}, not {type(leases).__name__}")
    given: Sequence = list(leases)
    for lease in given:
        if not isinstance(lease, kind):
            raise InvalidArgument(
                f"invalid leases: must be {kind.__name__}s (from acquire_many), not {type(lease).__name__}"
            )
    if not 1 <= len(given) <= v.MAX_SET:
        raise InvalidArgument(f"invalid leases: {len(given)} leases; 1 to {v.MAX_SET} are allowed")
    if len({lease._value for lease in given}) != 1:
        raise InvalidArgument(
            f"invalid leases: they hold more than one value: {method} takes leases of one acquire_many"
        )
    return given


def extend(lease: LeaseBase, ttl: Optional[v.Seconds], clock: Clock = time.monotonic) -> Steps[bool]:
    """``Lease.extend``: resets the TTL to ``ttl`` (``None``: the lease's
    own) and moves ``valid_until`` on; ``False`` when the lock is lost."""
    ttl_s = lease._ttl if ttl is None else v.seconds(ttl, "ttl")
    request = pb.ExtendRequest(resource=lease.resource, value=lease._value)
    _durations(request, ttl_s, 0)

    def attempt() -> Steps[bool]:
        if lease._released:
            return False  # nothing is held to extend
        sent = clock()
        reply = yield Call("Extend", request)
        if reply.extended:
            lease.valid_until = sent + v.from_wire(reply.validity)
        return reply.extended

    return attempt()


def release(lease: LeaseBase) -> Steps[bool]:
    """``Lease.release``: ``True`` when the lock was held to the end;
    ``False``, asking the daemon nothing, when the lease was released
    before."""
    if lease._released:
        return _answer(False)
    lease._released = True
    return _field(Call("Release", pb.ReleaseRequest(resource=lease.resource, value=lease._value)), "released")


def _answer(value: T) -> Steps[T]:
    """Steps that perform nothing and return ``value``."""
    return value
    yield  # a generator, as every operation is


def inspect(resource: str) -> Steps[pb.InspectResponse]:
    """``Client.inspect``: what each master holds (never lock values)."""
    v.resource(resource)
    return _field(Call("Inspect", pb.InspectRequest(resource=resource)), None)


def _field(call: Call, name: Optional[str]) -> Steps:
    """The reply to ``call``, or its field ``name``."""
    reply = yield call
    return reply if name is None else getattr(reply, name)


def _durations(request, ttl: Optional[float], wait: float) -> None:
    """Sets ``ttl`` (unless unset: the daemon's default) and ``wait``
    (unless 0) on a request."""
    if ttl is not None:
        request.ttl.CopyFrom(v.to_wire(ttl))
    if wait > 0:
        request.wait.CopyFrom(v.to_wire(wait))
