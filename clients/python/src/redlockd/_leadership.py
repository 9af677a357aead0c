"""A campaign, once for the blocking and the asyncio drivers (no I/O here):
its checked start, its wait to be elected (retried after UNAVAILABLE, as a
Hold's wait is), and what is a campaign's own in the session machine
(``_machine.py``: the leadership's life on the stream, what leaving sends
and raises; docs/design.md#elections): its value, proclaimed on the stream.
A campaign is a Hold with a value.

The leader's rule: count each ELECTED / EXTENDED ``valid_for`` from when
the message arrived, on the monotonic clock; stop leading at LOST or when
it runs out, whichever comes first — the client's own deadline, which
holds even when the daemon falls silent and LOST never comes — and send
the term with every write."""

from __future__ import annotations

import math
import time
from collections import deque
from typing import Deque, Optional, Tuple, Type, TypeVar

from . import _validate as v
from ._election import Value
from ._errors import LeadershipLost, NotElected, RedlockdError
from ._lease import Watched
from ._machine import CLOSED, EXTENDED, LOST, SessionMachine, durations
from ._retry import Clock
from ._steps import ENDED, TIMED_OUT, Cancel, Close, OpenStream, Receive, Send, Steps
from .v1 import election_pb2 as epb

#: How long leaving (or giving up the wait) waits for the daemon to confirm
#: the resignation, and a proclaim for PROCLAIMED.
RESIGN_TIMEOUT = 10.0

L = TypeVar("L", bound="LeadershipBase")


def start_message(election: str, candidate: str, value: Value, ttl, max_hold, lock_delay) -> epb.CampaignStart:
    """The checked ``start`` of a campaign."""
    v.election(election)
    v.candidate(candidate)
    start = epb.CampaignStart(election=election, candidate=candidate, value=v.election_value(value))
    durations(start, ttl, max_hold, lock_delay)
    return start


class LeadershipBase(Watched):
    """A leadership won in a campaign: its term (the election lock's fencing
    token, strictly increasing per election), until when it is guaranteed
    (``valid_until``, moved on by every extension), the published value, and
    ``lost`` (a new ``_event()``: the driver's kind of event), set the
    moment it can no longer be guaranteed: with no word from the daemon,
    ``LOST_MARGIN`` before ``valid_until``."""

    __slots__ = ("election", "candidate", "term", "value", "valid_until", "lost", "lost_reason", "_driver", "_lost_at")

    def __init__(self, election: str, candidate: str, term: int, value: bytes, valid_until: float):
        #: The election and this candidate, as given to ``campaign()``.
        self.election = election
        self.candidate = candidate
        #: The term: send it with every write; exact at any size.
        self.term = term
        #: The value published now (the campaign's, or the last proclaimed).
        self.value = value
        #: A ``time.monotonic()`` deadline: the leadership is guaranteed
        #: until then (counted from when each ELECTED / EXTENDED arrived).
        self.valid_until = valid_until
        #: The driver's campaign, which proclaims through the stream.
        self._driver = None
        self._watched(valid_until)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(election={self.election!r}, candidate={self.candidate!r}, "
            f"term={self.term}, remaining={self.remaining:.3f}s{', lost' if self.lost.is_set() else ''})"
        )

    __str__ = __repr__

    @classmethod
    def _of(cls: Type[L], start: epb.CampaignStart, elected: epb.CampaignResponse, received: float) -> L:
        """The leadership an ELECTED received at ``received`` gives."""
        leadership = cls(start.election, start.candidate, elected.term, elected.value, received)
        leadership._valid_for(received, v.from_wire(elected.valid_for))
        return leadership


