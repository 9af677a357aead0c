"""Client.acquire, Lease.extend and Lease.release against a real daemon, and
the checks made before anything is sent."""

import math
import time
from datetime import timedelta

import grpc
import pytest
from conftest import raise_fence_counters

import redlockd
from redlockd.v1 import lock_pb2 as pb
from redlockd.v1 import lock_pb2_grpc


def test_a_second_holder_is_refused_and_the_next_one_gets_a_larger_token(client, resource):
    first = client.acquire(resource, ttl=10)
    assert first is not None and first.resource == resource
    assert client.acquire(resource, ttl=10) is None, "two holders"
    assert 9 < first.remaining <= 10
    assert first.release() is True
    second = client.acquire(resource, ttl=10)
    assert second is not None and second.fencing_token > first.fencing_token
    assert second.release() is True


def test_a_lease_never_shows_its_value(client, resource):
    lease = client.acquire(resource, ttl=10)
    shown = repr(lease) + str(lease) + f"{lease}"
    assert len(lease._value) == 40 and lease._value not in shown
    assert str(lease.fencing_token) in shown and resource in shown
    lease.release()


def test_extend_moves_valid_until_on_with_the_ttl_the_lease_was_taken_with(client, resource):
    lease = client.acquire(resource, ttl=1)
    time.sleep(0.3)
    before = lease.valid_until
    assert lease.extend() is True
    assert before < lease.valid_until <= time.monotonic() + 1, "not the TTL it was taken with"
    assert lease.extend(timedelta(seconds=20)) is True
    assert 19 < lease.remaining <= 20
    assert lease.release() is True
    assert lease.extend(5) is False, "a released lease was extended"


def test_a_release_after_the_lock_expired_says_false_and_a_with_block_raises_lock_lost(client, resource):
    lease = client.acquire(resource, ttl=0.3)
    time.sleep(lease.remaining + 0.3)
    assert lease.release() is False
    with pytest.raises(redlockd.LockLost):
        with client.acquire(resource, ttl=0.3) as lease:
            time.sleep(lease.remaining + 0.3)
    with client.acquire(resource, ttl=10) as lease:
        assert client.acquire(resource) is None
    assert client.acquire(resource, ttl=10) is not None, "the with block did not release"


def test_tokens_above_two_to_the_53_are_kept_exact(client, resource):
    counter = raise_fence_counters()
    lease = client.acquire(resource, ttl=10)
    # (counter + 1) * 16 + the index of the first master that answered.
    assert lease.fencing_token > 2**53
    assert lease.fencing_token // 16 == counter + 1 and lease.fencing_token % 16 < 5
    lease.release()


def test_a_wait_that_finds_no_daemon_is_retried_until_it_runs_out(resource):
    # Nothing listens on port 1: every try is UNAVAILABLE.
    with redlockd.Client("127.0.0.1:1") as nowhere:
        started = time.monotonic()
        with pytest.raises(redlockd.Unavailable) as failed:
            nowhere.acquire(resource, wait=0.8)
        assert 0.8 <= time.monotonic() - started < 3, "the wait was not retried until it ran out"
        assert failed.value.nodes == {}
        started = time.monotonic()
        with pytest.raises(redlockd.Unavailable):
            nowhere.acquire(resource)
        assert time.monotonic() - started < 0.5, "wait=0 was retried"


BAD = [
    # (keyword arguments, the message the client and the daemon both give)
    (dict(resource=""), "invalid resource: is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8"),
    (dict(resource="é" * 129), "invalid resource: is 258 bytes long; it must be 1 to 256 bytes of printable UTF-8"),
    (dict(resource="a\nb"), "invalid resource: contains the control character '\\n'; only printable UTF-8 is allowed"),
    (
        dict(resource="a\x1bb"),
        "invalid resource: contains the control character '\\u{1b}'; only printable UTF-8 is allowed",
    ),
    (dict(owner="o" * 257), "invalid owner: is 257 bytes long; it must be 0 to 256 bytes of printable UTF-8"),
    (
        dict(ttl=-1.5),
        "invalid ttl: -1s -500000000ns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)",
    ),
    (dict(wait=-2), "invalid wait: -2s 0ns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)"),
]


