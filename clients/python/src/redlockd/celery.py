"""Celery beat exactly once: a beat scheduler that sends periodic tasks only
while it leads a redlockd election (``pip install 'redlockd[celery]'``)::

    app.conf.beat_scheduler = "redlockd"              # or: celery beat -S redlockd
    app.conf.redlockd_beat_election = "beat/myapp"    # default: celery-beat/<app.main>
    # REDLOCKD_ADDR names the daemon; the schedule's state lives in the broker's Redis

Run ``celery beat`` as often as you like: one beat leads and sends, the others
wait in line. What makes a period go out once:

- **Only the leader ticks.** The campaign runs on a thread; ``tick()`` sends
  nothing unless the leadership is held and not lost (``leadership.lost`` is
  set at LOST, and 100 ms before ``valid_until`` should the daemon fall
  silent), and looks again before each task.
- **The schedule's state is shared and fenced by the term.** Each entry's
  ``last_run_at`` and run count live in Redis (``_fenced_redis.py``). A new
  leader raises the store's fence to its term and reads the state in one
  step, so it continues where the last leader stopped; before sending a
  task, the leader records the entry's next state with its term, and the
  store refuses a term below the fence. A leader that finds its term refused
  (a later one has taken over) sends nothing more and resigns.
- **Record, then send.** A beat killed between the two (a Redis write and a
  publish) loses that period's task: at most once there, never twice.

Each task carries the term in the message header ``redlockd_term``
(``self.request.redlockd_term`` in a bound task): send it with the task's
writes so that the store refuses an older leader's.

Settings (``app.conf``): ``redlockd_beat_election``, ``redlockd_beat_ttl``
(seconds, default 10: how long the daemon keeps a silent leader's term),
``redlockd_beat_state_url`` (default: the broker's URL, which must then be
Redis). The daemon's address and credentials come from the environment, as
for ``redlockd.Client()``."""

from __future__ import annotations

import copy
import json
import os
import socket
from datetime import datetime
from typing import Optional

try:
    from celery import beat
    from celery.utils.log import get_logger
    from celery.utils.time import maybe_make_aware
    from kombu.utils.url import maybe_sanitize_url
except ImportError as missing:
    raise ImportError(f"redlockd.celery needs Celery ({missing}): pip install 'redlockd[celery]'") from missing

from ._fenced_redis import FencedState, StaleTerm
from ._leading import Leading
from ._sync import Client

__all__ = ["Scheduler", "TERM_HEADER"]

#: The message header that carries the leader's term to the task.
TERM_HEADER = "redlockd_term"
#: How often a beat that does not lead looks whether it does now (seconds).
IDLE = 0.1
#: How long a leader waits after the state's store failed before trying again.
STORE_RETRY = 1.0

logger = get_logger(__name__)


class NotLeading(Exception):
    """The leadership was lost between the tick's start and a task."""


