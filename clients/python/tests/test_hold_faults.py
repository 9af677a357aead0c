"""A Hold session whose daemon freezes (SIGSTOP: no LOST ever comes): the
holder is told by the client's own watch, before ``valid_until``. Each test
needs a daemon of its own: test.sh runs them one by one."""

import asyncio
import time

import pytest
from test_election_faults import TTL, Told, check_own_deadline, frozen_daemon

import redlockd

SILENT = "no extension came from the daemon"


@pytest.mark.freezes_daemon
def test_blocking_a_frozen_daemon_and_the_holder_is_told_before_its_own_deadline(client, resource):
    with pytest.raises(redlockd.LockLost, match=SILENT):
        with client.hold(resource, ttl=TTL) as lease:
            time.sleep(TTL / 2)  # an extension or two came
            with frozen_daemon():
                frozen_at = time.monotonic()
                assert lease.lost.wait(TTL + 5), "still holding with a frozen daemon"
                told = Told(lease)
    check_own_deadline(told, frozen_at, SILENT)


@pytest.mark.freezes_daemon
def test_async_a_frozen_daemon_and_the_holder_is_told_before_its_own_deadline(resource):
    async def run():
        async with redlockd.AsyncClient() as client:
            with pytest.raises(redlockd.LockLost, match=SILENT):
                async with client.hold(resource, ttl=TTL) as lease:
                    await asyncio.sleep(TTL / 2)
                    with frozen_daemon():
                        frozen_at = time.monotonic()
                        await asyncio.wait_for(lease.lost.wait(), TTL + 5)
                        told = Told(lease)
            check_own_deadline(told, frozen_at, SILENT)

    asyncio.run(run())
