"""What ``acquire_many`` and ``release_many`` send, for both clients: a set
of resources taken all or none (docs/design.md, "Several resources at
once"), one value for the set, a fencing token per member."""

from __future__ import annotations

from collections import abc
from typing import Iterable, List, Optional, Sequence

from . import _validate as v
from ._errors import InvalidArgument
from ._lease import LeaseInfo
from .v1 import lock_pb2 as pb


def acquire_request(names: List[str], owner: str, ttl_s: Optional[float], left: float) -> pb.AcquireManyRequest:
    request = pb.AcquireManyRequest(resources=names, owner=owner)
    if ttl_s is not None:
        request.ttl.CopyFrom(v.to_wire(ttl_s))
    if left > 0:
        request.wait.CopyFrom(v.to_wire(left))
    return request


def leases_of(reply: pb.AcquireManyResponse, make, sent: float) -> Optional[list]:
    """The granted set as leases (``make(wire_lease, valid_until)``), sorted
    by resource as the daemon sends them; ``None`` when it was not granted."""
    if not reply.acquired:
        return None
    return [make(lease, sent + v.from_wire(lease.validity)) for lease in reply.leases]


def release_request(leases: Iterable[LeaseInfo], kind: type) -> pb.ReleaseManyRequest:
    """One ReleaseMany for leases of one set: 1 to 16 ``kind`` leases (those
    ``acquire_many`` returns, or some of them), all with one value."""
    if isinstance(leases, LeaseInfo) or not isinstance(leases, abc.Iterable):
        raise InvalidArgument(f"invalid leases: must be a list of {kind.__name__}, not {type(leases).__name__}")
    given: Sequence[LeaseInfo] = list(leases)
    for lease in given:
        if not isinstance(lease, kind):
            raise InvalidArgument(f"invalid leases: must be {kind.__name__}s (from acquire_many), not {type(lease).__name__}")
    if not 1 <= len(given) <= v.MAX_SET:
        raise InvalidArgument(f"invalid leases: {len(given)} leases; 1 to {v.MAX_SET} are allowed")
    if len({lease._value for lease in given}) != 1:
        raise InvalidArgument("invalid leases: they hold more than one value: release_many takes leases of one acquire_many")
    return pb.ReleaseManyRequest(resources=[lease.resource for lease in given], value=given[0]._value)
