"""Three of the five masters killed under an open session. Killed masters
stay dead for the rest of that daemon's life, so test.sh runs each test
here against a daemon of its own (``-m kills_masters -k <name>``)."""

import asyncio
import os
import signal
import time

import pytest
from conftest import master_pids
from test_election_faults import Told, check_told_by_the_daemon

import redlockd

pytestmark = pytest.mark.kills_masters


def kill_three_masters():
    for pid in master_pids()[:3]:
        os.kill(pid, signal.SIGKILL)


def check_no_quorum(failure, started, wait):
    assert time.monotonic() - started >= wait * 0.9, "the wait was not retried until it ran out"
    assert failure.needed == 3 and sorted(failure.nodes) == [0, 1, 2, 3, 4], failure.nodes
    assert sum(said == "errored" or said == "timed out" or said == "unusable" for said in failure.nodes.values()) >= 3


def test_blocking_the_lost_signal_fires_before_valid_until(client, resource):
    with pytest.raises(redlockd.LockLost, match="^lost: "):
        with client.hold(resource, ttl=2) as lease:
            kill_three_masters()
            assert lease.lost.wait(10), "never told the lock was lost"
            told = Told(lease)
            # The body ends normally; leaving the block still raises.
    check_told_by_the_daemon(told)
    started = time.monotonic()
    with pytest.raises(redlockd.Unavailable) as failed:
        client.acquire(resource + "-again", ttl=5, wait=1.0)
    check_no_quorum(failed.value, started, 1.0)
    started = time.monotonic()
    with pytest.raises(redlockd.Unavailable) as failed:
        with client.hold(resource + "-session", ttl=5, wait=1.0):
            pytest.fail("held without a quorum")
    check_no_quorum(failed.value, started, 1.0)


def test_async_the_lost_signal_fires_before_valid_until(resource):
    async def run():
        async with redlockd.AsyncClient() as client:
            with pytest.raises(redlockd.LockLost, match="^lost: "):
                async with client.hold(resource, ttl=2) as lease:
                    kill_three_masters()
                    await asyncio.wait_for(lease.lost.wait(), 10)
                    told = Told(lease)
            check_told_by_the_daemon(told)
            started = time.monotonic()
            with pytest.raises(redlockd.Unavailable) as failed:
                await client.acquire(resource + "-again", ttl=5, wait=1.0)
            check_no_quorum(failed.value, started, 1.0)
            started = time.monotonic()
            with pytest.raises(redlockd.Unavailable) as failed:
                async with client.hold(resource + "-session", ttl=5, wait=1.0):
                    pytest.fail("held without a quorum")
            check_no_quorum(failed.value, started, 1.0)

    asyncio.run(run())
