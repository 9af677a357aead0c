"""A campaign, once for the blocking and the asyncio drivers (no I/O here):
its checked start, its wait to be elected (retried after UNAVAILABLE, as a
Hold's wait is), the leadership's life on the stream, and what leaving
sends and raises (docs/design.md#elections). A campaign is a Hold with a
value: this is ``_session.py``'s twin for the Campaign stream, written as
steps (``_steps.py``) from the stream's opening to its end.

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
from ._lease import lost_at
from ._retry import Clock, retried
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
    for field, given in (("ttl", ttl), ("max_hold", max_hold), ("lock_delay", lock_delay)):
        seconds = v.optional_seconds(given, field)
        if seconds is not None:
            getattr(start, field).CopyFrom(v.to_wire(seconds))
    return start


class LeadershipBase:
    """A leadership won in a campaign: its term (the election lock's fencing
    token, strictly increasing per election), until when it is guaranteed
    (``valid_until``, moved on by every extension), the published value, and
    ``lost`` (a new ``_event()``: the driver's kind of event), set the
    moment it can no longer be guaranteed: with no word from the daemon,
    ``LOST_MARGIN`` before ``valid_until``."""

    __slots__ = ("election", "candidate", "term", "value", "valid_until", "lost", "lost_reason", "_driver", "_lost_at")
    _event: type

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
        #: Set the moment the leadership can no longer be guaranteed: stop.
        self.lost = self._event()
        #: Why, once lost.
        self.lost_reason = ""
        #: The driver's campaign, which proclaims through the stream.
        self._driver = None
        #: When the campaign's watch says it is lost, should no extension come.
        self._lost_at = valid_until

    @property
    def remaining(self) -> float:
        """Seconds left until ``valid_until`` (0 once it has passed)."""
        return max(0.0, self.valid_until - time.monotonic())

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(election={self.election!r}, candidate={self.candidate!r}, "
            f"term={self.term}, remaining={self.remaining:.3f}s{', lost' if self.lost.is_set() else ''})"
        )

    __str__ = __repr__

    def _lose(self, reason: str) -> None:
        if not self.lost.is_set():
            self.lost_reason = reason
            self.lost.set()

    def _valid_for(self, received: float, validity: float) -> None:
        """Valid for ``validity`` from ``received``, when the message saying
        so came."""
        self.valid_until = received + validity
        self._lost_at = lost_at(self.valid_until, validity)

    @classmethod
    def _of(cls: Type[L], start: epb.CampaignStart, elected: epb.CampaignResponse, received: float) -> L:
        """The leadership an ELECTED received at ``received`` gives."""
        leadership = cls(start.election, start.candidate, elected.term, elected.value, received)
        leadership._valid_for(received, v.from_wire(elected.valid_for))
        return leadership


class Candidacy:
    """One candidacy, from its checked start to what leaving raises, as
    steps: ``open`` waits to be elected, ``follow`` takes the stream's
    messages while leading and loses the leadership at its deadline. The
    driver runs both, sends what ``proclaim`` and ``leave`` give, and
    leaves (``left``)."""

    def __init__(self, start: epb.CampaignStart, wait: Optional[float], clock: Clock = time.monotonic):
        self.start = start
        self._wait = wait
        self._clock = clock
        #: The leadership, once elected.
        self.leadership: Optional[LeadershipBase] = None
        #: Set when the client starts resigning (leaving the block).
        self.resigning = False
        #: RESIGNED's reason, once it came.
        self.resigned: Optional[str] = None
        #: Why the stream ended without RESIGNED or LOST, if it did.
        self.ended_because = ""
        self._proclaims: Deque = deque()

    def open(self, kind: Type[L]) -> Steps[L]:
        """Campaigns until elected (a ``kind`` leadership); after ``wait``
        seconds (``None``: no limit) resigns and raises ``NotElected``."""
        if self.leadership is not None:
            raise RuntimeError("a campaign is entered once; call client.campaign() again")

        def attempt(left: float) -> Steps[L]:
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
            self.leadership = kind._of(self.start, message, received)
            return self.leadership

        return retried(attempt, math.inf if self._wait is None else self._wait, self._clock)

    def _withdraw(self) -> Steps[None]:
        """Gives up a candidacy that was not elected in time: resigns, and
        reads on until the daemon confirms (an ELECTED that crossed the
        resignation is followed by RESIGNED), then ends the stream."""
        deadline = self._clock() + RESIGN_TIMEOUT
        try:
            yield Send(epb.CampaignRequest(resign=epb.CampaignResign()))
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

    def follow(self) -> Steps[None]:
        """The leadership's life: takes the daemon's messages until the
        stream ends, looking at ``valid_until`` whenever it passes."""
        try:
            while True:
                got = yield Receive(self.watch(self._clock()))
                if got == TIMED_OUT:
                    continue  # watch() looks at valid_until
                if got == ENDED:
                    self._ended("the daemon ended the campaign")
                    return
                if self.on(*got):
                    return
        except RedlockdError as error:
            self._ended(f"the campaign broke: {error}")

    def on(self, message: epb.CampaignResponse, received: float) -> bool:
        """Takes one message, received at ``received``; ``True`` when the
        campaign is over."""
        leadership = self.leadership
        if message.event == epb.CAMPAIGN_EVENT_EXTENDED:
            if not leadership.lost.is_set():
                leadership._valid_for(received, v.from_wire(message.valid_for))
            return False
        if message.event == epb.CAMPAIGN_EVENT_PROCLAIMED:
            leadership.value = message.value
            if self._proclaims:
                self._proclaims.popleft().set()
            return False
        if message.event == epb.CAMPAIGN_EVENT_LOST:
            self._lose(f"lost: {message.reason}")
            return True
        if message.event == epb.CAMPAIGN_EVENT_RESIGNED:
            self.resigned = message.reason
            if not self.resigning:
                self._lose(f"the daemon ended the leadership: {message.reason}")
            return True
        return False

    def cancelled(self) -> None:
        """The driver stopped following the stream."""
        self._ended("the campaign was cancelled")

    def _ended(self, why: str) -> None:
        if self.resigned is None:
            self.ended_because = why
            if not self.resigning:
                self._lose(why)

    def _lose(self, reason: str) -> None:
        self.leadership._lose(reason)
        while self._proclaims:
            self._proclaims.popleft().set()  # the waiters find it lost

    def watch(self, now: float) -> Optional[float]:
        """Seconds until the leadership is due to be said lost (look again
        then), or ``None`` once it is lost: when ``now`` is ``LOST_MARGIN``
        or less before ``valid_until`` without an extension, this loses it —
        the client's own deadline, told before the validity ends."""
        leadership = self.leadership
        if leadership.lost.is_set():
            return None
        left = leadership._lost_at - now
        if left > 0:
            return left
        self._lose("valid_for ran out before an extension came: the client's own deadline")
        return None

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
        if self.resigning:
            raise RedlockdError("the leadership is resigning: nothing more can be proclaimed")

    def leave(self) -> Optional[epb.CampaignRequest]:
        """Starts resigning: the message to send, then half-close and wait
        for RESIGNED up to ``RESIGN_TIMEOUT``; ``None`` when the leadership
        is lost: cancel the stream (with a ``lock_delay``, the daemon keeps
        the election's lock that much longer: a loss is not a resignation)."""
        self.resigning = True
        return None if self.leadership.lost.is_set() else epb.CampaignRequest(resign=epb.CampaignResign())

    def exit_error(self, answered: bool) -> Optional[RedlockdError]:
        """What leaving the block raises (``answered``: the stream ended
        before ``RESIGN_TIMEOUT``): never silent about a leadership lost."""
        if self.leadership.lost.is_set():
            return LeadershipLost(self.leadership.lost_reason)
        if self.resigned is None:
            why = self.ended_because if answered else f"no answer within {RESIGN_TIMEOUT:g} s"
            return RedlockdError(f"the daemon did not confirm the resignation ({why})")
        return None

    def left(self, answered: bool, cause: Optional[BaseException]) -> bool:
        """Leaving the block: raises ``exit_error`` (chained to what the
        block raised) if there is one; else ``False``."""
        failure = self.exit_error(answered)
        if failure is not None:
            raise failure from cause
        return False
