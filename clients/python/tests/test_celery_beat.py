"""redlockd.celery against Celery itself: a real worker and two real
``celery beat`` processes on a local redis-server broker, and the daemon
of with-dev-daemon. Every periodic task must go out once per period across
both beats (beat_check.py counts what the worker executed) — also when the
leading beat is killed with kill -9, and when its leadership is ended under
it — while two plain beats, the unsafe control, send every period twice.

(Period 1 s; term TTL 3 s. Each test prints its counts and takeover
times. test.sh runs this file on a daemon of its own, with a 1 s
server.keepalive, so that a frozen leader is noticed in about 2 s.)"""

import os
import signal
import time
import uuid

import pytest

pytest.importorskip("celery", reason="pip install 'redlockd[celery]'")

import beat_check as check  # noqa: E402
from redlockd._fenced_redis import FencedState, StaleTerm  # noqa: E402
from beat_harness import (  # noqa: E402,F401
    Run, broker, leader_pid, logs, next_leader, queued, sleep_until_away_from, start_pair, wait_for,
)

pytestmark = pytest.mark.schedulers

PERIOD = 1.0
TTL = 3.0
#: How long the beats run on either side of a kill or a loss.
SPELL = 3.0
#: The daemon's server.keepalive: it notices a frozen client's connection
#: gone after about twice this (test.sh gives this daemon 1 s).
KEEPALIVE = float(os.environ.get("REDLOCKD__SERVER__KEEPALIVE", "5s").removesuffix("s"))


@pytest.fixture(scope="module")
def worker(broker, logs):
    celery = Run(broker, logs, election="unused", run="worker", period=PERIOD, ttl=TTL)
    worker = celery.worker()
    yield celery
    celery.stop()
    assert worker.popen.returncode in (0, -15), worker.tail()


@pytest.fixture
def beats(broker, worker, logs, request):
    run = uuid.uuid4().hex[:12]
    celery = Run(broker, logs, election=f"examples/py-beat-{run}", run=run, period=PERIOD, ttl=TTL)
    failed = request.session.testsfailed
    yield celery
    celery.stop()
    if request.session.testsfailed > failed:
        print(celery.logs_tail() + "\n" + worker.logs_tail())


def quiet_moment(beats, at_least: float) -> float:
    """After ``at_least`` seconds, the moment farthest from both entries'
    sends (the aligned one's at whole periods, the interval one's at the
    phase of its last send so far): see sleep_until_away_from."""
    started = time.time()
    interval = wait_for("an interval task runs", lambda: check.of(check.executions(beats.broker.client, beats.run), "interval"), 10)
    return sleep_until_away_from([0.0, interval[-1]["sent_at"]], PERIOD, max(0.0, at_least - (time.time() - started)))


def reports(beats, first_sent_after: float, stopped: float, longest: float):
    beats.drain()
    sent = check.executions(beats.broker.client, beats.run)
    aligned = check.of(sent, "aligned")
    first = check.period_of(min(e["sent_at"] for e in aligned if e["sent_at"] >= first_sent_after), PERIOD)
    last = check.period_of(stopped, PERIOD) - 1
    return sent, check.aligned(aligned, PERIOD, first, last), check.interval(check.of(sent, "interval"), PERIOD, longest)


def test_two_plain_beats_send_every_period_twice(beats):
    """The unsafe control: the checker sees the duplicates."""
    for beat in (beats.beat("plain-a", scheduler=None), beats.beat("plain-b", scheduler=None)):
        beat.wait_log("beat: Starting...")
    started = time.time()
    time.sleep(SPELL)
    stopped = time.time()
    beats.stop()
    _, aligned, interval = reports(beats, started, stopped, longest=PERIOD * 1.5)
    print(f"\ncontrol, two plain beats: {aligned}; {interval}")
    assert aligned.duplicated >= SPELL - 1, aligned
    assert interval.duplicated >= SPELL - 1 or interval.sends >= 2 * (SPELL - 1), interval


