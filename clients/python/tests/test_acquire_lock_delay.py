"""lock_delay on acquire (docs/design.md#lock-delay): a lease never released
stays on the masters that much past its validity; a release frees it at
once; beyond the daemon's lock.max_lock_delay is refused naming the field.
Through the blocking and the asyncio client alike."""

import asyncio
import time
from datetime import timedelta

import pytest

import redlockd

TTL = 1.0
DELAY = 2.0


def test_an_unreleased_lease_with_a_lock_delay_keeps_others_out_past_its_ttl(client, resource):
    taken = time.monotonic()
    lease = client.acquire(resource, ttl=TTL, lock_delay=DELAY)
    assert lease is not None
    # The validity the daemon reports counts from the TTL alone.
    assert lease.remaining <= TTL
    assert client.acquire(resource, ttl=1, wait=TTL + 0.5) is None, "taken before its ttl and delay ran out"
    other = client.acquire(resource, ttl=1, wait=5)
    waited = time.monotonic() - taken
    assert other is not None
    other.release()
    assert TTL + DELAY - 0.3 <= waited < TTL + DELAY + 1.5, waited


def test_a_release_frees_a_lease_with_a_lock_delay_at_once(client, resource):
    lease = client.acquire(resource, ttl=TTL, lock_delay=timedelta(seconds=30))
    assert lease is not None and lease.release()
    other = client.acquire(resource, ttl=1)
    assert other is not None, "a release waited for the lock delay"
    other.release()


def test_a_lock_delay_beyond_the_daemons_maximum_is_refused_naming_it(client, resource):
    with pytest.raises(redlockd.InvalidArgument, match=r"^invalid lock_delay: 1m 1s is outside the allowed range"):
        client.acquire(resource, lock_delay=61)
    with pytest.raises(redlockd.InvalidArgument, match=r"^invalid lock_delay: -1s 0ns"):
        client.acquire(resource, lock_delay=-1)
    with pytest.raises(redlockd.InvalidArgument, match=r"^invalid lock_delay: must be seconds"):
        client.acquire(resource, lock_delay="2s")


def test_the_asyncio_client_takes_a_lock_delay_too(resource):
    async def run():
        async with redlockd.AsyncClient() as client:
            taken = time.monotonic()
            assert await client.acquire(resource, ttl=TTL, lock_delay=DELAY) is not None
            other = await client.acquire(resource, ttl=1, wait=5)
            waited = time.monotonic() - taken
            assert other is not None
            await other.release()
            assert TTL + DELAY - 0.3 <= waited < TTL + DELAY + 1.5, waited
            with pytest.raises(redlockd.InvalidArgument, match=r"^invalid lock_delay: 1m 1s is outside"):
                await client.acquire(resource, lock_delay=61)

    asyncio.run(run())
