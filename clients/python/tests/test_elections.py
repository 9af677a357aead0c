"""Client.campaign, leader, observe, proclaim, resign and participants (the
blocking client) against a real daemon."""

import os
import queue
import signal
import threading
import time

import pytest
from conftest import campaign_in_a_child, raise_fence_counters

import redlockd


def in_a_thread(function, *args):
    """Runs ``function`` on a thread; its result (or what it raised) comes
    through the returned queue."""
    results = queue.Queue()

    def run():
        try:
            results.put(function(*args))
        except BaseException as e:  # noqa: BLE001 - handed to the test
            results.put(e)

    threading.Thread(target=run, daemon=True).start()
    return results


def test_the_leader_is_known_its_successor_waits_in_line_and_gets_a_larger_term(client, election):
    assert client.leader(election) is None

    def second_candidate():
        with client.campaign(election, candidate="pod-2", value=b"10.0.0.2", ttl=2, wait=30) as leadership:
            return leadership.term, client.leader(election)

    with client.campaign(election, candidate="pod-1", value=b"10.0.0.1", ttl=2) as first:
        assert isinstance(first.lost, threading.Event) and not first.lost.is_set()
        assert first.valid_until - time.monotonic() <= 2
        leader = client.leader(election)
        assert (leader.candidate, leader.value, leader.term) == ("pod-1", b"10.0.0.1", first.term)
        assert leader.since.tzinfo is not None
        second = in_a_thread(second_candidate)
        deadline = time.monotonic() + 5
        while client.participants(election) != ["pod-2"]:
            assert time.monotonic() < deadline, client.participants(election)
            time.sleep(0.05)
        time.sleep(2.5)  # past the TTL: only the daemon's extensions keep the first leading
        assert not first.lost.is_set(), first.lost_reason
        assert second.empty(), "the second candidate led while the first did"
    term, seen = second.get(timeout=10)
    assert term > first.term
    assert (seen.candidate, seen.value, seen.term) == ("pod-2", b"10.0.0.2", term)
    assert client.participants(election) == []
    assert client.leader(election) is None, "leaving the block did not resign"


def test_proclaim_on_the_leadership_and_by_term_and_a_stale_term_changes_nothing(client, election):
    with client.campaign(election, candidate="pod-1", value="first") as leadership:
        assert leadership.value == b"first"
        leadership.proclaim(b"second")
        assert leadership.value == b"second" and client.leader(election).value == b"second"
        client.proclaim(election, leadership.term, "third")
        assert client.leader(election).value == b"third"
        for stale in (leadership.term - 1, leadership.term + 1):
            with pytest.raises(redlockd.FailedPrecondition, match=f"the current term is {leadership.term}"):
                client.proclaim(election, stale, b"stale")
            with pytest.raises(redlockd.FailedPrecondition, match=str(leadership.term)):
                client.resign(election, stale)
        leader = client.leader(election)
        assert (leader.term, leader.value) == (leadership.term, b"third")
        assert not leadership.lost.is_set()


def test_a_resignation_by_term_ends_the_leadership_and_leaving_then_raises(client, election):
    with pytest.raises(redlockd.LeadershipLost, match="the daemon ended the leadership") as failed:
        with client.campaign(election, candidate="pod-1") as leadership:
            client.resign(election, leadership.term)
            assert leadership.lost.wait(5), "the leader was never told"
            with pytest.raises(redlockd.LeadershipLost):
                leadership.proclaim(b"too late")
    assert isinstance(failed.value, redlockd.LockLost)
    assert client.leader(election) is None


def test_a_candidate_not_elected_within_its_wait_withdraws(client, election):
    with client.campaign(election, candidate="pod-1") as leadership:
        started = time.monotonic()
        with pytest.raises(redlockd.NotElected, match="not elected within 0.5 s"):
            with client.campaign(election, candidate="pod-2", wait=0.5):
                pytest.fail("elected while another led")
        assert 0.5 <= time.monotonic() - started < 5
        assert client.participants(election) == []
        assert client.leader(election).term == leadership.term


def test_observe_sees_each_state_in_order_and_terms_never_go_back(client, election):
    states = queue.Queue()

    with client.observe(election) as view:

        def follow():
            for state in view:
                states.put(state)

        threading.Thread(target=follow, daemon=True).start()
        assert states.get(timeout=5) is None, "the first state is the state now: nobody leads"
        with client.campaign(election, candidate="pod-1", value=b"a") as first:
            seen = states.get(timeout=5)
            assert (seen.candidate, seen.value, seen.term) == ("pod-1", b"a", first.term)
            first.proclaim(b"b")
            seen = states.get(timeout=5)
            assert (seen.value, seen.term) == (b"b", first.term)
        assert states.get(timeout=5) is None
        with client.campaign(election, candidate="pod-2") as second:
            seen = states.get(timeout=5)
            assert seen.candidate == "pod-2" and seen.term == second.term > first.term
    time.sleep(0.3)
    assert states.qsize() <= 1, "a state was sent twice, or the view outlived its close"


def test_terms_above_2_to_the_53_are_exact(client, election):
    counter = raise_fence_counters()
    with client.campaign(election, candidate="pod-1") as leadership:
        assert leadership.term > 2**53 and leadership.term >= counter
        assert client.leader(election).term == leadership.term
        client.proclaim(election, leadership.term, b"exact")  # refused if the term had lost a bit
        with pytest.raises(redlockd.FailedPrecondition, match=str(leadership.term)):
            client.resign(election, leadership.term + 1)


def test_a_killed_leader_process_frees_the_election_at_once(client, election):
    child = campaign_in_a_child(election, "pod-child")
    try:
        said, term = child.stdout.readline().split()
        assert said == "elected" and client.leader(election).term == int(term)
        os.kill(child.pid, signal.SIGKILL)
        started = time.monotonic()
        with client.campaign(election, candidate="pod-1", wait=10) as leadership:
            # TTL 30 s: only the daemon seeing the stream break frees it this soon.
            assert time.monotonic() - started < 5 and leadership.term > int(term)
    finally:
        child.kill()
        child.wait()


def test_bad_arguments_name_the_field(client, election):
    for call, message in [
        (lambda: client.campaign("", candidate="pod-1"), "^invalid election: is 0 bytes long"),
        (lambda: client.campaign(election, candidate="x" * 257), "^invalid candidate: is 257 bytes long"),
        (lambda: client.campaign(election, candidate="pod-1", value=b"x" * 4097), "^invalid value: is 4097 bytes"),
        (lambda: client.campaign(election, candidate="pod-1", wait=-1), "^invalid wait: "),
        (lambda: client.leader("a\x00b"), r"^invalid election: contains the control character '\\0'"),
        (lambda: client.resign(election, 0), "^invalid term: must be set"),
        (lambda: client.observe(""), "^invalid election: "),
    ]:
        with pytest.raises(redlockd.InvalidArgument, match=message):
            call()
    # Ranges only the daemon knows, in its words.
    with pytest.raises(redlockd.InvalidArgument, match=r"^invalid lock_delay: 1h is outside the allowed range \[0s, "):
        with client.campaign(election, candidate="pod-1", lock_delay=3600):
            pytest.fail("entered")
    with pytest.raises(redlockd.InvalidArgument, match="^invalid ttl: a campaign needs a TTL of at least"):
        with client.campaign(election, candidate="pod-1", ttl=0.25):
            pytest.fail("entered")


def test_a_campaign_is_entered_once(client, election):
    campaign = client.campaign(election, candidate="pod-1")
    with campaign:
        pass
    with pytest.raises(RuntimeError, match="entered once"):
        with campaign:
            pass