def test_once_per_period_through_a_kill_9_of_the_leader(client, beats):
    started = time.time()
    leader, term, other = start_pair(client, beats.election, lambda n: beats.beat(f"beat-{n}"))
    killed = quiet_moment(beats, SPELL)
    leader.kill9()
    pid, new_term = next_leader(client, beats.election, term, TTL * 2)
    takeover = time.time() - killed
    assert pid == other.pid
    time.sleep(SPELL)
    stopped = time.time()
    other.stop()
    sent, aligned, interval = reports(beats, started, stopped, longest=PERIOD + takeover + 0.5)
    first_new = min(e["sent_at"] for e in sent if e["term"] == new_term)
    print(f"\nkill -9 of the leader: elected after {takeover:.3f} s, first task of term {new_term} "
          f"{first_new - killed:.3f} s after the kill; {aligned}; {interval}")
    assert takeover < TTL, f"the successor was elected {takeover:.3f} s after the kill: over the {TTL:g} s lease"
    assert aligned.duplicated == 0 and interval.duplicated == 0, (aligned, interval)
    assert not aligned.missed and not interval.missed, (aligned, interval)
    assert {e["term"] for e in sent} == {term, new_term}, "every task carries its leader's term"
    assert max(e["sent_at"] for e in sent if e["term"] == term) < killed < first_new


def test_a_leader_that_loses_its_term_stops_at_once(client, beats):
    """The daemon ends the leader's term (a resignation by term, from
    elsewhere): the beat is told, sends nothing more with that term, and
    campaigns again; the other beat continues the schedule."""
    started = time.time()
    leader, term, other = start_pair(client, beats.election, lambda n: beats.beat(f"beat-{n}"))
    ended = quiet_moment(beats, SPELL)
    client.resign(beats.election, term)
    pid, new_term = next_leader(client, beats.election, term, TTL * 2)
    takeover = time.time() - ended
    assert pid == other.pid
    wait_for("beat a campaigns again", lambda: queued(client, beats.election, leader), 10)
    time.sleep(SPELL)
    stopped = time.time()
    beats.stop()
    sent, aligned, interval = reports(beats, started, stopped, longest=PERIOD + takeover + 0.5)
    late = [round(e["sent_at"] - ended, 3) for e in sent if e["term"] == term and e["sent_at"] > ended]
    print(f"\nthe leader's term ended: next leader after {takeover:.3f} s, "
          f"sends of the ended term after its end {late}; {aligned}; {interval}")
    assert all(t < 0.2 for t in late), f"the old leader sent {late} s after its term ended"
    assert aligned.duplicated == 0 and interval.duplicated == 0, (aligned, interval)
    assert not aligned.missed and not interval.missed, (aligned, interval)


def test_a_frozen_leader_that_wakes_sends_nothing_more(client, beats):
    """The leader is frozen (SIGSTOP) while it leads: the daemon notices its
    connection gone (2 × server.keepalive), the other beat takes over and
    raises the store's fence; woken (SIGCONT), the old leader finds its
    term's deadline passed and sends nothing more with it."""
    started = time.time()
    leader, term, other = start_pair(client, beats.election, lambda n: beats.beat(f"beat-{n}"))
    frozen = quiet_moment(beats, SPELL / 2)
    leader.popen.send_signal(signal.SIGSTOP)
    try:
        pid, new_term = next_leader(client, beats.election, term, 2 * KEEPALIVE + TTL + 5)
        takeover = time.time() - frozen
        assert pid == other.pid
        time.sleep(1.5)
    finally:
        woke = time.time()
        leader.popen.send_signal(signal.SIGCONT)
    wait_for("the woken beat campaigns again", lambda: queued(client, beats.election, leader), 10)
    time.sleep(SPELL / 2)
    stopped = time.time()
    beats.stop()
    sent, aligned, interval = reports(beats, started, stopped, longest=PERIOD + takeover + 0.5)
    # The periods while nobody could lead are not sent (Celery's schedules
    # send one catch-up task, not one per period missed).
    unled = range(check.period_of(frozen, PERIOD) + 1, check.period_of(frozen + takeover, PERIOD) + 1)
    late = [round(e["sent_at"] - frozen, 3) for e in sent if e["term"] == term and e["sent_at"] > frozen]
    print(f"\na frozen leader: the next elected after {takeover:.3f} s, the frozen one woken "
          f"{woke - frozen:.3f} s after, sends of its term after the freeze {late}; {aligned}; {interval}")
    assert takeover < 2 * KEEPALIVE + TTL, f"took over {takeover:.3f} s after the freeze"
    assert not late, f"the frozen leader sent with its old term {late} s after the freeze"
    assert aligned.duplicated == 0 and interval.duplicated == 0, (aligned, interval)
    assert set(aligned.missed) <= set(unled), (aligned, list(unled))
    assert not interval.missed, interval


