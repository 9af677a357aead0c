"""Client.hold, the blocking Hold session, against a real daemon."""

import os
import signal
import threading
import time

import pytest
from conftest import delete_lock_everywhere, hold_in_a_child

import redlockd


def test_hold_with_a_wait_hands_the_lock_over_in_fifo_order(client, resource):
    order, tokens = [], []

    def waiter(name):
        with client.hold(resource, ttl=5, wait=30) as lease:
            assert isinstance(lease.lost, threading.Event)
            order.append(name)
            tokens.append(lease.fencing_token)

    with client.hold(resource, ttl=5) as holding:
        tokens.append(holding.fencing_token)
        second = threading.Thread(target=waiter, args=("second",))
        second.start()
        time.sleep(0.5)  # orders the two waiters; no timing is asserted
        third = threading.Thread(target=waiter, args=("third",))
        third.start()
        time.sleep(0.5)
        assert order == [], "a waiter entered while the lock was held"
    second.join(30)
    third.join(30)
    assert order == ["second", "third"]
    assert tokens == sorted(tokens) and len(set(tokens)) == 3


def test_a_session_is_released_on_exit_and_when_its_body_raises(client, resource):
    with client.hold(resource, ttl=30) as lease:
        assert not lease.lost.is_set()
    # TTL 30 s: only a release frees it this soon.
    assert client.acquire(resource, ttl=10).release() is True
    with pytest.raises(KeyError):
        with client.hold(resource, ttl=30):
            raise KeyError("the work failed")
    after = client.acquire(resource, ttl=10)
    assert after is not None, "a session whose body raised kept its lock"
    after.release()


def test_hold_raises_not_acquired_when_the_wait_runs_out(client, resource):
    lease = client.acquire(resource, ttl=10)
    started = time.monotonic()
    with pytest.raises(redlockd.NotAcquired) as failed:
        with client.hold(resource, ttl=5, wait=0.5):
            pytest.fail("entered while someone else held the lock")
    assert 0.5 <= time.monotonic() - started < 5
    assert failed.value.reason == "FAILURE_REASON_TAKEN"
    assert set(failed.value.nodes.values()) == {"held by another owner"}, failed.value.nodes
    lease.release()


def test_the_daemon_extends_a_session_and_valid_until_moves_on(client, resource):
    with client.hold(resource, ttl=2) as lease:
        first = lease.valid_until
        assert lease.remaining <= 2
        time.sleep(2.5)  # past the first TTL: only extensions keep it
        assert not lease.lost.is_set(), lease.lost_reason
        assert lease.valid_until > first + 0.5
        assert client.acquire(resource) is None


def test_a_release_by_the_daemon_while_the_block_runs_is_a_loss(client, resource):
    with pytest.raises(redlockd.LockLost, match="max_hold"):
        with client.hold(resource, ttl=5, max_hold=0.5) as lease:
            assert lease.lost.wait(5), "the body was never told"
            assert "max_hold" in lease.lost_reason
            # The body returns normally: leaving still raises.


def test_a_release_that_finds_the_lock_gone_is_reported_not_swallowed(client, resource):
    with pytest.raises(redlockd.LockLost, match="no longer held"):
        with client.hold(resource, ttl=30):
            delete_lock_everywhere(resource)  # as if it had expired meanwhile


def test_a_client_process_killed_with_kill_9_frees_its_lock_at_once(client, resource):
    holder = hold_in_a_child(resource)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert client.acquire(resource, ttl=10) is None
        os.kill(holder.pid, signal.SIGKILL)
        started = time.monotonic()
        lease = client.acquire(resource, ttl=10, wait=10)
        # TTL 30 s: only the daemon seeing the stream break frees it this soon.
        assert lease is not None and time.monotonic() - started < 5
        lease.release()
    finally:
        holder.kill()
        holder.wait()


def test_a_session_is_entered_once(client, resource):
    session = client.hold(resource, ttl=5)
    with session:
        pass
    with pytest.raises(RuntimeError, match="entered once"):
        with session:
            pass
