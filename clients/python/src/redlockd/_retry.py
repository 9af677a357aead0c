"""A wait the daemon cuts short with UNAVAILABLE (no quorum of masters, or
no daemon) is tried again after a jittered pause until the caller's wait
runs out; then the last ``Unavailable`` is raised."""

from __future__ import annotations

import random
import time
from typing import Callable, Optional

from ._errors import Unavailable
from ._steps import Pause, Steps, T

#: The first pause after UNAVAILABLE, in seconds; it doubles up to MAX_PAUSE.
FIRST_PAUSE = 0.05
MAX_PAUSE = 1.0
#: Extra time a call may take beyond its wait before its gRPC deadline (a
#: daemon that stopped answering must not hang the caller). The drivers add
#: it; the core never sees it.
CALL_SLACK = 30.0

Clock = Callable[[], float]


class Backoff:
    """The pauses between tries of one wait of ``wait`` seconds from now,
    on ``clock`` (``time.monotonic``); ``jitter(a, b)`` picks a pause."""

    def __init__(self, wait: float, clock: Clock = time.monotonic, jitter=random.uniform):
        self._clock = clock
        self._jitter = jitter
        self.deadline = clock() + wait
        self._pause = FIRST_PAUSE
        self._first: Optional[float] = wait

    def left(self) -> float:
        """What is left of the wait, to send as the next try's ``wait``: the
        caller's own on the first try (so the daemon's message about it
        shows what the caller gave)."""
        if self._first is not None:
            return self._first
        return max(0.0, self.deadline - self._clock())

    def pause(self) -> Optional[float]:
        """How long to pause before the next try; ``None`` when the wait has
        run out. Full jitter in [pause/2, pause], so that waiters that lost
        the same quorum do not come back in step; the last pause ends at the
        deadline, where one more single attempt is made."""
        self._first = None
        left = self.left()
        if left <= 0:
            return None
        pause = self._jitter(self._pause / 2, self._pause)
        self._pause = min(self._pause * 2, MAX_PAUSE)
        return min(pause, left)


def retried(attempt: Callable[[float], Steps[T]], wait: float, clock: Clock = time.monotonic) -> Steps[T]:
    """``attempt(left)`` — one try with ``left`` seconds of the wait — until
    it ends without ``Unavailable``, pausing between tries, for ``wait``
    seconds at most."""
    backoff = Backoff(wait, clock)
    while True:
        try:
            return (yield from attempt(backoff.left()))
        except Unavailable:
            pause = backoff.pause()
            if pause is None:
                raise
            yield Pause(pause)
