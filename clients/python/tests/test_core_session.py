"""The Hold session's core (``redlockd._session``) on a fake monotonic
clock, with no daemon and no stream: what each message does to the lease,
when the lease is lost, what leaving sends and raises. (The same session
against a real daemon: test_sessions.py, test_async.py.)"""

import asyncio
import threading
from datetime import timedelta

import pytest

import redlockd
from redlockd._lease import AsyncHeldLease, HeldLease
from redlockd._retry import FIRST_PAUSE
from redlockd._session import RELEASE_TIMEOUT, Session, first_request, opening, start_message
from redlockd._steps import ENDED, TIMED_OUT, OpenSession, OpenStream, Pause, Receive
from redlockd.v1 import lock_pb2 as pb


class FakeClock:
    """A monotonic clock that moves only when told."""

    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def message(event, validity=5.0, **fields):
    lease = pb.Lease(resource="jobs/a", value="v" * 40, fencing_token=2**60 + 7, validity=timedelta(seconds=validity))
    return pb.HoldResponse(event=event, lease=lease, **fields)


def opened_session(clock, kind=HeldLease, validity=5.0):
    """A session opened at ``clock.now`` by an ACQUIRED that arrives 0.5 s
    after the start was sent."""
    start, wait = start_message("jobs/a", 2, 3, "", None)
    session = Session(start, wait, clock)
    steps = session.open(kind)
    step = next(steps)
    assert isinstance(step, OpenSession) and step.wait == 3
    clock.now += 0.5
    with pytest.raises(StopIteration) as done:
        steps.send(message(pb.HOLD_EVENT_ACQUIRED, validity))
    assert done.value.value is session.lease
    return session


def test_validity_counts_from_when_each_message_arrived():
    clock = FakeClock()
    session = opened_session(clock)
    lease = session.lease
    assert isinstance(lease.lost, threading.Event) and lease.fencing_token == 2**60 + 7
    assert lease.valid_until == 1000.5 + 5.0, "the first message: counted from its arrival"
    clock.now = 1004.0
    assert session.on(message(pb.HOLD_EVENT_EXTENDED, 2.0), received=1003.0) is False
    assert lease.valid_until == 1005.0, "an extension: counted from when it was received, not processed"
    assert not lease.lost.is_set()


def test_the_start_carries_what_is_left_of_the_wait_and_the_first_try_the_callers_own():
    clock = FakeClock()
    start, wait = start_message("jobs/a", timedelta(seconds=2), 3, "me", 60, permits=3, reentrancy_key="k")
    steps = Session(start, wait, clock).open(HeldLease)
    first = next(steps)
    assert first.request.start.wait.ToTimedelta() == timedelta(seconds=3)
    assert first.request.start.ttl.ToTimedelta() == timedelta(seconds=2)
    assert first.request.start.max_hold.ToTimedelta() == timedelta(seconds=60)
    assert (first.request.start.owner, first.request.start.permits, first.request.start.reentrancy_key) == (
        "me",
        3,
        "k",
    )
    pause = steps.throw(redlockd.Unavailable("no quorum"))
    assert isinstance(pause, Pause) and FIRST_PAUSE / 2 <= pause.seconds <= FIRST_PAUSE
    clock.now += 1.0
    again = steps.send(None)
    assert isinstance(again, OpenSession) and again.wait == pytest.approx(2.0)
    assert again.request.start.wait.ToTimedelta() == timedelta(seconds=2)
    assert not start.HasField("wait"), "the checked start was changed"
    clock.now += 2.0
    with pytest.raises(redlockd.Unavailable, match="no quorum"):
        steps.throw(redlockd.Unavailable("no quorum"))


def test_not_acquired_says_why_and_what_each_master_said():
    session = Session(*start_message("jobs/a", 2, 0, "", None), FakeClock())
    steps = session.open(AsyncHeldLease)
    next(steps)
    refused = pb.HoldResponse(event=pb.HOLD_EVENT_NOT_ACQUIRED, reason="FAILURE_REASON_TAKEN", nodes=[2, 2, 3, 1, 9])
    with pytest.raises(redlockd.NotAcquired) as failed:
        steps.send(refused)
    assert failed.value.reason == "FAILURE_REASON_TAKEN"
    assert failed.value.nodes == {
        0: "held by another owner",
        1: "held by another owner",
        2: "timed out",
        3: "granted",
        4: "outcome 9",
    }
    assert session.lease is None
    steps = session.open(AsyncHeldLease)  # a session that was not entered may be tried again
    next(steps)
    with pytest.raises(redlockd.RedlockdError, match="ended the session before answering"):
        steps.send(None)


def test_a_session_is_opened_once_and_its_lease_is_the_drivers_kind():
    session = opened_session(FakeClock(), AsyncHeldLease)
    assert isinstance(session.lease.lost, asyncio.Event)
    with pytest.raises(RuntimeError, match="entered once"):
        session.open(AsyncHeldLease)  # at once, before any step


