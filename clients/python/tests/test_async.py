"""The asyncio client (AsyncClient) against a real daemon."""

import asyncio
import os
import signal
import time

import pytest
from conftest import delete_lock_everywhere, hold_in_a_child, raise_fence_counters

import redlockd


def scenario(coroutine_function):
    """Runs the test's coroutine with an AsyncClient, in a fresh event loop."""

    def test(resource):
        async def run():
            async with redlockd.AsyncClient() as client:
                await coroutine_function(client, resource)

        asyncio.run(run())

    test.__name__ = coroutine_function.__name__
    return test


@scenario
async def test_a_second_holder_is_refused_and_the_next_one_gets_a_larger_token(client, resource):
    first = await client.acquire(resource, ttl=10)
    assert first is not None and repr(first).count(first._value) == 0
    assert await client.acquire(resource, ttl=10) is None
    assert await first.extend() is True and 9 < first.remaining <= 10
    assert await first.release() is True
    async with await client.acquire(resource, ttl=10) as second:
        assert second.fencing_token > first.fencing_token
    assert await client.acquire(resource) is not None, "async with did not release"


@scenario
async def test_an_expired_lease_released_in_async_with_raises_lock_lost(client, resource):
    with pytest.raises(redlockd.LockLost):
        async with await client.acquire(resource, ttl=0.3) as lease:
            await asyncio.sleep(lease.remaining + 0.3)


@scenario
async def test_hold_hands_over_in_fifo_order_and_releases_on_exit_and_on_error(client, resource):
    order = []

    async def waiter(name):
        async with client.hold(resource, ttl=5, wait=30) as lease:
            assert isinstance(lease.lost, asyncio.Event)
            order.append((name, lease.fencing_token))

    async with client.hold(resource, ttl=5) as holding:
        second = asyncio.ensure_future(waiter("second"))
        await asyncio.sleep(0.5)  # orders the waiters; no timing is asserted
        third = asyncio.ensure_future(waiter("third"))
        await asyncio.sleep(0.5)
        assert order == []
    await asyncio.wait_for(asyncio.gather(second, third), 30)
    assert [name for name, _ in order] == ["second", "third"]
    assert holding.fencing_token < order[0][1] < order[1][1]
    with pytest.raises(ValueError):
        async with client.hold(resource, ttl=30):
            raise ValueError("the work failed")
    lease = await client.acquire(resource, ttl=10)
    assert lease is not None, "a session whose body raised kept its lock"
    with pytest.raises(redlockd.NotAcquired):
        async with client.hold(resource, ttl=5, wait=0.3):
            pytest.fail("entered while held")
    await lease.release()


@scenario
async def test_cancelling_a_waiting_hold_gives_up_the_wait(client, resource):
    holder = await client.acquire(resource, ttl=10)

    async def wait_for_it():
        async with client.hold(resource, ttl=5, wait=30):
            pytest.fail("a cancelled waiter got the lock")

    waiting = asyncio.ensure_future(wait_for_it())
    await asyncio.sleep(0.5)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.sleep(0.2)  # the daemon drops the cancelled waiter
    assert await holder.release() is True
    # Had the waiter stayed queued, the lock would have gone to it.
    lease = await client.acquire(resource, ttl=5, wait=2)
    assert lease is not None
    await lease.release()


@scenario
async def test_a_release_by_the_daemon_while_the_block_runs_is_a_loss(client, resource):
    with pytest.raises(redlockd.LockLost, match="max_hold"):
        async with client.hold(resource, ttl=5, max_hold=0.5) as lease:
            await asyncio.wait_for(lease.lost.wait(), 5)


@scenario
async def test_a_release_that_finds_the_lock_gone_is_reported(client, resource):
    with pytest.raises(redlockd.LockLost, match="no longer held"):
        async with client.hold(resource, ttl=30):
            delete_lock_everywhere(resource)


@scenario
async def test_the_daemon_extends_a_session(client, resource):
    async with client.hold(resource, ttl=2) as lease:
        first = lease.valid_until
        await asyncio.sleep(2.5)
        assert not lease.lost.is_set(), lease.lost_reason
        assert lease.valid_until > first + 0.5


@scenario
async def test_a_client_process_killed_with_kill_9_frees_its_lock_at_once(client, resource):
    holder = hold_in_a_child(resource, use_async=True)
    try:
        line = await asyncio.get_running_loop().run_in_executor(None, holder.stdout.readline)
        assert line.strip() == "held"
        assert await client.acquire(resource, ttl=10) is None
        os.kill(holder.pid, signal.SIGKILL)
        started = time.monotonic()
        lease = await client.acquire(resource, ttl=10, wait=10)
        assert lease is not None and time.monotonic() - started < 5
        await lease.release()
    finally:
        holder.kill()
        holder.wait()


