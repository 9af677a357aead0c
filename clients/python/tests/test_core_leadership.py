"""The campaign's core (``redlockd._leadership``) and the Election calls'
(``redlockd._election``), stepped by hand on a fake monotonic clock with
no daemon and no stream: the start, the wait to be elected, what each
message does to the leadership, the client's own deadline, what leaving
sends and raises. (The same against a real daemon: test_elections.py,
test_async_elections.py, test_election_faults.py.)"""

import asyncio
import threading
from datetime import timedelta

import pytest

import redlockd
from redlockd import _election as elections
from redlockd._aio_campaign import AsyncLeadership
from redlockd._campaign import Leadership
from redlockd._leadership import RESIGN_TIMEOUT, Candidacy, start_message
from redlockd._retry import FIRST_PAUSE
from redlockd._steps import ENDED, TIMED_OUT, Call, Cancel, Close, OpenStream, Pause, Receive, Send
from redlockd.v1 import election_pb2 as epb

BIG_TERM = 2**63 + 11  # above 2^53: must stay exact


class FakeClock:
    def __init__(self, now=2000.0):
        self.now = now

    def __call__(self):
        return self.now


def said(event, valid_for=3.0, **fields):
    return epb.CampaignResponse(event=event, valid_for=timedelta(seconds=valid_for), **fields)


def elected(clock, kind=Leadership, wait=None, valid_for=3.0):
    """A candidacy elected by an ELECTED that arrives 0.25 s after the start."""
    candidacy = Candidacy(start_message("jobs", "pod-1", b"addr", 2, None, None), wait, clock)
    steps = candidacy.open(kind)
    assert next(steps) == OpenStream("Campaign", epb.CampaignRequest(start=candidacy.start))
    receive = steps.send(None)
    assert receive == Receive(None if wait is None else wait)
    clock.now += 0.25
    with pytest.raises(StopIteration) as done:
        steps.send((said(epb.CAMPAIGN_EVENT_ELECTED, valid_for, term=BIG_TERM, value=b"addr"), clock.now))
    assert done.value.value is candidacy.leadership
    return candidacy


def test_elected_gives_the_exact_term_and_valid_for_counts_from_arrival():
    clock = FakeClock()
    candidacy = elected(clock)
    leadership = candidacy.leadership
    assert isinstance(leadership.lost, threading.Event) and leadership.term == BIG_TERM
    assert (leadership.election, leadership.candidate, leadership.value) == ("jobs", "pod-1", b"addr")
    assert leadership.valid_until == 2000.25 + 3.0
    assert candidacy.on(said(epb.CAMPAIGN_EVENT_EXTENDED, 2.0, term=BIG_TERM), received=2001.0) is False
    assert leadership.valid_until == 2003.0, "counted from when the EXTENDED arrived"
    assert str(BIG_TERM) in repr(leadership) and "addr" not in repr(leadership)


def test_the_start_is_checked_and_carries_every_duration():
    start = start_message("jobs", "pod-1", "héllo", timedelta(seconds=2), 60, 1.5)
    assert start.value == "héllo".encode()
    assert (start.ttl.ToTimedelta(), start.max_hold.ToTimedelta(), start.lock_delay.ToTimedelta()) == (
        timedelta(seconds=2),
        timedelta(seconds=60),
        timedelta(seconds=1.5),
    )
    assert not start_message("jobs", "pod-1", b"", None, None, None).HasField("ttl")
    for args, message in [
        (("", "pod-1", b"", 2, None, None), "^invalid election: is 0 bytes long; it must be 1 to 256 bytes"),
        (("jobs", "", b"", 2, None, None), "^invalid candidate: is 0 bytes long"),
        (("jobs", "p\n", b"", 2, None, None), r"^invalid candidate: contains the control character '\\n'"),
        (("jobs", "pod-1", b"x" * 4097, 2, None, None), "^invalid value: is 4097 bytes long; at most 4096"),
        (("jobs", "pod-1", 7, 2, None, None), "^invalid value: must be bytes or a str, not int"),
        (("jobs", "pod-1", b"", 2, None, -1), "^invalid lock_delay: -1s 0ns is not a valid non-negative"),
    ]:
        with pytest.raises(redlockd.InvalidArgument, match=message):
            start_message(*args)