def test_a_silent_daemon_loses_the_lease_the_margin_before_valid_until():
    clock = FakeClock()
    session = opened_session(clock, validity=2.0)
    assert session.lease.valid_until == pytest.approx(1002.5)
    # Told 100 ms (LOST_MARGIN) before valid_until, by the client's own watch.
    assert session.watch(1001.0) == pytest.approx(1.4)
    assert session.watch(1002.39) == pytest.approx(0.01)
    assert not session.lease.lost.is_set()
    assert session.watch(1002.4) is None
    assert session.lease.lost.is_set() and "no extension" in session.lease.lost_reason
    assert session.leave() is None, "a lost lease has nothing to release: the stream is cancelled"
    failure = session.exit_error(answered=True)
    assert isinstance(failure, redlockd.LockLost) and "no extension" in str(failure)


def test_a_short_validity_is_said_lost_a_quarter_of_it_early():
    clock = FakeClock()
    session = opened_session(clock, validity=0.2)
    assert session.watch(1000.5) == pytest.approx(0.15)


def test_lost_is_a_loss_and_the_first_reason_is_kept():
    clock = FakeClock()
    session = opened_session(clock)
    assert session.on(message(pb.HOLD_EVENT_LOST, reason="taken over"), received=1001.0) is True
    assert session.lease.lost_reason == "lost: taken over"
    session.stream_ended()
    assert session.lease.lost_reason == "lost: taken over", "a later reason replaced the first"
    assert session.watch(1001.0) is None
    assert session.leave() is None


@pytest.mark.parametrize(
    "releasing, held_to_end, raised",
    [
        (False, True, "the daemon released the lock while it was in use: max_hold used up"),
        (True, True, None),
        (True, False, "released, but a majority of the masters no longer held the lock"),
    ],
)
def test_released_is_a_loss_unless_the_client_was_leaving_and_leaving_raises_unless_held_to_end(
    releasing, held_to_end, raised
):
    clock = FakeClock()
    session = opened_session(clock)
    if releasing:
        assert session.leave() == pb.HoldRequest(release=pb.HoldRelease())
    released = message(pb.HOLD_EVENT_RELEASED, reason="max_hold used up", held_to_end=held_to_end)
    assert session.on(released, received=clock.now) is True
    assert session.lease.lost.is_set() is not releasing, "our own release is no loss; the daemon's is"
    body_error = KeyError("the work failed")
    if raised is None:
        assert session.left(answered=True, cause=body_error) is False
        return
    with pytest.raises(redlockd.LockLost) as failed:
        session.left(answered=True, cause=body_error)
    assert str(failed.value) == raised and failed.value.__cause__ is body_error


def test_a_stream_that_ends_or_breaks_is_a_loss_before_the_release_and_unconfirmed_after_it():
    clock = FakeClock()
    session = opened_session(clock)
    session.stream_broke(redlockd.Unavailable("connection reset"))
    assert session.lease.lost_reason == "the session broke: connection reset"

    session = opened_session(clock)
    session.leave()
    session.stream_ended()
    assert not session.lease.lost.is_set()
    failure = session.exit_error(answered=True)
    assert type(failure) is redlockd.RedlockdError
    assert str(failure) == "the daemon did not confirm the release (the daemon ended the session)"

    session = opened_session(clock)
    session.leave()
    assert str(session.exit_error(answered=False)) == (
        f"the daemon did not confirm the release (no answer within {RELEASE_TIMEOUT:g} s)"
    )


def test_a_cancelled_follower_loses_an_unreleased_lease():
    session = opened_session(FakeClock())
    session.cancelled()
    assert session.lease.lost_reason == "the session was cancelled"


def test_the_start_is_checked_before_anything_is_sent():
    with pytest.raises(redlockd.InvalidArgument, match=r"^invalid max_hold: -1s 0ns is not a valid non-negative"):
        start_message("jobs/a", 2, 0, "", -1)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid wait: must be seconds"):
        start_message("jobs/a", 2, "5", "", None)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid permits: a shared lock takes no permits"):
        start_message("jobs/a", 2, 0, "", None, shared=True, permits=2)


def test_a_late_extension_does_not_move_a_lost_lease():
    clock = FakeClock()
    session = opened_session(clock, validity=2.0)
    assert session.watch(1002.4) is None and session.lease.lost.is_set()
    assert session.on(message(pb.HOLD_EVENT_EXTENDED, 5.0), received=1002.5) is False
    assert session.lease.valid_until == pytest.approx(1002.5), "a lost lease came back to life"


def test_a_driver_opens_a_session_on_its_stream_and_gives_up_after_the_wait_and_its_slack():
    start, wait = start_message("jobs/a", 2, 3, "", None)
    step = OpenSession(first_request(start, wait), wait)
    steps = opening(step, slack=0.5)
    assert next(steps) == OpenStream("Hold", step.request)
    assert steps.send(None) == Receive(3.5)
    acquired = message(pb.HOLD_EVENT_ACQUIRED)
    with pytest.raises(StopIteration) as done:
        steps.send((acquired, 1000.0))
    assert done.value.value is acquired
    steps = opening(step, slack=0.5)
    next(steps)
    steps.send(None)
    with pytest.raises(StopIteration) as done:
        steps.send(ENDED)
    assert done.value.value is None, "a stream that ended without a word"
    steps = opening(step, slack=0.5)
    next(steps)
    steps.send(None)
    with pytest.raises(redlockd.DeadlineExceeded, match="within 3.5 s"):
        steps.send(TIMED_OUT)
