"""APScheduler 3 exactly once: a job store that gives the scheduler due jobs
only while it leads a redlockd election, and claims each run time once
across every scheduler of the election (``pip install 'redlockd[apscheduler]'``)::

    store = LeaderJobStore("jobs/myapp", "redis://127.0.0.1:6379/0")   # wraps a MemoryJobStore
    scheduler = BackgroundScheduler(jobstores={"default": store})
    scheduler.add_job(report, "cron", minute="*/5", id="report")         # an id of its own

Run the same scheduler in as many processes as you like. The seam is the
one APScheduler asks before it runs anything, ``get_due_jobs``:

- **Only the leader has due jobs.** The campaign runs on a thread; a store
  that does not lead (or whose leadership is lost, or due to be said lost
  100 ms before ``valid_until``) says nothing is due and that it has no next
  run time, so its scheduler sleeps; an election wakes it.
- **Each run time is claimed once, fenced by the term.** Before it hands a
  job over, the leader records the job's latest run time in Redis with its
  term (``_fenced_redis.py``): a run time at or below the one recorded was
  run by an earlier leader and is skipped, and the store refuses a term
  below the highest it has seen. A leader refused there resigns.
- **Claim, then run**: a process killed between the two loses that run.

Run times must be the same in every process: give each job an ``id`` of
its own (runs are claimed per id) and a trigger whose fire times do not
depend on when the process started (cron, date, or interval with a
``start_date``). A job reads the term it runs under with ``store.term()``.
While a scheduler does not lead, its jobs stay due: once it leads, a
coalescing job runs its latest run time, unless an earlier leader ran it,
and a job with ``coalesce=False`` every run time no one ran (within
``misfire_grace_time``, as APScheduler decides)."""

from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import datetime, timezone
from typing import List, Optional

try:
    from apscheduler.jobstores.base import BaseJobStore
    from apscheduler.jobstores.memory import MemoryJobStore
except ImportError as missing:
    raise ImportError(f"redlockd.apscheduler needs APScheduler 3 ({missing}): pip install 'redlockd[apscheduler]'") from missing

from ._errors import LeadershipLost
from ._fenced_redis import FencedState, StaleTerm
from ._leading import Leading
from ._sync import Client

__all__ = ["LeaderJobStore"]

logger = logging.getLogger("redlockd.apscheduler")


class LeaderJobStore(BaseJobStore):
    """Wraps ``inner`` (default: a ``MemoryJobStore``) for the scheduler that
    leads ``election``; the run times claimed live in Redis at
    ``state_url``. ``ttl``: how long the daemon keeps a silent leader's
    term. ``client``: a ``redlockd.Client`` (default: from the environment)."""

    def __init__(self, election: str, state_url: str, inner: Optional[BaseJobStore] = None, ttl: float = 10,
                 client: Optional[Client] = None, candidate: Optional[str] = None):
        super().__init__()
        self.election = election
        self.state_url = state_url
        self.inner = inner if inner is not None else MemoryJobStore()
        self.ttl = ttl
        self.candidate = candidate or f"{socket.gethostname()}:{os.getpid()}"
        self._client = client
        self._own_client = client is None
        self._leading: Optional[Leading] = None
        self._store: Optional[FencedState] = None
        self._term: Optional[int] = None  # the term whose fence is raised
        self._lock = threading.Lock()

    def start(self, scheduler, alias):
        super().start(scheduler, alias)
        self.inner.start(scheduler, alias)
        try:
            import redis
        except ImportError:
            raise ImportError("redlockd.apscheduler needs redis-py: pip install 'redlockd[apscheduler]'") from None
        state = redis.Redis.from_url(self.state_url, socket_timeout=5, socket_connect_timeout=5)
        self._store = FencedState(state, f"redlockd-aps:{{{self.election}}}:")
        if self._client is None:
            self._client = Client()
        self._leading = Leading(self._client, self.election, self.candidate, self.ttl, logger,
                                on_change=lambda leadership: _wake(scheduler)).start()

    def shutdown(self):
        if self._leading is not None:
            self._leading.stop()
        if self._own_client and self._client is not None:
            self._client.close()
        self.inner.shutdown()
        super().shutdown()

    def term(self) -> int:
        """The term this scheduler leads in now: pass it with a job's writes.
        Raises ``LeadershipLost`` when it does not lead."""
        leadership = self._leading.current() if self._leading else None
        if leadership is None:
            raise LeadershipLost(f"{self.candidate} does not lead {self.election}")
        return leadership.term

    def get_due_jobs(self, now):
        leadership = self._leading.current() if self._leading else None
        if leadership is None:
            return []
        with self._lock:
            try:
                if leadership.term != self._term:
                    self._store.take_over(leadership.term)
                    self._term = leadership.term
                    logger.warning("redlockd: %s leads %s in term %d: running its jobs",
                                   self.candidate, self.election, leadership.term)
                return [job for job in self.inner.get_due_jobs(now) if self._claim(job, now, leadership)]
            except StaleTerm as stale:
                logger.error("redlockd: %s", stale)
                self._leading.step_down(leadership.term)
                self._term = None
                return []

    def _claim(self, job, now, leadership) -> bool:
        """Claims the run times the scheduler will submit (the latest one of
        a coalescing job) within its misfire_grace_time; moves ``job`` past
        those an earlier leader ran, or too late to run."""
        run_times = job._get_run_times(now)
        wanted = run_times[-1:] if job.coalesce else run_times
        if job.misfire_grace_time is not None:
            # Older ones would not run (APScheduler calls them missed): after
            # a long while in line, a job may have many.
            wanted = [t for t in wanted if (now - t).total_seconds() <= job.misfire_grace_time]
        if not run_times or leadership.lost.is_set():
            return False
        claimed = self._store.claim_after(leadership.term, job.id, [_micros(t) for t in wanted]) if wanted else []
        if claimed:
            first = next(t for t in wanted if _micros(t) == claimed[0])
            if first != job.next_run_time:
                job.next_run_time = first  # the scheduler submits from here on
            return True
        later = job.trigger.get_next_fire_time(run_times[-1], now)
        if later is None:
            self.inner.remove_job(job.id)
        else:
            job._modify(next_run_time=later)
            self.inner.update_job(job)
        return False

    def get_next_run_time(self):
        leading = self._leading is not None and self._leading.current() is not None
        return self.inner.get_next_run_time() if leading else None

    def lookup_job(self, job_id):
        return self.inner.lookup_job(job_id)

    def get_all_jobs(self) -> List:
        return self.inner.get_all_jobs()

    def add_job(self, job):
        self.inner.add_job(job)

    def update_job(self, job):
        self.inner.update_job(job)

    def remove_job(self, job_id):
        self.inner.remove_job(job_id)

    def remove_all_jobs(self):
        self.inner.remove_all_jobs()

    def __repr__(self) -> str:
        return f"<LeaderJobStore election={self.election!r} inner={self.inner!r}>"


def _wake(scheduler) -> None:
    """An election or a loss: the scheduler looks at its due jobs now."""
    try:
        scheduler.wakeup()
    except Exception as error:  # a scheduler shutting down
        logger.debug("redlockd: could not wake the scheduler: %s", error)


def _micros(t: datetime) -> int:
    """A run time as microseconds since the epoch (exact, comparable)."""
    delta = t.astimezone(timezone.utc) - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