def test_a_wait_that_runs_out_resigns_reads_until_confirmed_and_raises_not_elected():
    clock = FakeClock()
    candidacy = Candidacy(start_message("jobs", "pod-1", b"", 2, None, None), 1.5, clock)
    steps = candidacy.open(Leadership)
    next(steps)
    assert steps.send(None) == Receive(1.5)
    clock.now += 1.5
    assert steps.send(TIMED_OUT) == Send(epb.CampaignRequest(resign=epb.CampaignResign()))
    assert steps.send(None) == Close()
    assert steps.send(None) == Receive(RESIGN_TIMEOUT)
    # An ELECTED that crossed the resignation: read on until RESIGNED.
    assert isinstance(steps.send((said(epb.CAMPAIGN_EVENT_ELECTED, term=5), clock.now)), Receive)
    assert steps.send((said(epb.CAMPAIGN_EVENT_RESIGNED, reason="asked"), clock.now)) == Cancel()
    with pytest.raises(redlockd.NotElected, match="^not elected within 1.5 s$") as failed:
        steps.send(None)
    assert isinstance(failed.value, redlockd.NotAcquired)
    assert candidacy.leadership is None


def test_unavailable_is_retried_until_the_wait_runs_out_and_no_wait_means_no_limit():
    clock = FakeClock()
    candidacy = Candidacy(start_message("jobs", "pod-1", b"", 2, None, None), None, clock)
    steps = candidacy.open(AsyncLeadership)
    next(steps)
    assert steps.send(None) == Receive(None)
    pause = steps.throw(redlockd.Unavailable("no quorum"))
    assert isinstance(pause, Pause) and FIRST_PAUSE / 2 <= pause.seconds <= FIRST_PAUSE
    clock.now += 3600
    assert isinstance(steps.send(None), OpenStream), "a campaign without a wait tries again, however long"
    candidacy = Candidacy(start_message("jobs", "pod-1", b"", 2, None, None), 1.0, clock)
    steps = candidacy.open(AsyncLeadership)
    next(steps)
    steps.send(None)
    steps.throw(redlockd.Unavailable("no quorum"))
    clock.now += 0.5
    next(steps)
    assert steps.send(None) == Receive(pytest.approx(0.5))
    clock.now += 1.0
    with pytest.raises(redlockd.Unavailable):
        steps.throw(redlockd.Unavailable("no quorum"))


def test_a_stream_that_ends_before_elected_is_an_error():
    candidacy = Candidacy(start_message("jobs", "pod-1", b"", 2, None, None), None, FakeClock())
    steps = candidacy.open(Leadership)
    next(steps)
    steps.send(None)
    with pytest.raises(redlockd.RedlockdError, match="ended the campaign before answering"):
        steps.send(ENDED)


def test_the_clients_own_deadline_loses_the_leadership_when_the_daemon_falls_silent():
    clock = FakeClock()
    candidacy = elected(clock, AsyncLeadership, valid_for=2.0)
    leadership = candidacy.leadership
    assert isinstance(leadership.lost, asyncio.Event)
    follow = candidacy.follow()
    # Told 100 ms (LOST_MARGIN) before valid_until, by the client's own watch.
    assert next(follow) == Receive(pytest.approx(1.9))
    clock.now += 1.0
    assert follow.send(TIMED_OUT) == Receive(pytest.approx(0.9)), "early: looks again then"
    clock.now += 0.9
    # The margin before valid_until reached: lost, and the stream is still read (no limit).
    assert follow.send(TIMED_OUT) == Receive(None)
    assert leadership.lost.is_set() and "the client's own deadline" in leadership.lost_reason
    late = said(epb.CAMPAIGN_EVENT_EXTENDED, 3.0)
    assert follow.send((late, clock.now)) == Receive(None)
    assert leadership.valid_until == 2002.25, "a late EXTENDED does not revive a lost leadership"
    assert candidacy.leave() is None, "a lost leadership is not resigned: the stream is cancelled"
    with pytest.raises(redlockd.LeadershipLost, match="own deadline") as failed:
        candidacy.left(answered=True, cause=None)
    assert isinstance(failed.value, redlockd.LockLost)


