"""Several resources at once: Client.acquire_many (all or none), each member
an ordinary lock, Client.release_many, and the set's checks."""

import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

import redlockd
from redlockd.v1 import lock_pb2 as pb
from redlockd.v1 import lock_pb2_grpc


def members(resource, *names):
    return [f"{resource}/{name}" for name in names]


def assert_free(client, *names):
    """Each name is free: a plain acquire gets it (and gives it back)."""
    for name in names:
        lease = client.acquire(name, ttl=10)
        assert lease is not None, f"{name} is held"
        assert lease.release() is True


def assert_held(client, *names):
    for name in names:
        assert client.acquire(name, ttl=10) is None, f"{name} is free"


def test_a_set_is_granted_sorted_without_repeats_with_one_value_and_a_token_per_member(client, resource):
    a, b, c = members(resource, "a", "b", "c")
    earlier = {}
    for name in (a, b, c):
        lease = client.acquire(name, ttl=10)
        assert lease.release() is True
        earlier[name] = lease.fencing_token
    leases = client.acquire_many([c, a, b, a], ttl=10, owner="pytest-set")
    assert leases is not None, "a free set was refused"
    assert [lease.resource for lease in leases] == [a, b, c], "not sorted, or repeats kept"
    assert all(type(lease) is redlockd.Lease for lease in leases)
    assert len({lease._value for lease in leases}) == 1, "the members hold more than one value"
    # Each member's token is its resource's: above that resource's last one.
    # (Tokens rise per resource, from the counter of its bucket, so members in
    # different buckets may share a value: docs/design.md#the-fencing-token.)
    for lease in leases:
        assert lease.fencing_token > earlier[lease.resource], f"{lease.resource}'s token is below the resource's last one"
    assert all(9 < lease.remaining <= 10 for lease in leases)
    assert all(lease._value not in repr(lease) for lease in leases)
    view = client.inspect(b)
    assert view.held and view.holder.owner == "pytest-set"
    assert list(view.set_members) == [a, b, c]
    assert_held(client, a, b, c)
    assert client.release_many(leases) is True
    assert_free(client, a, b, c)


def test_a_set_with_a_member_held_elsewhere_is_refused_and_holds_none_of_the_others(client, resource):
    a, b, c = members(resource, "a", "b", "c")
    holder = client.acquire(b, ttl=10)
    assert holder is not None
    assert client.acquire_many([a, b, c], ttl=10) is None, "granted while a member is held"
    assert_free(client, a, c)
    # Waiting never holds part of the set: while it waits, its free members
    # stay free; once the held one is released, the whole set is granted.
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(client.acquire_many, [a, b, c], ttl=10, wait=10)
        time.sleep(0.5)
        assert not waiting.done(), "the set did not wait"
        assert_free(client, a, c)
        assert holder.release() is True
        leases = waiting.result(timeout=15)
    assert leases is not None, "the set was not granted after the holder released"
    assert [lease.resource for lease in leases] == [a, b, c]
    assert leases[1].fencing_token > holder.fencing_token
    assert client.release_many(leases) is True


def test_each_member_is_an_ordinary_lock_extended_and_released_on_its_own(client, resource):
    a, b, c = members(resource, "a", "b", "c")
    first, second, third = client.acquire_many([a, b, c], ttl=10)
    assert second.extend(20) is True and 19 < second.remaining <= 20
    assert first.release() is True
    again = client.acquire(a, ttl=10)
    assert again is not None, "releasing one member did not free it"
    assert again.fencing_token > first.fencing_token
    assert again.release() is True
    assert_held(client, b, c)
    assert first.release() is False, "a member released twice"
    with third:  # a member in a with block, as any lease
        assert_held(client, c)
    assert_free(client, c)
    assert second.release() is True
    assert_free(client, b)


def test_release_many_says_false_when_a_member_was_no_longer_held(client, resource):
    a, b = members(resource, "a", "b")
    leases = client.acquire_many([a, b], ttl=10)
    assert leases[0].release() is True
    assert client.release_many(leases) is False
    assert_free(client, a, b)


def test_seventeen_resources_and_bad_members_are_refused_before_sending_in_the_daemons_words(client, resource):
    seventeen = [f"{resource}/{i:02}" for i in range(17)]
    cases = [
        (seventeen, "invalid resources: 17 names; 1 to 16 are allowed"),
        ([f"{resource}/a"] * 17, "invalid resources: 17 names; 1 to 16 are allowed"),
        ([], "invalid resources: 0 names; 1 to 16 are allowed"),
        (
            [f"{resource}/a", ""],
            "invalid resources: [1] is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8",
        ),
        (
            [f"{resource}/a", f"{resource}/b", "tab\there"],
            "invalid resources: [2] contains the control character '\\t'; only printable UTF-8 is allowed",
        ),
    ]
    stub = lock_pb2_grpc.LockStub(client._channel)
    with redlockd.Client("127.0.0.1:1") as nowhere:  # nothing listens: nothing may be sent
        for bad, message in cases:
            with pytest.raises(grpc.RpcError) as daemon:
                stub.AcquireMany(pb.AcquireManyRequest(resources=bad), metadata=client._metadata)
            assert daemon.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert daemon.value.details() == message
            with pytest.raises(redlockd.InvalidArgument) as ours:
                nowhere.acquire_many(bad)
            assert str(ours.value) == message
        with pytest.raises(redlockd.InvalidArgument, match="^invalid resources: must be a list of str, not str$"):
            nowhere.acquire_many("examples/one-name")
        with pytest.raises(redlockd.InvalidArgument, match="^invalid wait: "):
            nowhere.acquire_many(["examples/x"], wait=-1)
        with pytest.raises(redlockd.InvalidArgument, match="^invalid leases: 0 leases; 1 to 16 are allowed$"):
            nowhere.release_many([])
    leases = client.acquire_many(seventeen[:16], ttl=10)
    assert leases is not None and len(leases) == 16, "sixteen names were refused"
    other = client.acquire(f"{resource}/other", ttl=10)
    with pytest.raises(redlockd.InvalidArgument, match="^invalid leases: they hold more than one value"):
        client.release_many([leases[0], other])
    assert client.release_many(leases) is True
    assert other.release() is True