@scenario
async def test_tokens_above_two_to_the_53_are_kept_exact(client, resource):
    counter = raise_fence_counters()
    async with client.hold(resource, ttl=5) as lease:
        assert lease.fencing_token > 2**53 and lease.fencing_token // 16 == counter + 1


@scenario
async def test_bad_arguments_fail_before_anything_is_sent(client, resource):
    async with redlockd.AsyncClient("127.0.0.1:1") as nowhere:
        with pytest.raises(redlockd.InvalidArgument, match="^invalid resource: is 0 bytes long"):
            await nowhere.acquire("")
        with pytest.raises(redlockd.InvalidArgument, match="^invalid ttl: -1s 0ns"):
            nowhere.hold(resource, ttl=-1)
        started = time.monotonic()
        with pytest.raises(redlockd.Unavailable):
            async with nowhere.hold(resource, wait=0.6):
                pass
        assert time.monotonic() - started >= 0.6, "the wait was not retried"


@scenario
async def test_shared_leases_and_sessions_hold_together_and_a_writer_after_them_gets_a_larger_token(client, resource):
    readers = await asyncio.gather(*(client.acquire(resource, ttl=10, shared=True) for _ in range(2)))
    assert all(r is not None and r.shared for r in readers), "a second shared acquire was refused"
    async with client.hold(resource, ttl=5, wait=0, shared=True) as session:
        assert session.shared
        assert (await client.inspect(resource)).readers == 3
        assert await client.acquire(resource, ttl=10) is None, "an exclusive lock was granted beside readers"
    assert all([await r.release() for r in readers])
    async with await client.acquire(resource, ttl=10) as writer:
        assert not writer.shared
        assert writer.fencing_token > max(r.fencing_token for r in [*readers, session])


@scenario
async def test_async_permits_take_two_slots_refuse_a_third_and_refuse_another_number(client, resource):
    first, second = await asyncio.gather(*(client.acquire(resource, ttl=10, permits=2) for _ in range(2)))
    assert first is not None and second is not None, "the second of two permits was refused"
    assert {first.slot, second.slot} == {0, 1} and first.permits == 2
    assert await client.acquire(resource, ttl=10, permits=2) is None, "a third permit of two was granted"
    with pytest.raises(redlockd.FailedPrecondition):
        await client.acquire(resource, ttl=10, permits=3)
    assert await second.release() is True
    async with client.hold(resource, ttl=5, wait=0, permits=2) as third:
        assert third.slot == second.slot and third.fencing_token > second.fencing_token
    assert await first.release() is True


@scenario
async def test_async_acquires_with_one_reentrancy_key_share_the_lock_until_the_last_release(client, resource):
    outer = await client.acquire(resource, ttl=10, reentrancy_key="async-job")
    inner = await client.acquire(resource, ttl=10, reentrancy_key="async-job")
    assert outer is not None and inner is not None, "the same key was refused the lock it holds"
    assert inner.fencing_token == outer.fencing_token
    assert await inner.release() is True
    assert await client.acquire(resource, ttl=10) is None, "released at the first of two releases"
    assert await outer.release() is True
    async with await client.acquire(resource, ttl=10) as after:
        assert after.fencing_token > outer.fencing_token


@scenario
async def test_async_a_set_is_all_or_none_and_each_member_is_released_on_its_own(client, resource):
    a, b, c, d = (f"{resource}/{name}" for name in "abcd")
    leases = await client.acquire_many([c, a, b, a], ttl=10)
    assert leases is not None and [lease.resource for lease in leases] == [a, b, c]
    assert all(type(lease) is redlockd.AsyncLease for lease in leases)
    # One value; a token per member, each rising per resource (checked as each
    # member is taken again below; members in different buckets may share one).
    assert len({lease._value for lease in leases}) == 1 and all(lease.fencing_token > 0 for lease in leases)
    assert await client.acquire_many([d, b]) is None, "granted while a member is held"
    free = await client.acquire(d, ttl=10)
    assert free is not None, "a refused set kept a member"
    assert await free.release() is True
    assert await leases[0].release() is True
    async with await client.acquire(a, ttl=10) as again:
        assert again.fencing_token > leases[0].fencing_token
    assert await client.acquire(b, ttl=10) is None, "releasing one member freed another"
    assert await leases[1].extend() is True
    assert await client.release_many(leases[1:]) is True
    for member in leases[1:]:
        async with await client.acquire(member.resource, ttl=10) as again:
            assert again.fencing_token > member.fencing_token
    with pytest.raises(redlockd.InvalidArgument, match="^invalid resources: 17 names; 1 to 16 are allowed$"):
        await client.acquire_many([f"{resource}/{i}" for i in range(17)])