@pytest.mark.parametrize(
    "event, reason, lost",
    [
        (epb.CAMPAIGN_EVENT_LOST, "taken over", "lost: taken over"),
        (epb.CAMPAIGN_EVENT_RESIGNED, "max_hold used up", "the daemon ended the leadership: max_hold used up"),
    ],
)
def test_lost_and_a_resignation_the_client_did_not_ask_for_are_losses(event, reason, lost):
    clock = FakeClock()
    candidacy = elected(clock)
    follow = candidacy.follow()
    next(follow)
    with pytest.raises(StopIteration):
        follow.send((said(event, reason=reason), clock.now))
    assert candidacy.leadership.lost_reason == lost
    candidacy._ended("the daemon ended the campaign")
    assert candidacy.leadership.lost_reason == lost, "the first reason is kept"


def test_leaving_resigns_and_raises_only_when_unconfirmed():
    clock = FakeClock()
    candidacy = elected(clock)
    assert candidacy.leave() == epb.CampaignRequest(resign=epb.CampaignResign())
    assert candidacy.on(said(epb.CAMPAIGN_EVENT_RESIGNED, reason="asked"), clock.now) is True
    assert not candidacy.leadership.lost.is_set()
    assert candidacy.left(answered=True, cause=KeyError("the body failed")) is False

    candidacy = elected(clock)
    candidacy.leave()
    failure = candidacy.exit_error(answered=False)
    assert str(failure) == f"the daemon did not confirm the resignation (no answer within {RESIGN_TIMEOUT:g} s)"
    follow = candidacy.follow()
    next(follow)
    with pytest.raises(StopIteration):
        follow.throw(redlockd.RedlockdError("CANCELLED: cancelled"))
    assert not candidacy.leadership.lost.is_set(), "a stream ended while resigning is no loss"


def test_a_proclaim_waits_for_proclaimed_in_order_and_a_loss_wakes_it():
    clock = FakeClock()
    candidacy = elected(clock)
    request, first = candidacy.proclaim("v1")
    assert request == epb.CampaignRequest(proclaim=epb.CampaignProclaim(value=b"v1"))
    _, second = candidacy.proclaim(b"v2")
    candidacy.on(said(epb.CAMPAIGN_EVENT_PROCLAIMED, value=b"v1"), clock.now)
    assert first.is_set() and not second.is_set() and candidacy.leadership.value == b"v1"
    candidacy.proclaimed(answered=True)
    candidacy.on(said(epb.CAMPAIGN_EVENT_LOST, reason="expired"), clock.now)
    assert second.is_set()
    with pytest.raises(redlockd.LeadershipLost, match="lost: expired"):
        candidacy.proclaimed(answered=True)
    with pytest.raises(redlockd.LeadershipLost):
        candidacy.proclaim(b"v3")
    with pytest.raises(redlockd.InvalidArgument, match="^invalid value: is 5000 bytes"):
        elected(clock).proclaim(b"x" * 5000)


def test_a_campaign_is_entered_once():
    candidacy = elected(FakeClock())
    with pytest.raises(RuntimeError, match="entered once"):
        candidacy.open(Leadership)


def test_the_unary_calls_check_first_and_name_the_election_service():
    steps = elections.proclaim("jobs", BIG_TERM, "v")
    proclaim = epb.ProclaimRequest(election="jobs", term=BIG_TERM, value=b"v")
    assert next(steps) == Call("Proclaim", proclaim, 0.0, "Election")
    steps = elections.leader("jobs")
    assert next(steps).service == "Election"
    since = epb.LeaderResponse(elected=True, candidate="pod-1", value=b"a", term=BIG_TERM)
    since.since.FromSeconds(1_800_000_000)
    with pytest.raises(StopIteration) as done:
        steps.send(since)
    leader = done.value.value
    assert (leader.candidate, leader.value, leader.term, leader.since.year) == ("pod-1", b"a", BIG_TERM, 2027)
    assert elections.leader_of(epb.LeaderResponse(elected=False, term=3)) is None
    with pytest.raises(redlockd.InvalidArgument, match="^invalid term: must be set: the term ELECTED or Leader gave"):
        elections.resign("jobs", 0)
    with pytest.raises(redlockd.InvalidArgument, match=r"^invalid term: 18446744073709551616 is not a term"):
        elections.resign("jobs", 2**64)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid term: must be an int, not str"):
        elections.proclaim("jobs", "7", b"")
    with pytest.raises(redlockd.InvalidArgument, match="^invalid election: is 257 bytes long"):
        elections.participants("x" * 257)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid resource: is 0 bytes long"):
        elections.watch_request("")