@pytest.mark.parametrize("bad,message", BAD)
def test_bad_arguments_fail_before_sending_in_the_daemons_words(bad, message):
    args = dict(resource="examples/ok", ttl=10, wait=0, owner="")
    args.update(bad)
    # What the daemon says to the same request, sent around the client.
    request = pb.AcquireRequest(resource=args["resource"], owner=args["owner"])
    request.ttl.FromNanoseconds(int(args["ttl"] * 1e9))
    request.wait.FromNanoseconds(int(args["wait"] * 1e9))
    with redlockd.Client() as client, pytest.raises(grpc.RpcError) as daemon:
        lock_pb2_grpc.LockStub(client._channel).Acquire(request, metadata=client._metadata)
    assert daemon.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert daemon.value.details() == message
    # The client says it without sending: nothing listens on port 1.
    with redlockd.Client("127.0.0.1:1") as nowhere:
        with pytest.raises(redlockd.InvalidArgument) as client_said:
            nowhere.acquire(**args)
        assert str(client_said.value) == message
        with pytest.raises(redlockd.InvalidArgument) as session_said:
            nowhere.hold(**args)
        assert str(session_said.value) == message


def test_durations_that_are_not_durations_are_refused_naming_the_field():
    with redlockd.Client("127.0.0.1:1") as nowhere:
        for ttl in (math.nan, math.inf, "10", True):
            with pytest.raises(redlockd.InvalidArgument, match="^invalid ttl: "):
                nowhere.acquire("examples/x", ttl=ttl)
        with pytest.raises(redlockd.InvalidArgument, match="^invalid max_hold: "):
            nowhere.hold("examples/x", max_hold=-1)
        with pytest.raises(redlockd.InvalidArgument, match="^invalid token: "):
            redlockd.Client("127.0.0.1:1", token="bad\ntoken")


def test_a_ttl_outside_the_daemons_range_is_its_invalid_argument(client, resource):
    for ttl, shown in ((0.001, "1ms"), (0, "0s"), (61, "1m 1s")):
        with pytest.raises(redlockd.InvalidArgument) as failed:
            client.acquire(resource, ttl=ttl)
        assert str(failed.value) == f"invalid ttl: {shown} is outside the allowed range [250ms, 1m]"
    with pytest.raises(redlockd.InvalidArgument, match="^invalid wait: 1m 1s is above the allowed maximum of 1m$"):
        client.acquire(resource, wait=61)


def test_inspect_shows_the_quorum_the_holder_and_never_the_value(client, resource):
    lease = client.acquire(resource, ttl=10, owner="pytest")
    view = client.inspect(resource)
    assert view.held and view.agreeing == 5 and view.quorum == 3
    # Who holds it, as a majority of the masters recorded it.
    assert view.holder.owner == "pytest" and view.holder.daemon
    assert view.holder.fencing_token >= lease.fencing_token
    assert view.holder.since.seconds > 0 and view.holder.ttl.seconds <= 10
    assert lease._value not in str(view)
    lease.release()
    assert not client.inspect(resource).held


def test_the_client_refuses_no_resource_the_daemon_takes(client, resource):
    # Printable to the daemon (not a control character), though Python's
    # str.isprintable() says otherwise for some of them.
    for odd in ("zero\u200bwidth", "no\u00a0break", "emoji \U0001f512", "x" * 200):
        name = f"{resource}/{odd}"[:256]
        lease = client.acquire(name, ttl=5)
        assert lease is not None and lease.resource == name
        assert lease.release() is True


def test_shared_leases_hold_together_and_a_writer_after_them_gets_a_larger_token(client, resource):
    readers = [client.acquire(resource, ttl=10, shared=True) for _ in range(2)]
    assert all(r is not None for r in readers), "a second shared acquire was refused"
    assert all(r.shared for r in readers)
    # A shared lease's value is the daemon's "r" + 40 hex digits, never shown.
    assert all(r._value.startswith("r") and r._value not in repr(r) for r in readers)
    assert "shared=True" in repr(readers[0])
    view = client.inspect(resource)
    assert view.held and view.readers == 2
    assert client.acquire(resource, ttl=10) is None, "an exclusive lock was granted beside two readers"
    assert all(r.release() is True for r in readers)
    writer = client.acquire(resource, ttl=10)
    assert writer is not None and not writer.shared
    assert writer.fencing_token > max(r.fencing_token for r in readers)
    assert writer.release() is True


def test_shared_hold_sessions_hold_together_and_keep_a_writer_out(client, resource):
    with client.hold(resource, ttl=5, shared=True) as first, client.hold(resource, ttl=5, wait=0, shared=True) as second:
        assert first.shared and second.shared
        assert client.acquire(resource, ttl=10) is None, "an exclusive lock was granted beside two shared sessions"
    writer = client.acquire(resource, ttl=10)
    assert writer is not None and writer.fencing_token > max(first.fencing_token, second.fencing_token)
    assert writer.release() is True