class Scheduler(beat.Scheduler):
    """``celery beat -S redlockd`` (or ``redlockd.celery:Scheduler``)."""

    def __init__(self, app, *args, **kwargs):
        conf = app.conf
        self.election = conf.get("redlockd_beat_election") or f"celery-beat/{app.main or 'default'}"
        self.ttl = float(conf.get("redlockd_beat_ttl") or 10)
        self.state_url = conf.get("redlockd_beat_state_url") or _redis_url(conf.broker_url)
        self.candidate = f"{socket.gethostname()}:{os.getpid()}"
        self._leading: Optional[Leading] = None
        self._leadership = None  # the one the running tick acts for
        self._term: Optional[int] = None  # the term whose state is loaded
        self._store: Optional[FencedState] = None
        self._client: Optional[Client] = None
        super().__init__(app, *args, **kwargs)

    def setup_schedule(self) -> None:
        super().setup_schedule()
        try:
            import redis
        except ImportError:
            raise ImportError("redlockd.celery needs redis-py: pip install 'redlockd[celery]'") from None
        state = redis.Redis.from_url(self.state_url, socket_timeout=5, socket_connect_timeout=5)
        self._store = FencedState(state, f"redlockd-beat:{{{self.election}}}:")
        self._client = Client()
        self._leading = Leading(self._client, self.election, self.candidate, self.ttl, logger).start()

    def tick(self, *args, **kwargs) -> float:
        leadership = self._leading.current()
        if leadership is None:
            if self._term is not None:
                logger.warning("redlockd: not leading %s any more: sending nothing", self.election)
                self._term = None
            return min(IDLE, self.max_interval)
        self._leadership = leadership
        try:
            if leadership.term != self._term:
                self._take_over(leadership.term)
            return min(super().tick(*args, **kwargs), self.max_interval)
        except StaleTerm as stale:
            logger.error("redlockd: %s", stale)
            self._leading.step_down(leadership.term)
            return self._start_again(IDLE)
        except NotLeading:
            return self._start_again(IDLE)
        except Exception as error:  # the store: redis.RedisError, OSError
            if not _from_store(error):
                raise
            logger.error("redlockd: the schedule's state (%s) failed: %s; sending nothing for %g s",
                         self.info.strip(), error, STORE_RETRY)
            return self._start_again(STORE_RETRY)
        finally:
            self._leadership = None

    def _start_again(self, delay: float) -> float:
        # A tick cut short leaves its entry out of the heap: rebuild it from
        # the state the next leadership reads.
        self._term = None
        self._heap = None
        return delay

    def _take_over(self, term: int) -> None:
        saved = self._store.take_over(term)
        for name, entry in self.schedule.items():
            if name in saved:
                last_run_at, count = _load(saved[name])
                entry.last_run_at = maybe_make_aware(last_run_at)
                entry.total_run_count = count
        self._term = term
        self._heap = None
        logger.warning("redlockd: leading %s in term %d: %d of %d entries continue from the shared state",
                       self.election, term, sum(name in saved for name in self.schedule), len(self.schedule))

    def reserve(self, entry):
        leadership = self._leadership
        if leadership is None or leadership.lost.is_set():
            raise NotLeading()
        new_entry = next(entry)
        self._store.write(leadership.term, entry.name, _dump(new_entry))
        self.schedule[entry.name] = new_entry
        return new_entry

    def apply_async(self, entry, producer=None, advance=True, **kwargs):
        leadership = self._leadership
        if leadership is not None:
            options = dict(entry.options or {})
            options["headers"] = {**(options.get("headers") or {}), TERM_HEADER: leadership.term}
            entry = copy.copy(entry)
            entry.options = options
        return super().apply_async(entry, producer=producer, advance=advance, **kwargs)

    def close(self) -> None:
        try:
            if self._leading is not None:
                self._leading.stop()
            super().close()
        finally:
            if self._client is not None:
                self._client.close()

    @property
    def info(self) -> str:
        return f"    . redlockd election -> {self.election} (state in {maybe_sanitize_url(self.state_url)})"


def _redis_url(broker_url) -> str:
    url = broker_url or ""
    if url.split("://", 1)[0] in ("redis", "rediss", "unix", "redis+socket"):
        return url.replace("redis+socket://", "unix://", 1)
    raise ValueError(
        "redlockd.celery keeps the schedule's state in Redis: the broker "
        f"({maybe_sanitize_url(url) or 'none set'}) is not Redis, so set redlockd_beat_state_url"
    )


def _from_store(error: BaseException) -> bool:
    try:
        import redis
    except ImportError:  # pragma: no cover
        return False
    return isinstance(error, (redis.RedisError, ConnectionError, TimeoutError))


def _dump(entry) -> str:
    return json.dumps({"last_run_at": entry.last_run_at.isoformat(), "total_run_count": entry.total_run_count})


def _load(saved: str):
    state = json.loads(saved)
    return datetime.fromisoformat(state["last_run_at"]), int(state["total_run_count"])
