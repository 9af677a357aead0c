"""redlockd.apscheduler against APScheduler itself: two real processes, each
a BlockingScheduler with the same two jobs (aps_app.py), on the daemon of
with-dev-daemon and a local redis-server for the run times claimed. Each
job's run time must run once across both — also when the leader is killed
with kill -9 and when its term is ended under it — while two schedulers on
APScheduler's own MemoryJobStore, the unsafe control, run every one twice.

(Period 1 s, term TTL 3 s; the counts and takeover times are printed.)"""

import time
import uuid

import pytest

pytest.importorskip("apscheduler", reason="pip install 'redlockd[apscheduler]'")

import beat_check as check  # noqa: E402
from beat_harness import (  # noqa: E402,F401
    Run, broker, leader_pid, logs, next_leader, queued, sleep_until_away_from, start_pair, wait_for,
)
from redlockd._fenced_redis import FencedState  # noqa: E402

pytestmark = pytest.mark.schedulers

PERIOD = 1.0
TTL = 3.0
SPELL = 3.0


@pytest.fixture
def schedulers(broker, logs, request):
    run = uuid.uuid4().hex[:12]
    procs = Run(broker, logs, election=f"examples/py-aps-{run}", run=run, period=PERIOD, ttl=TTL)
    failed = request.session.testsfailed
    yield procs
    procs.stop()
    if request.session.testsfailed > failed:
        print(procs.logs_tail())


def reports(procs, started: float, stopped: float, longest: float):
    """Each job's runs: one per period from the first after ``started`` to
    the last before ``stopped``."""
    time.sleep(0.3)  # the last run's write
    ran = check.executions(procs.broker.client, procs.run)
    out = []
    for name in ("aligned", "every"):
        runs = check.of(ran, name)
        first = check.period_of(min(e["sent_at"] for e in runs if e["sent_at"] >= started), PERIOD)
        report = check.aligned(runs, PERIOD, first, check.period_of(stopped, PERIOD) - 1)
        report.name = name
        out.append(report)
    return ran, out


def test_two_plain_schedulers_run_every_period_twice(schedulers):
    """The unsafe control: the checker sees the duplicates."""
    for name in ("plain-a", "plain-b"):
        schedulers.scheduler(name, store="memory").wait_log("Scheduler started")
    started = time.time()
    time.sleep(SPELL)
    stopped = time.time()
    schedulers.stop()
    _, (aligned, every) = reports(schedulers, started, stopped, PERIOD * 1.5)
    print(f"\ncontrol, two APScheduler processes on MemoryJobStore: {aligned}; {every}")
    assert aligned.duplicated >= SPELL - 1 and every.duplicated >= SPELL - 1, (aligned, every)


def test_once_per_run_time_through_a_kill_9_of_the_leader(client, schedulers):
    started = time.time()
    leader, term, other = start_pair(client, schedulers.election, lambda n: schedulers.scheduler(f"aps-{n}"))
    killed = sleep_until_away_from([0.0], PERIOD, SPELL)  # both jobs run at whole periods
    leader.kill9()
    pid, new_term = next_leader(client, schedulers.election, term, TTL * 2)
    takeover = time.time() - killed
    assert pid == other.pid
    time.sleep(SPELL)
    stopped = time.time()
    schedulers.stop()
    ran, reps = reports(schedulers, started, stopped, PERIOD + takeover)
    first_new = min(e["sent_at"] for e in ran if e["term"] == new_term)
    print(f"\nAPScheduler, kill -9 of the leader: elected after {takeover:.3f} s, first run of term {new_term} "
          f"{first_new - killed:.3f} s after the kill; {'; '.join(map(str, reps))}")
    assert takeover < TTL
    for report in reps:
        assert report.duplicated == 0 and not report.missed, report
    assert {e["term"] for e in ran} == {term, new_term}, "every run reads its leader's term"


def test_a_scheduler_whose_term_ends_stops_at_once(client, schedulers):
    started = time.time()
    leader, term, other = start_pair(client, schedulers.election, lambda n: schedulers.scheduler(f"aps-{n}"))
    ended = sleep_until_away_from([0.0], PERIOD, SPELL)
    client.resign(schedulers.election, term)
    pid, new_term = next_leader(client, schedulers.election, term, TTL * 2)
    takeover = time.time() - ended
    assert pid == other.pid
    wait_for("a campaigns again", lambda: queued(client, schedulers.election, leader), 10)
    time.sleep(SPELL)
    stopped = time.time()
    schedulers.stop()
    ran, reps = reports(schedulers, started, stopped, PERIOD + takeover)
    late = [round(e["sent_at"] - ended, 3) for e in ran if e["term"] == term and e["sent_at"] > ended]
    print(f"\nAPScheduler, the leader's term ended: next leader after {takeover:.3f} s, runs of the ended term "
          f"after its end {late}; {'; '.join(map(str, reps))}")
    assert not late, f"the old leader ran jobs {late} s after its term ended"
    for report in reps:
        assert report.duplicated == 0 and not report.missed, report


def test_a_scheduler_refused_by_the_store_steps_down(client, schedulers):
    """A later term has written to the store of claimed run times (its fence
    raised under the leader): the leader runs nothing more with its term,
    resigns, and leads again in a new term that the store accepts."""
    leader = schedulers.scheduler("aps-a")
    _, term = wait_for("a leads", lambda: leader_pid(client, schedulers.election), 30)
    store = FencedState(schedulers.broker.client, f"redlockd-aps:{{{schedulers.election}}}:")
    raised = sleep_until_away_from([0.0], PERIOD, SPELL / 2)
    assert store.fence() == term
    schedulers.broker.client.set(store.fence_key, str(term + 1))
    _, new_term = next_leader(client, schedulers.election, term, 10)
    again = time.time() - raised
    time.sleep(SPELL / 2)
    stopped = time.time()
    schedulers.stop()
    ran, reps = reports(schedulers, raised, stopped, PERIOD + again)
    late = [round(e["sent_at"] - raised, 3) for e in ran if e["term"] == term and e["sent_at"] > raised]
    print(f"\nAPScheduler, the store's fence raised under the leader: leading again in term {new_term} after "
          f"{again:.3f} s; runs of the refused term after it {late}; {'; '.join(map(str, reps))}")
    assert not late, f"ran with a refused term {late} s after the fence was raised"
    assert store.fence() == new_term
    for report in reps:
        assert report.duplicated == 0 and not report.missed, report
