"""The Election service's unary calls, once for both clients, as steps
(``_steps.py``), and what ``leader()`` and ``observe()`` give: a ``Leader``,
or ``None`` when nobody leads (docs/design.md#elections). Each checks its
arguments at once, before anything is sent, and returns the steps. A term is the election lock's
fencing token: a Python ``int``, exact at any size.

A campaign itself is a stream: ``_leadership.py``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, List, Optional, Union

from . import _validate as v
from ._steps import Call, Steps, T
from .v1 import election_pb2 as epb
from .v1 import lock_pb2 as pb

Value = Union[bytes, str]


@dataclass(frozen=True)
class Leader:
    """Who leads an election, as a majority of the masters agree. A view,
    not a lock: by the time it is read the leadership may have changed;
    only the term, checked by the resource, makes a write safe."""

    #: The leader's candidate name.
    candidate: str
    #: What the leader published (its campaign's value, or a proclaimed one).
    value: bytes
    #: Exactly the term the leader was told in ELECTED.
    term: int
    #: When the term began, on the masters' clocks (UTC).
    since: datetime


def leader_of(reply: epb.LeaderResponse) -> Optional[Leader]:
    """The ``Leader`` a ``LeaderResponse`` names, ``None`` when nobody leads."""
    if not reply.elected:
        return None
    since = reply.since.ToDatetime(tzinfo=timezone.utc)
    return Leader(candidate=reply.candidate, value=reply.value, term=reply.term, since=since)


def leader(election: str) -> Steps[Optional[Leader]]:
    """``Client.leader``."""
    v.election(election)
    return _reply(Call("Leader", epb.LeaderRequest(election=election), service="Election"), leader_of)


def proclaim(election: str, term: int, value: Value) -> Steps[None]:
    """``Client.proclaim``: sets the value of the leader of ``term``."""
    v.election(election)
    request = epb.ProclaimRequest(election=election, term=v.term(term), value=v.election_value(value))
    return _reply(Call("Proclaim", request, service="Election"), lambda _: None)


def resign(election: str, term: int) -> Steps[None]:
    """``Client.resign``: ends the leadership of ``term``."""
    v.election(election)
    request = epb.ResignRequest(election=election, term=v.term(term))
    return _reply(Call("Resign", request, service="Election"), lambda _: None)


def participants(election: str) -> Steps[List[str]]:
    """``Client.participants``: this daemon's candidates, first in line first."""
    v.election(election)
    request = epb.ParticipantsRequest(election=election)
    return _reply(Call("Participants", request, service="Election"), lambda reply: list(reply.candidates))


def _reply(call: Call, convert: Callable[[Any], T]) -> Steps[T]:
    """``call``'s reply, converted (the arguments were checked before)."""
    reply = yield call
    return convert(reply)


def observe_request(election: str) -> epb.ObserveRequest:
    """``Client.observe``'s request, checked."""
    v.election(election)
    return epb.ObserveRequest(election=election)


def watch_request(resource: str) -> pb.WatchRequest:
    """``Client.watch``'s request, checked."""
    v.resource(resource)
    return pb.WatchRequest(resource=resource)
