"""The blocking client against a real daemon."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import redlockd
from conftest import master_pids, master_ports


def test_a_second_holder_is_refused_and_the_next_one_gets_a_larger_token(client, resource):
    first = client.acquire(resource, ttl=10)
    assert first is not None
    assert client.acquire(resource, ttl=10) is None, "two holders"
    token = first.fencing_token
    assert first.valid_until > time.monotonic()
    assert first.release() is True
    second = client.acquire(resource, ttl=10)
    assert second is not None and second.fencing_token > token
    second.release()


def test_a_lease_never_shows_its_value(client, resource):
    lease = client.acquire(resource, ttl=10)
    shown = repr(lease) + str(lease)
    assert lease._value not in shown and str(lease.fencing_token) in shown
    lease.release()


def test_extend_moves_valid_until_and_a_released_lease_cannot_be_extended(client, resource):
    lease = client.acquire(resource, ttl=2)
    before = lease.valid_until
    assert lease.extend(ttl=20) is True
    assert lease.valid_until > before + 10
    assert lease.release() is True
    assert lease.extend(ttl=5) is False


def test_hold_with_a_wait_hands_the_lock_over_in_fifo_order(client, resource):
    order = []
    tokens = []
    done = threading.Event()

    def waiter(name):
        with client.hold(resource, ttl=5, wait=30) as lease:
            order.append(name)
            tokens.append(lease.fencing_token)
            time.sleep(0.2)

    with client.hold(resource, ttl=5) as holding:
        tokens.append(holding.fencing_token)
        second = threading.Thread(target=waiter, args=("second",))
        second.start()
        time.sleep(0.5)  # orders the two waiters; no timing is asserted
        third = threading.Thread(target=waiter, args=("third",))
        third.start()
        time.sleep(0.5)
    second.join(30)
    third.join(30)
    done.set()
    assert order == ["second", "third"]
    assert tokens == sorted(tokens) and len(set(tokens)) == 3


def test_a_session_is_released_on_exit_and_when_its_body_raises(client, resource):
    with client.hold(resource, ttl=30):
        pass
    # TTL 30 s: only a release frees it this soon.
    again = client.acquire(resource, ttl=10, wait=5)
    assert again is not None
    again.release()
    with pytest.raises(KeyError):
        with client.hold(resource, ttl=30):
            raise KeyError("the work failed")
    after = client.acquire(resource, ttl=10, wait=5)
    assert after is not None, "a session whose body raised kept its lock"
    after.release()


def test_hold_raises_not_acquired_when_the_wait_runs_out(client, resource):
    lease = client.acquire(resource, ttl=10)
    with pytest.raises(redlockd.NotAcquired):
        with client.hold(resource, ttl=5, wait=0.5):
            pytest.fail("entered while someone else held the lock")
    lease.release()


def test_a_client_process_killed_with_kill_9_frees_its_lock_at_once(client, resource):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time, redlockd\n"
            f"with redlockd.Client().hold({resource!r}, ttl=30) as lease:\n"
            "    print('held', flush=True)\n"
            "    time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert client.acquire(resource, ttl=10) is None
        os.kill(holder.pid, signal.SIGKILL)
        # TTL 30 s: only the daemon seeing the stream break frees it this soon.
        lease = client.acquire(resource, ttl=10, wait=10)
        assert lease is not None
        lease.release()
    finally:
        holder.kill()
        holder.wait()


def test_tokens_above_two_to_the_53_are_kept_exact(client, resource):
    counter = 2**53 // 16 + 12_345
    for port in master_ports():
        subprocess.run(["redis-cli", "-p", str(port), "SET", "redlockd:fence", str(counter)], check=True, capture_output=True)
    lease = client.acquire(resource, ttl=10)
    # The counter every master returned, and the index of the first of
    # them that answered in time (the round ends at a quorum).
    assert lease.fencing_token // 16 == counter + 1 and lease.fencing_token % 16 < 5
    assert lease.fencing_token > 2**53
    # A double could not hold it (or its neighbour): the int is exact.
    assert float(lease.fencing_token) != lease.fencing_token or float(lease.fencing_token + 1) != lease.fencing_token + 1
    lease.release()


def test_bad_arguments_fail_before_anything_is_sent():
    # Nothing listens on port 1: a check made after sending would fail otherwise.
    with redlockd.Client("127.0.0.1:1") as nowhere:
        with pytest.raises(redlockd.InvalidArgument, match="resource.*1 to 256 bytes"):
            nowhere.acquire("")
        with pytest.raises(redlockd.InvalidArgument, match="owner"):
            nowhere.acquire("r", owner="x" * 300)
        with pytest.raises(redlockd.InvalidArgument, match="ttl"):
            nowhere.acquire("r", ttl=-1)


def test_a_ttl_out_of_the_daemons_range_is_its_invalid_argument(client, resource):
    with pytest.raises(redlockd.InvalidArgument, match="ttl"):
        client.acquire(resource, ttl=0.001)


@pytest.mark.kills_masters
def test_three_masters_killed_the_lost_signal_fires_before_valid_until(client, resource):
    session = client.hold(resource, ttl=2)
    lease = session.__enter__()
    last_valid = [lease.valid_until]

    def follow():
        while not lease.lost.is_set():
            last_valid[0] = max(last_valid[0], lease.valid_until)
            time.sleep(0.005)

    follower = threading.Thread(target=follow)
    follower.start()
    for pid in master_pids()[:3]:
        os.kill(pid, signal.SIGKILL)
    assert lease.lost.wait(10), "never told the lock was lost"
    lost_at = time.monotonic()
    follower.join()
    assert lost_at <= last_valid[0], f"told lost {lost_at - last_valid[0]:.3f} s after the validity ran out"
    with pytest.raises(redlockd.LockLost):
        session.__exit__(None, None, None)
    # Without a quorum: UNAVAILABLE with what each master said, a wait
    # retried until it runs out.
    started = time.monotonic()
    with pytest.raises(redlockd.Unavailable) as failed:
        client.acquire(resource + "-2", ttl=5, wait=1.0)
    assert time.monotonic() - started >= 0.8, "the wait was not retried"
    assert failed.value.needed == 3 and len(failed.value.nodes) == 5, failed.value.nodes


@pytest.mark.secure
def test_tls_and_a_bearer_token_from_the_environment(client, resource):
    assert os.environ.get("REDLOCKD_CA") and os.environ.get("REDLOCKD_TOKEN"), "needs the --secure daemon"
    lease = client.acquire(resource, ttl=10)
    assert lease is not None
    lease.release()
    with pytest.raises(redlockd.PermissionDenied):
        client.acquire("outside/" + resource, ttl=10)
    with redlockd.Client(token="not-the-token-0123456789abcdefgh") as stranger:
        with pytest.raises(redlockd.Unauthenticated):
            stranger.acquire(resource, ttl=10)