def test_a_leader_refused_by_the_store_steps_down(client, beats):
    """A later term has written to the schedule's store (its fence is raised
    under the leader, as a successor that took over would): the leader's
    next record is refused, it sends nothing more with its term, resigns,
    and leads again in a new term that the store accepts."""
    leader = beats.beat("beat-a")
    pid, term = wait_for("beat a leads", lambda: leader_pid(client, beats.election), 30)
    store = FencedState(beats.broker.client, f"redlockd-beat:{{{beats.election}}}:")
    raised = quiet_moment(beats, SPELL / 2)
    assert store.fence() == term
    beats.broker.client.set(store.fence_key, str(term + 1))
    _, new_term = next_leader(client, beats.election, term, 10)
    again = time.time() - raised
    time.sleep(SPELL / 2)
    stopped = time.time()
    beats.stop()
    sent, aligned, interval = reports(beats, raised, stopped, longest=PERIOD + again + 0.5)
    late = [round(e["sent_at"] - raised, 3) for e in sent if e["term"] == term and e["sent_at"] > raised]
    print(f"\nthe store's fence raised under the leader: leading again in term {new_term} after {again:.3f} s; "
          f"sends of the refused term after it {late}; {aligned}; {interval}")
    assert not late, f"sent with a refused term {late} s after the fence was raised"
    assert store.fence() == new_term
    assert aligned.duplicated == 0 and interval.duplicated == 0, (aligned, interval)
    assert not aligned.missed, aligned


def test_the_store_compares_terms_exactly_at_any_size(broker):
    store = FencedState(broker.client, f"examples/fence-{uuid.uuid4().hex}:")
    big = 2**64 - 2
    assert store.take_over(big) == {}
    store.write(big, "entry", "a")
    with pytest.raises(StaleTerm, match=f"term {big - 1} is below the store's fence {big}"):
        store.write(big - 1, "entry", "b")  # equal as doubles
    with pytest.raises(StaleTerm):
        store.take_over(9)  # fewer digits
    store.write(big + 1, "other", "d")
    assert store.take_over(big + 1) == {"entry": "a", "other": "d"}
    assert store.fence() == big + 1
    # Run times claimed once: those above the field's, which moves to the last.
    assert store.claim_after(big + 1, "job", [10, 20]) == [10, 20]
    assert store.claim_after(big + 1, "job", [9, 20, 30, 100]) == [30, 100]
    assert store.claim_after(big + 2, "job", [100]) == []
    with pytest.raises(StaleTerm):
        store.claim_after(big + 1, "job", [200])


def test_a_broker_that_is_not_redis_needs_a_state_url():
    from celery import Celery as App

    from redlockd.celery import Scheduler

    app = App("beat_config", broker="amqp://guest@127.0.0.1:5672//", set_as_current=False)
    with pytest.raises(ValueError, match=r"the broker \(amqp://guest@127.0.0.1:5672//\) is not Redis, so set redlockd_beat_state_url"):
        Scheduler(app, lazy=True)
    app.conf.redlockd_beat_state_url = "redis://:secret@127.0.0.1:6390/2"
    app.conf.redlockd_beat_election = "beat/config"
    assert Scheduler(app, lazy=True).info == "    . redlockd election -> beat/config (state in redis://:**@127.0.0.1:6390/2)"
