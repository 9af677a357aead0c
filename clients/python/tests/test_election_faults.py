"""A leadership when three of the five masters die (the daemon says LOST
before ``valid_until``), and when the daemon itself freezes (SIGSTOP: no
LOST ever comes, and the client stops leading on its own deadline). Each
test needs a daemon of its own: test.sh runs them one by one."""

import asyncio
import os
import signal
import time
from contextlib import contextmanager

import pytest
from conftest import daemon_pid, master_pids

import redlockd

TTL = 2.0


def kill_three_masters():
    for pid in master_pids()[:3]:
        os.kill(pid, signal.SIGKILL)


@contextmanager
def frozen_daemon():
    """The daemon stopped with SIGSTOP for the block, then continued (so
    that with-dev-daemon can stop it)."""
    os.kill(daemon_pid(), signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(daemon_pid(), signal.SIGCONT)


class Told:
    """When a holder was told, with its ``valid_until`` and reason then:
    taken inside the block and checked after it, since leaving the block
    of a lost lease raises ``LockLost``, which would replace (and hide) an
    assertion failed inside it."""

    def __init__(self, held):
        self.at = time.monotonic()
        self.valid_until = held.valid_until
        self.lost_reason = held.lost_reason


def check_told_by_the_daemon(told):
    print(f"told {(told.valid_until - told.at) * 1000:.1f} ms before valid_until ({told.lost_reason})")
    assert told.at < told.valid_until, f"told {told.at - told.valid_until:.3f} s after valid_until"
    assert told.lost_reason.startswith("lost: "), told.lost_reason


#: The client's margin (redlockd._lease.LOST_MARGIN): with no word from the
#: daemon, the holder is told this long before valid_until.
MARGIN = 0.1


def check_own_deadline(told, frozen_at, reason="the client's own deadline"):
    # Told before valid_until (the last extension's), and not earlier than
    # the margin: by the client's own watch, while it is still valid.
    early = told.valid_until - told.at
    print(f"told {early * 1000:.1f} ms before valid_until, {(told.at - frozen_at) * 1000:.0f} ms after the freeze")
    assert 0 < early <= MARGIN, f"told {early * 1000:.1f} ms before valid_until"
    assert told.at - frozen_at <= TTL
    assert reason in told.lost_reason, told.lost_reason


@pytest.mark.kills_masters
def test_blocking_a_leadership_is_lost_before_valid_until_when_three_masters_die(client, election):
    with pytest.raises(redlockd.LeadershipLost, match="^lost: "):
        with client.campaign(election, candidate="pod-1", ttl=TTL) as leadership:
            kill_three_masters()
            assert leadership.lost.wait(10), "never told the leadership was lost"
            told = Told(leadership)
    check_told_by_the_daemon(told)
    # Without a quorum the daemon campaigns on; the wait runs out.
    with pytest.raises(redlockd.NotElected):
        with client.campaign(election + "-again", candidate="pod-1", wait=1.0):
            pytest.fail("elected without a quorum")
    with pytest.raises(redlockd.Unavailable) as failed:
        client.leader(election)
    assert "3 are needed for a quorum" in str(failed.value), failed.value


@pytest.mark.kills_masters
def test_async_a_leadership_is_lost_before_valid_until_when_three_masters_die(election):
    async def run():
        async with redlockd.AsyncClient() as client:
            with pytest.raises(redlockd.LeadershipLost, match="^lost: "):
                async with client.campaign(election, candidate="pod-1", ttl=TTL) as leadership:
                    kill_three_masters()
                    await asyncio.wait_for(leadership.lost.wait(), 10)
                    told = Told(leadership)
            check_told_by_the_daemon(told)

    asyncio.run(run())


@pytest.mark.freezes_daemon
def test_blocking_a_frozen_daemon_and_the_client_stops_leading_on_its_own_deadline(client, election):
    with pytest.raises(redlockd.LeadershipLost, match="own deadline"):
        with client.campaign(election, candidate="pod-1", ttl=TTL) as leadership:
            time.sleep(TTL / 2)  # an extension or two came
            with frozen_daemon():
                frozen_at = time.monotonic()
                assert leadership.lost.wait(TTL + 5), "still leading with a frozen daemon"
                told = Told(leadership)
    check_own_deadline(told, frozen_at)


@pytest.mark.freezes_daemon
def test_async_a_frozen_daemon_and_the_client_stops_leading_on_its_own_deadline(election):
    async def run():
        async with redlockd.AsyncClient() as client:
            with pytest.raises(redlockd.LeadershipLost, match="own deadline"):
                async with client.campaign(election, candidate="pod-1", ttl=TTL) as leadership:
                    await asyncio.sleep(TTL / 2)
                    with frozen_daemon():
                        frozen_at = time.monotonic()
                        await asyncio.wait_for(leadership.lost.wait(), TTL + 5)
                        told = Told(leadership)
            check_own_deadline(told, frozen_at)

    asyncio.run(run())
