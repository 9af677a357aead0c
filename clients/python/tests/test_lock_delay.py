"""lock_delay on hold and campaign (docs/design.md#lock-delay): a holder
that dies keeps its lock that much longer; a release frees it at once."""

import os
import signal
import subprocess
import sys
import time

from conftest import campaign_in_a_child

DELAY = 2.0


def hold_with_a_delay_in_a_child(resource):
    body = (
        "import time, redlockd\n"
        f"with redlockd.Client().hold({resource!r}, ttl=30, lock_delay={DELAY}):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(60)\n"
    )
    return subprocess.Popen([sys.executable, "-c", body], stdout=subprocess.PIPE, text=True)


def killed_then_waited_for(child, take):
    """Kills ``child`` once it holds; how long ``take()`` then waited."""
    try:
        assert child.stdout.readline().split()[0] in ("held", "elected")
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        started = time.monotonic()
        take()
        return time.monotonic() - started
    finally:
        child.kill()
        child.wait()


def test_a_killed_hold_with_a_lock_delay_keeps_the_lock_that_long(client, resource):
    def take():
        lease = client.acquire(resource, ttl=10, wait=10)
        assert lease is not None and lease.release()

    waited = killed_then_waited_for(hold_with_a_delay_in_a_child(resource), take)
    # TTL 30 s: not the TTL either; the delay, counted from the stream's end.
    assert DELAY - 0.5 <= waited < DELAY + 3, waited


def test_a_release_frees_a_lock_with_a_delay_at_once(client, resource):
    with client.hold(resource, ttl=30, lock_delay=30):
        pass
    lease = client.acquire(resource, ttl=10)
    assert lease is not None, "a release waited for the lock delay"
    lease.release()
    with client.campaign(resource, candidate="pod-1", lock_delay=30):
        pass
    with client.campaign(resource, candidate="pod-2", wait=1):
        pass


def test_a_killed_leader_with_a_lock_delay_keeps_the_election_that_long(client, election):
    def take():
        with client.campaign(election, candidate="pod-1", wait=10):
            pass

    waited = killed_then_waited_for(campaign_in_a_child(election, "pod-child", lock_delay=DELAY), take)
    assert DELAY - 0.5 <= waited < DELAY + 3, waited
