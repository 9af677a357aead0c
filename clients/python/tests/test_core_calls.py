"""The unary operations' core (``redlockd._calls``), stepped by hand on a
fake monotonic clock with no daemon: the requests they build, the client
rule (validity counts from the send), retries after UNAVAILABLE, and the
checks made before anything is sent. Then the two drivers' loop
(``redlockd._drivers``) over a scripted transport. (The same operations
against a real daemon: test_locking.py, test_sets.py, test_async.py.)"""

import asyncio
from datetime import timedelta

import pytest
from google.protobuf.duration_pb2 import Duration

import redlockd
from redlockd import _calls as calls
from redlockd._drivers import run, run_async
from redlockd._retry import FIRST_PAUSE, MAX_PAUSE
from redlockd._steps import Call, Pause
from redlockd.v1 import lock_pb2 as pb

CLIENT = object()  # what a lease keeps to call through; the core only hands it on


class FakeClock:
    def __init__(self, now=500.0):
        self.now = now

    def __call__(self):
        return self.now


def wire(resource="jobs/a", value="v" * 40, token=41, validity=4.0, **fields):
    return pb.Lease(resource=resource, value=value, fencing_token=token, validity=timedelta(seconds=validity), **fields)


def acquire(clock, resource="jobs/a", ttl=10, wait=0, owner="", shared=False, permits=0, key="", lock_delay=None):
    return calls.acquire(CLIENT, redlockd.Lease, resource, ttl, wait, owner, shared, permits, key, clock, lock_delay)


def test_acquire_builds_the_request_and_counts_validity_from_the_send():
    clock = FakeClock()
    steps = acquire(clock, ttl=timedelta(seconds=3), wait=2.5, owner="me", permits=4, key="job-1", lock_delay=1.5)
    call = next(steps)
    assert call.method == "Acquire" and call.wait == 2.5
    assert call.request == pb.AcquireRequest(
        resource="jobs/a",
        owner="me",
        ttl=timedelta(seconds=3),
        wait=timedelta(seconds=2.5),
        permits=4,
        reentrancy_key="job-1",
        lock_delay=timedelta(seconds=1.5),
    )
    clock.now += 1.0  # the reply comes a second after the send
    reply = pb.AcquireResponse(acquired=True, lease=wire(validity=2.9, permits=4, slot=3))
    with pytest.raises(StopIteration) as done:
        steps.send(reply)
    lease = done.value.value
    assert type(lease) is redlockd.Lease and lease._client is CLIENT
    assert lease.valid_until == 500.0 + 2.9, "counted from the reply, not the send"
    assert (lease.fencing_token, lease.permits, lease.slot, lease.shared, lease._ttl) == (41, 4, 3, False, 3.0)


def test_acquire_sends_no_ttl_for_the_daemons_default_and_no_wait_for_none():
    steps = acquire(FakeClock(), ttl=None, shared=True)
    call = next(steps)
    assert not call.request.HasField("ttl") and not call.request.HasField("wait") and call.wait == 0
    assert not call.request.HasField("lock_delay")
    assert call.request.mode == pb.LOCK_MODE_SHARED
    with pytest.raises(StopIteration) as done:
        steps.send(pb.AcquireResponse(acquired=False, reason=pb.FAILURE_REASON_TAKEN))
    assert done.value.value is None, "contention is a value"


def test_unavailable_is_retried_with_jittered_pauses_until_the_wait_runs_out():
    clock = FakeClock()
    steps = acquire(clock, wait=1.0)
    assert next(steps).wait == 1.0, "the first try sends the caller's own wait"
    pauses = []
    while True:
        try:
            step = steps.throw(redlockd.Unavailable("2 of 5 masters answered", {0: "granted"}, 3))
        except redlockd.Unavailable as failed:
            assert failed.needed == 3 and failed.nodes == {0: "granted"}
            break
        assert isinstance(step, Pause)
        pauses.append(step.seconds)
        clock.now += step.seconds
        call = steps.send(None)
        assert call.wait == pytest.approx(500.0 + 1.0 - clock.now)
    # Each pause is jittered in [cap/2, cap], the cap doubling from 50 ms up
    # to 1 s; the last is cut to end at the deadline.
    caps = [min(FIRST_PAUSE * 2**i, MAX_PAUSE) for i in range(len(pauses))]
    assert all(cap / 2 <= pause <= cap for pause, cap in zip(pauses[:-1], caps)), pauses
    assert len(pauses) >= 4 and pauses[-1] <= caps[-1]
    assert clock.now == pytest.approx(501.0), "the last pause ends at the deadline"