def test_shared_must_be_a_bool():
    with redlockd.Client("127.0.0.1:1") as nowhere:
        for bad in (1, "yes", None):
            with pytest.raises(redlockd.InvalidArgument, match="^invalid shared: must be a bool"):
                nowhere.acquire("examples/x", shared=bad)
            with pytest.raises(redlockd.InvalidArgument, match="^invalid shared: must be a bool"):
                nowhere.hold("examples/x", shared=bad)


def test_permits_of_two_take_two_slots_refuse_a_third_and_refuse_another_number(client, resource):
    first = client.acquire(resource, ttl=10, permits=2)
    second = client.acquire(resource, ttl=10, permits=2)
    assert first is not None and second is not None, "the second of two permits was refused"
    assert (first.permits, second.permits) == (2, 2)
    assert {first.slot, second.slot} == {0, 1}, "two permits on one slot"
    assert f"slot={first.slot} of permits=2" in repr(first) and first._value not in repr(first)
    view = client.inspect(resource)
    assert (view.permits, view.permits_out) == (2, 2)
    assert client.acquire(resource, ttl=10, permits=2) is None, "a third permit of two was granted"
    with pytest.raises(redlockd.FailedPrecondition, match="2 permits") as other_number:
        client.acquire(resource, ttl=10, permits=3)
    assert other_number.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert first.release() is True
    third = client.acquire(resource, ttl=10, permits=2)
    assert third is not None and third.slot == first.slot, "the freed permit was not handed out"
    # Tokens increase per slot: the third permit is fenced above the first.
    assert third.fencing_token > first.fencing_token
    assert second.release() is True and third.release() is True


def test_permit_sessions_take_two_slots_and_a_third_is_not_acquired(client, resource):
    with client.hold(resource, ttl=5, permits=2) as first, client.hold(resource, ttl=5, wait=0, permits=2) as second:
        assert {first.slot, second.slot} == {0, 1} and first.permits == second.permits == 2
        with pytest.raises(redlockd.NotAcquired):
            with client.hold(resource, ttl=5, wait=0, permits=2):
                pass
        with pytest.raises(redlockd.FailedPrecondition):
            client.acquire(resource, ttl=5, permits=3)
    lease = client.acquire(resource, ttl=5, permits=2)
    assert lease is not None and lease.release() is True


def test_acquires_with_one_reentrancy_key_share_the_lock_until_the_last_release(client, resource):
    key = f"job-{resource}"
    outer = client.acquire(resource, ttl=10, reentrancy_key=key)
    inner = client.acquire(resource, ttl=10, reentrancy_key=key)
    assert outer is not None and inner is not None, "the same key was refused the lock it holds"
    assert inner.fencing_token == outer.fencing_token and inner._value == outer._value
    assert key not in repr(inner)
    assert client.acquire(resource, ttl=10) is None, "granted without the key while held twice"
    assert client.acquire(resource, ttl=10, reentrancy_key="another job") is None, "granted to another key"
    assert inner.release() is True
    assert client.inspect(resource).held, "released at the first of two releases"
    assert client.acquire(resource, ttl=10) is None, "granted without the key while held once"
    assert outer.release() is True
    after = client.acquire(resource, ttl=10)
    assert after is not None, "still held after both releases"
    assert after.fencing_token > outer.fencing_token
    assert after.release() is True


def test_a_session_with_a_reentrancy_key_is_one_hold_of_its_lock(client, resource):
    with client.hold(resource, ttl=5, reentrancy_key="session-key") as session:
        lease = client.acquire(resource, ttl=10, reentrancy_key="session-key")
        assert lease is not None and lease.fencing_token == session.fencing_token
        assert lease.release() is True
        assert client.acquire(resource, ttl=10) is None, "the session's hold was given back by another's release"
    after = client.acquire(resource, ttl=10)
    assert after is not None and after.release() is True


def test_permits_and_reentrancy_keys_are_checked_before_sending():
    with redlockd.Client("127.0.0.1:1") as nowhere:
        for call in (nowhere.acquire, nowhere.hold):
            for bad in (-1, 2**32, 1.5, "2", True):
                with pytest.raises(redlockd.InvalidArgument, match="^invalid permits: "):
                    call("examples/x", permits=bad)
            with pytest.raises(redlockd.InvalidArgument, match="^invalid permits: a shared lock takes no permits"):
                call("examples/x", permits=2, shared=True)
            with pytest.raises(redlockd.InvalidArgument) as too_long:
                call("examples/x", reentrancy_key="é" * 64 + "k")
            assert str(too_long.value) == "invalid reentrancy_key: is 129 bytes; at most 128 are allowed"
            for bad in (None, 7, "\ud800"):
                with pytest.raises(redlockd.InvalidArgument, match="^invalid reentrancy_key: "):
                    call("examples/x", reentrancy_key=bad)
