"""A candidate that campaigns on a thread of its own, again and again, for a
scheduler that must act only while it leads (``redlockd.celery``,
``redlockd.apscheduler``). The scheduler asks ``current()`` before every
step: a ``Leadership`` not yet lost, or ``None``.

The campaign waits ``CAMPAIGN_WAIT`` seconds at a time, so that ``stop()``
is seen within that while the candidate waits in line; once elected it
watches ``leadership.lost`` (set at LOST, and 100 ms before ``valid_until``
should the daemon fall silent), ``stop()`` and ``step_down()``, and campaigns
again after a loss."""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Optional

from ._campaign import Leadership
from ._errors import LeadershipLost, NotElected, RedlockdError

#: How long one campaign waits in line before it is made again.
CAMPAIGN_WAIT = 5.0
#: How often a leader looks at stop() and step_down() (a loss is seen at once).
POLL = 0.05


class Leading:
    """Campaigns for ``election`` as ``candidate`` until ``stop()``.
    ``on_change(leadership_or_None)`` is called on the thread at every
    election and loss."""

    def __init__(self, client, election: str, candidate: str, ttl: float, logger: logging.Logger,
                 on_change: Optional[Callable[[Optional[Leadership]], None]] = None):
        self._client = client
        self.election = election
        self.candidate = candidate
        self.ttl = ttl
        self._log = logger
        self._on_change = on_change or (lambda leadership: None)
        self._leadership: Optional[Leadership] = None
        self._stop = threading.Event()
        self._step_down: Optional[int] = None
        self._thread = threading.Thread(target=self._run, name=f"redlockd-campaign {election}", daemon=True)

    def start(self) -> "Leading":
        self._thread.start()
        return self

    def current(self) -> Optional[Leadership]:
        """The leadership while it is not lost nor due to be said lost
        (``LOST_MARGIN`` before ``valid_until``); else ``None``."""
        leadership = self._leadership
        if leadership is None or leadership.lost.is_set() or self._stop.is_set() or self._step_down == leadership.term:
            return None
        # The campaign's own deadline, looked at here too: a process that was
        # frozen may run this before the campaign's thread sets ``lost``.
        if time.monotonic() >= leadership._lost_at:
            return None
        return leadership

    def step_down(self, term: int) -> None:
        """Leaves the leadership of ``term`` (resigns) and campaigns again:
        for a leader whose store has seen a later term."""
        self._step_down = term

    def stop(self, timeout: float = 10.0) -> None:
        """Stops campaigning; a leader resigns (waited for up to ``timeout``)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout if self._leadership is not None else 0.2)

    def _run(self) -> None:
        backoff = 0.1
        while not self._stop.is_set():
            try:
                with self._client.campaign(self.election, self.candidate, value=self.candidate,
                                           ttl=self.ttl, wait=CAMPAIGN_WAIT) as leadership:
                    backoff = 0.1
                    self._lead(leadership)
            except NotElected:
                continue
            except LeadershipLost as lost:
                self._log.warning("redlockd: lost the leadership of %s: %s; campaigning again", self.election, lost)
            except RedlockdError as error:
                if self._stop.is_set():
                    return  # the client was closed under the wait
                self._log.error("redlockd: campaigning for %s failed: %s; again in %.1f s", self.election, error, backoff)
                self._stop.wait(backoff)
                backoff = min(2.0, backoff * 2)
            finally:
                if self._leadership is not None:
                    self._leadership = None
                    self._on_change(None)

    def _lead(self, leadership: Leadership) -> None:
        self._log.info("redlockd: %s leads %s in term %d", self.candidate, self.election, leadership.term)
        self._leadership = leadership
        self._on_change(leadership)
        while not (leadership.lost.wait(POLL) or self._stop.is_set() or self._step_down == leadership.term):
            pass
        if not leadership.lost.is_set():
            why = "stopping" if self._stop.is_set() else "a later term has written to the store"
            self._log.info("redlockd: %s resigns %s term %d (%s)", self.candidate, self.election, leadership.term, why)