def test_no_wait_means_no_retry_and_other_errors_are_never_retried():
    steps = acquire(FakeClock())
    next(steps)
    with pytest.raises(redlockd.Unavailable):
        steps.throw(redlockd.Unavailable("no quorum"))
    steps = acquire(FakeClock(), wait=30)
    next(steps)
    with pytest.raises(redlockd.FailedPrecondition):
        steps.throw(redlockd.FailedPrecondition("permits of another number are out"))


def test_extend_keeps_the_ttl_the_lease_was_taken_with_and_moves_valid_until_from_the_send():
    clock = FakeClock()
    lease = redlockd.Lease(CLIENT, "jobs/a", "v" * 40, 41, 501.0, 7.0)
    steps = calls.extend(lease, None, clock)
    call = next(steps)
    assert call == Call("Extend", pb.ExtendRequest(resource="jobs/a", value="v" * 40, ttl=timedelta(seconds=7)))
    clock.now += 3.0
    with pytest.raises(StopIteration) as done:
        steps.send(pb.ExtendResponse(extended=True, validity=timedelta(seconds=6.5)))
    assert done.value.value is True and lease.valid_until == 506.5
    steps = calls.extend(lease, timedelta(seconds=1), clock)
    assert next(steps).request.ttl.ToTimedelta() == timedelta(seconds=1)
    with pytest.raises(StopIteration) as done:
        steps.send(pb.ExtendResponse(extended=False))
    assert done.value.value is False and lease.valid_until == 506.5, "a refused extension moved valid_until"


def test_a_set_is_taken_with_one_request_and_released_only_as_leases_of_one_value():
    clock = FakeClock()
    steps = calls.acquire_many(CLIENT, redlockd.AsyncLease, ("b", "a"), 10, 0, "me", clock)
    assert next(steps).request == pb.AcquireManyRequest(resources=["b", "a"], owner="me", ttl=timedelta(seconds=10))
    clock.now += 0.2
    reply = pb.AcquireManyResponse(acquired=True, leases=[wire("a", token=3), wire("b", token=9)])
    with pytest.raises(StopIteration) as done:
        steps.send(reply)
    a, b = done.value.value
    assert type(a) is redlockd.AsyncLease and (a.resource, a.fencing_token, b.fencing_token) == ("a", 3, 9)
    assert a.valid_until == b.valid_until == 504.0

    release = next(calls.release_many([a, b], redlockd.AsyncLease))
    assert release == Call("ReleaseMany", pb.ReleaseManyRequest(resources=["a", "b"], value="v" * 40))
    other = redlockd.AsyncLease(CLIENT, "c", "w" * 40, 1, 0.0, None)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid leases: they hold more than one value"):
        calls.release_many([a, other], redlockd.AsyncLease)
    with pytest.raises(
        redlockd.InvalidArgument, match="^invalid leases: must be AsyncLeases .from acquire_many., not Lease$"
    ):
        calls.release_many([redlockd.Lease(CLIENT, "a", "v" * 40, 3, 0.0, None)], redlockd.AsyncLease)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid leases: must be a list of Lease, not Lease$"):
        calls.release_many(redlockd.Lease(CLIENT, "a", "v" * 40, 3, 0.0, None), redlockd.Lease)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid leases: 0 leases; 1 to 16 are allowed$"):
        calls.release_many([], redlockd.Lease)


def test_a_released_lease_asks_the_daemon_nothing_more():
    lease = redlockd.Lease(CLIENT, "a", "v" * 40, 3, 500.0, 10)
    steps = calls.release(lease)
    assert next(steps) == Call("Release", pb.ReleaseRequest(resource="a", value="v" * 40))
    for again in (calls.release(lease), calls.extend(lease, None)):
        with pytest.raises(StopIteration) as done:
            next(again)
        assert done.value.value is False, "a released lease asked the daemon again"
    member = redlockd.Lease(CLIENT, "b", "v" * 40, 3, 500.0, 10)
    next(calls.release_many([member], redlockd.Lease))
    with pytest.raises(StopIteration) as done:
        next(calls.release(member))
    assert done.value.value is False, "a lease given to release_many was released again"