class Candidacy(SessionMachine[LeadershipBase]):
    """One candidacy, from its checked start to what leaving raises (the
    machine's, ``_machine.py``): ``open`` waits to be elected on a stream
    of its own, and ``follow`` also takes PROCLAIMED, which ``proclaim``
    waits for."""

    CONFIRM_TIMEOUT = RESIGN_TIMEOUT
    _EVENTS = {epb.CAMPAIGN_EVENT_EXTENDED: EXTENDED, epb.CAMPAIGN_EVENT_LOST: LOST, epb.CAMPAIGN_EVENT_RESIGNED: CLOSED}
    _NOUN = "campaign"
    _ONCE = "a campaign is entered once; call client.campaign() again"
    _LEAVING = "resignation"
    _UNASKED_END = "the daemon ended the leadership"
    _SILENT = "valid_for ran out before an extension came: the client's own deadline"
    _LOST_ERROR = LeadershipLost

    def __init__(self, start: epb.CampaignStart, wait: Optional[float], clock: Clock = time.monotonic):
        super().__init__(math.inf if wait is None else wait, clock)
        self.start = start
        self._proclaims: Deque = deque()

    @property
    def leadership(self) -> Optional[LeadershipBase]:
        """The leadership, once elected."""
        return self.held

    def _attempt(self, kind: Type[L], left: float) -> Steps[L]:
        """Campaigns until elected (a ``kind`` leadership); after ``wait``
        seconds (``None``: no limit) resigns and raises ``NotElected``."""
        yield OpenStream("Campaign", epb.CampaignRequest(start=self.start))
        got = yield Receive(None if math.isinf(left) else left)
        if got == TIMED_OUT:
            yield from self._withdraw()
            raise NotElected(f"not elected within {self._wait:g} s")
        if got == ENDED:
            raise RedlockdError("the daemon ended the campaign before answering")
        message, received = got
        if message.event != epb.CAMPAIGN_EVENT_ELECTED:
            event = epb.CampaignEvent.Name(message.event)
            raise RedlockdError(f"the campaign ended before this candidate led: {event} {message.reason}")
        return kind._of(self.start, message, received)

    def _withdraw(self) -> Steps[None]:
        """Gives up a candidacy that was not elected in time: resigns, and
        reads on until the daemon confirms (an ELECTED that crossed the
        resignation is followed by RESIGNED), then ends the stream."""
        deadline = self._clock() + RESIGN_TIMEOUT
        try:
            yield Send(self._farewell())
            yield Close()
            while True:
                got = yield Receive(max(0.0, deadline - self._clock()))
                if got in (ENDED, TIMED_OUT) or got[0].event not in (
                    epb.CAMPAIGN_EVENT_ELECTED,
                    epb.CAMPAIGN_EVENT_EXTENDED,
                    epb.CAMPAIGN_EVENT_PROCLAIMED,
                ):
                    break
        except RedlockdError:
            pass  # the stream broke: nothing is held either way
        yield Cancel()

    def _validity(self, message: epb.CampaignResponse) -> float:
        return v.from_wire(message.valid_for)

    def _other(self, message: epb.CampaignResponse) -> bool:
        if message.event == epb.CAMPAIGN_EVENT_PROCLAIMED:
            self.held.value = message.value
            if self._proclaims:
                self._proclaims.popleft().set()
        return False

    def _lose(self, reason: str) -> None:
        super()._lose(reason)
        while self._proclaims:
            self._proclaims.popleft().set()  # the waiters find it lost

    def proclaim(self, value: Value) -> Tuple[epb.CampaignRequest, object]:
        """Publishes ``value`` from the leader's stream: the message to send,
        and an event (the leadership's kind) set when PROCLAIMED or a loss
        comes; then ``proclaimed``."""
        request = epb.CampaignRequest(proclaim=epb.CampaignProclaim(value=v.election_value(value)))
        self._check_leading()
        told = self.leadership._event()
        self._proclaims.append(told)
        return request, told

    def proclaimed(self, answered: bool) -> None:
        """After a proclaim's event was set (``answered``) or waited for in
        vain: raises unless the value is published."""
        self._check_leading()
        if not answered:
            raise RedlockdError(f"the daemon did not confirm the proclaim within {RESIGN_TIMEOUT:g} s")

    def _check_leading(self) -> None:
        if self.leadership.lost.is_set():
            raise LeadershipLost(self.leadership.lost_reason)
        if self.leaving:
            raise RedlockdError("the leadership is resigning: nothing more can be proclaimed")

    def _farewell(self) -> epb.CampaignRequest:
        return epb.CampaignRequest(resign=epb.CampaignResign())
