"""Real processes for the scheduler tests (test_celery_beat.py,
test_apscheduler.py): a redis-server (the broker, and the schedulers'
state) on a free loopback port, a Celery worker and ``celery beat``
processes running beat_app.py, APScheduler processes running aps_app.py.
Each process writes a log of its own, shown when a test fails; every
process is stopped by the test that started it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional

import pytest
import redis

import redlockd

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, within: float, every: float = 0.05):
    """``check()``'s first truthy value, polled for up to ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {within:g} s")
        time.sleep(every)


class Proc:
    """A child process with its output in a log file."""

    def __init__(self, name: str, argv: List[str], env: dict, logs: Path):
        self.name = name
        self.log = logs / f"{name}.log"
        with open(self.log, "wb") as out:
            self.popen = subprocess.Popen(argv, env=env, cwd=HERE, stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL)
        self.pid = self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill9(self) -> None:
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(10)

    def stop(self, within: float = 15) -> None:
        """SIGTERM, then SIGKILL after ``within`` seconds."""
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(within)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(10)

    def wait_log(self, text: str, within: float = 30) -> None:
        """Waits until the process has logged ``text``."""
        wait_for(f"{self.name} logs {text!r}", lambda: text in self.log.read_text(errors="replace"), within)

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace").splitlines()
        return f"--- {self.name} (pid {self.pid}), last {lines} lines:\n" + "\n".join(text[-lines:])


class Broker:
    """redis-server on a free loopback port, nothing persisted."""

    def __init__(self, logs: Path):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = Proc("redis-server", ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                                          "--save", "", "--appendonly", "no", "--dir", str(logs)], dict(os.environ), logs)
        self.client = redis.Redis.from_url(self.url)
        wait_for("redis-server answers", self._pings, 10)

    def _pings(self) -> bool:
        try:
            return self.client.ping()
        except redis.ConnectionError:
            return False

    def stop(self) -> None:
        self.client.close()
        self.proc.stop()


class Run:
    """The processes of one test run (its own election, and list of what ran)."""

    def __init__(self, broker: Broker, logs: Path, election: str, run: str, period: float, ttl: float):
        self.broker = broker
        self.logs = logs
        self.election = election
        self.env = dict(os.environ, BEAT_BROKER=broker.url, BEAT_RUN=run, BEAT_PERIOD=str(period),
                        BEAT_ELECTION=election, BEAT_TTL=str(ttl), PYTHONUNBUFFERED="1")
        self.run = run
        self.procs: List[Proc] = []

    def _start(self, name: str, *args: str) -> Proc:
        proc = Proc(name, [sys.executable, "-m", "celery", "-A", "beat_app", *args], self.env, self.logs)
        self.procs.append(proc)
        return proc

    def worker(self) -> Proc:
        return self._start(f"worker-{self.run}", "worker", "-P", "solo", "-l", "warning", "-n", f"{self.run}@%h",
                           "--without-gossip", "--without-mingle", "--without-heartbeat")

    def beat(self, name: str, scheduler: Optional[str] = "redlockd") -> Proc:
        """A ``celery beat``: with ``-S redlockd``, or Celery's own
        PersistentScheduler (``scheduler=None``: the unsafe control), each
        with a schedule file of its own."""
        args = ["beat", "-l", "info", "-s", str(self.logs / f"{name}-schedule")]
        if scheduler:
            args += ["-S", scheduler]
        return self._start(name, *args)

    def scheduler(self, name: str, store: str = "redlockd") -> Proc:
        """An APScheduler process (aps_app.py), with redlockd's job store or
        APScheduler's own MemoryJobStore (``store="memory"``: the control)."""
        proc = Proc(name, [sys.executable, "aps_app.py", store], self.env, self.logs)
        self.procs.append(proc)
        return proc

    def drain(self, within: float = 20) -> None:
        """Waits until the worker has executed every task sent."""
        client = self.broker.client
        wait_for("the worker empties the queue",
                 lambda: client.llen("celery") == 0 and client.hlen("unacked") == 0, within)
        time.sleep(0.3)  # the last task's write

    def stop(self) -> None:
        for proc in self.procs:
            proc.stop()

    def logs_tail(self) -> str:
        return "\n".join(proc.tail() for proc in self.procs)


@pytest.fixture(scope="module")
def logs():
    logs = Path(tempfile.mkdtemp(prefix="redlockd-sched."))
    yield logs
    shutil.rmtree(logs, ignore_errors=True)


@pytest.fixture(scope="module")
def broker(logs):
    broker = Broker(logs)
    yield broker
    broker.stop()


def leader_pid(client, election):
    """(pid, term) of the process that leads ``election``, or ``None`` (also
    when the masters did not answer in time: a busy host; ask again)."""
    try:
        leader = client.leader(election)
    except redlockd.Unavailable:
        return None
    return (int(leader.candidate.rsplit(":", 1)[1]), leader.term) if leader else None


def queued(client, election, proc) -> bool:
    try:
        return any(c.endswith(f":{proc.pid}") for c in client.participants(election))
    except redlockd.Unavailable:
        return False


def sleep_until_away_from(phases, period: float, at_least: float) -> float:
    """Sleeps at least ``at_least`` seconds, then until the moment of the
    period farthest from every phase (seconds into the period) at which
    something is sent; returns that time. A leader killed in the
    milliseconds between recording a send and making it loses that send
    (at most once, by design): the kill tests aim at the takeover, not at
    that window."""
    marks = sorted(p % period for p in phases)
    gaps = [((b - a) % period or period, a) for a, b in zip(marks, marks[1:] + marks[:1])]
    width, start = max(gaps)
    target = (start + width / 2) % period
    earliest = time.time() + at_least
    time.sleep(at_least + (target - earliest % period) % period)
    return time.time()


def start_pair(client, election, start):
    """Starts ``start("a")``, waits until it leads, then ``start("b")``, and
    waits until b is in line. Returns (a, a's term, b)."""
    a = start("a")
    pid, term = wait_for("a leads", lambda: leader_pid(client, election), 30)
    assert pid == a.pid
    b = start("b")
    wait_for("b waits in line", lambda: queued(client, election, b), 30)
    return a, term, b


def next_leader(client, election, term, within):
    """(pid, term) of the first leader of ``election`` after ``term``."""
    return wait_for("the next leader", lambda: (got := leader_pid(client, election)) and got[1] > term and got, within, 0.01)