def test_extend_many_extends_a_set_in_one_request_and_moves_the_extended_leases_on():
    clock = FakeClock()
    a, b, c = (redlockd.Lease(CLIENT, name, "v" * 40, 3, 500.0, 10) for name in "abc")
    steps = calls.extend_many([a, c], redlockd.Lease, None, clock)
    request = pb.ExtendManyRequest(resources=["a", "c"], value="v" * 40, ttl=timedelta(seconds=10))
    assert next(steps) == Call("ExtendMany", request), "not the set's own TTL, or not one request"
    clock.now += 0.5
    with pytest.raises(StopIteration) as done:
        steps.send(pb.ExtendManyResponse(extended=False, members=[True, False], validity=timedelta(seconds=9)))
    assert done.value.value is False
    assert (a.valid_until, b.valid_until, c.valid_until) == (509.0, 500.0, 500.0), "only the extended lease moves on"
    assert next(calls.extend_many([b], redlockd.Lease, 2.5)).request.ttl == Duration(seconds=2, nanos=500_000_000)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid leases: .* extend_many takes leases of one acquire_many$"):
        calls.extend_many([a, redlockd.Lease(CLIENT, "d", "w" * 40, 1, 0.0, None)], redlockd.Lease, None)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid ttl: -1s 0ns is not a valid non-negative duration"):
        calls.extend_many([a], redlockd.Lease, -1)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid leases: 17 leases; 1 to 16 are allowed$"):
        calls.extend_many([a] * 17, redlockd.Lease, None)


@pytest.mark.parametrize(
    "args, message",
    [
        (dict(resource=""), "^invalid resource: is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8$"),
        (dict(resource="a\nb"), r"^invalid resource: contains the control character '\\n'; only printable"),
        (dict(resource="a\x7f"), r"^invalid resource: contains the control character '\\u\{7f\}'"),
        (dict(owner="o" * 257), "^invalid owner: is 257 bytes long; it must be 0 to 256 bytes"),
        (dict(ttl=-1.5), r"^invalid ttl: -1s -500000000ns is not a valid non-negative duration"),
        (dict(ttl=float("nan")), "^invalid ttl: nan is not a duration a request can carry"),
        (dict(wait=True), "^invalid wait: must be seconds .an int or a float. or a datetime.timedelta, not bool$"),
        (dict(permits=-1), r"^invalid permits: -1 is not a number of permits"),
        (dict(shared=1), "^invalid shared: must be a bool, not int$"),
        (dict(key="k" * 129), "^invalid reentrancy_key: is 129 bytes; at most 128 are allowed$"),
    ],
)
def test_bad_arguments_are_refused_before_any_step_naming_the_field(args, message):
    with pytest.raises(redlockd.InvalidArgument, match=message):
        acquire(FakeClock(), **args)


def test_a_set_of_names_is_checked_member_by_member():
    with pytest.raises(redlockd.InvalidArgument, match=r"^invalid resources: \[1\] is 0 bytes long"):
        calls.acquire_many(CLIENT, redlockd.Lease, ["a", ""], 10, 0, "", FakeClock())
    with pytest.raises(redlockd.InvalidArgument, match="^invalid resources: must be a list of str, not str$"):
        calls.acquire_many(CLIENT, redlockd.Lease, "ab", 10, 0, "", FakeClock())
    with pytest.raises(redlockd.InvalidArgument, match="^invalid resources: 17 names; 1 to 16 are allowed$"):
        calls.acquire_many(CLIENT, redlockd.Lease, [str(i) for i in range(17)], 10, 0, "", FakeClock())


class ScriptedTransport:
    """Answers each call with the next of ``answers`` (raising an error)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []

    def __call__(self, call):
        self.calls.append(call)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_the_blocking_driver_pauses_retries_and_hands_on_what_the_operation_does_not_handle():
    granted = pb.AcquireResponse(acquired=True, lease=wire())
    transport = ScriptedTransport(redlockd.Unavailable("no quorum"), granted)
    lease = run(calls.acquire(CLIENT, redlockd.Lease, "jobs/a", 10, 0.3, "", False, 0, ""), transport)
    assert lease.fencing_token == 41 and [c.method for c in transport.calls] == ["Acquire", "Acquire"]
    assert 0 < transport.calls[1].wait < 0.3
    denied = ScriptedTransport(redlockd.PermissionDenied("not your prefix"))
    with pytest.raises(redlockd.PermissionDenied, match="not your prefix"):
        run(calls.inspect("jobs/a"), denied)


def test_the_asyncio_driver_runs_the_same_steps():
    async def perform(call):
        assert call == Call("Release", pb.ReleaseRequest(resource="jobs/a", value="v" * 40))
        return pb.ReleaseResponse(released=True)

    lease = redlockd.AsyncLease(CLIENT, "jobs/a", "v" * 40, 41, 0.0, None)
    assert asyncio.run(run_async(calls.release(lease), perform)) is True
