"""The asyncio client against a real daemon."""

import asyncio
import time

import pytest

import redlockd


def run(coroutine):
    return asyncio.run(coroutine)


def test_async_second_holder_refused_and_larger_token_after_release(resource):
    async def scenario():
        async with redlockd.AsyncClient() as client:
            first = await client.acquire(resource, ttl=10)
            assert first is not None
            assert await client.acquire(resource, ttl=10) is None
            assert await first.extend(ttl=10) is True
            assert await first.release() is True
            second = await client.acquire(resource, ttl=10)
            assert second.fencing_token > first.fencing_token
            await second.release()

    run(scenario())


def test_async_hold_hands_over_and_releases_on_exit_and_on_error(resource):
    async def scenario():
        async with redlockd.AsyncClient() as client:
            order = []

            async def waiter(name):
                async with client.hold(resource, ttl=5, wait=30) as lease:
                    assert isinstance(lease.lost, asyncio.Event)
                    order.append((name, lease.fencing_token))

            async with client.hold(resource, ttl=5) as holding:
                first_token = holding.fencing_token
                second = asyncio.ensure_future(waiter("second"))
                await asyncio.sleep(0.5)  # orders the waiters; no timing is asserted
                third = asyncio.ensure_future(waiter("third"))
                await asyncio.sleep(0.5)
            await asyncio.wait_for(asyncio.gather(second, third), 30)
            assert [name for name, _ in order] == ["second", "third"]
            assert first_token < order[0][1] < order[1][1]
            with pytest.raises(ValueError):
                async with client.hold(resource, ttl=30):
                    raise ValueError("the work failed")
            lease = await client.acquire(resource, ttl=10, wait=5)
            assert lease is not None, "a session whose body raised kept its lock"
            await lease.release()
            taken = await client.acquire(resource, ttl=10)
            started = time.monotonic()
            with pytest.raises(redlockd.NotAcquired):
                async with client.hold(resource, ttl=5, wait=0.3):
                    pytest.fail("entered while held")
            assert time.monotonic() - started < 10
            await taken.release()

    run(scenario())
