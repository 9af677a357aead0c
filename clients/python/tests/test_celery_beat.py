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
import shutil
import signal
import time
import uuid

import pytest

pytest.importorskip("celery", reason="pip install 'redlockd[celery]'")

import beat_check as check  # noqa: E402
from redlockd._fenced_redis import FencedState, StaleTerm  # noqa: E402
from beat_harness import Broker, Celery, logs_dir, wait_for  # noqa: E402

pytestmark = pytest.mark.celery_beat

PERIOD = 1.0
TTL = 3.0
#: How long the beats run on either side of a kill or a loss.
SPELL = 4.0
#: The daemon's server.keepalive: it notices a frozen client's connection
#: gone after about twice this (test.sh gives this daemon 1 s).
KEEPALIVE = float(os.environ.get("REDLOCKD__SERVER__KEEPALIVE", "5s").removesuffix("s"))


@pytest.fixture(scope="module")
def logs():
    logs = logs_dir()
    yield logs
    shutil.rmtree(logs, ignore_errors=True)


@pytest.fixture(scope="module")
def broker(logs):
    broker = Broker(logs)
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def worker(broker, logs):
    celery = Celery(broker, logs, election="unused", run="worker", period=PERIOD, ttl=TTL)
    worker = celery.worker()
    yield celery
    celery.stop()
    assert worker.popen.returncode in (0, -15), worker.tail()


@pytest.fixture
def beats(broker, worker, logs, request):
    run = uuid.uuid4().hex[:12]
    celery = Celery(broker, logs, election=f"examples/py-beat-{run}", run=run, period=PERIOD, ttl=TTL)
    celery.election = f"examples/py-beat-{run}"
    failed = request.session.testsfailed
    yield celery
    celery.stop()
    if request.session.testsfailed > failed:
        print(celery.logs_tail() + "\n" + worker.logs_tail())


def leader_pid(client, election):
    leader = client.leader(election)
    return (int(leader.candidate.rsplit(":", 1)[1]), leader.term) if leader else None


def start_pair(client, beats):
    """Starts beat a, waits until it leads, then beat b, and waits until b
    is in line. Returns (leader's Proc, term, the other's Proc)."""
    a = beats.beat("beat-a")
    pid, term = wait_for("beat a leads", lambda: leader_pid(client, beats.election), 30)
    assert pid == a.pid
    b = beats.beat("beat-b")
    wait_for("beat b waits in line", lambda: any(c.endswith(f":{b.pid}") for c in client.participants(beats.election)), 30)
    return a, term, b


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
    leader, term, other = start_pair(client, beats)
    time.sleep(SPELL)
    killed = time.time()
    leader.kill9()
    pid, new_term = wait_for("beat b leads", lambda: (got := leader_pid(client, beats.election)) and got[1] > term and got, TTL * 2, 0.01)
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
    leader, term, other = start_pair(client, beats)
    time.sleep(SPELL)
    # Mid-period: the next aligned send is half a period away.
    time.sleep((0.5 - time.time() % PERIOD) % PERIOD)
    ended = time.time()
    client.resign(beats.election, term)
    pid, new_term = wait_for("beat b leads", lambda: (got := leader_pid(client, beats.election)) and got[1] > term and got, TTL * 2, 0.01)
    takeover = time.time() - ended
    assert pid == other.pid
    wait_for("beat a campaigns again", lambda: any(c.endswith(f":{leader.pid}") for c in client.participants(beats.election)), 10)
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
    leader, term, other = start_pair(client, beats)
    time.sleep(SPELL / 2)
    frozen = time.time()
    leader.popen.send_signal(signal.SIGSTOP)
    try:
        pid, new_term = wait_for("beat b leads", lambda: (got := leader_pid(client, beats.election)) and got[1] > term and got,
                                 2 * KEEPALIVE + TTL + 5, 0.01)
        takeover = time.time() - frozen
        assert pid == other.pid
        time.sleep(1.5)
    finally:
        woke = time.time()
        leader.popen.send_signal(signal.SIGCONT)
    wait_for("the woken beat campaigns again", lambda: any(c.endswith(f":{leader.pid}") for c in client.participants(beats.election)), 10)
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
    time.sleep(SPELL / 2)
    store = FencedState(beats.broker.client, f"redlockd-beat:{{{beats.election}}}:")
    assert store.fence() == term
    raised = time.time()
    beats.broker.client.set(store.fence_key, str(term + 1))
    _, new_term = wait_for("beat a leads again", lambda: (got := leader_pid(client, beats.election)) and got[1] > term and got, 10, 0.01)
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
    assert store.claim(big + 1, "entry", "c") is False  # set before: not claimed again
    assert store.claim(big + 1, "other", "d") is True
    assert store.take_over(big + 1) == {"entry": "a", "other": "d"}
    assert store.fence() == big + 1
