"""The session machine, once for a Hold session (``_session.py``) and a
campaign (``_leadership.py``), and once for the blocking and the asyncio
drivers (no I/O here): both are one bidirectional stream that opens (retried
after UNAVAILABLE, as a wait is), is granted something with a validity — a
lease, a leadership — then takes the daemon's EXTENDED (the validity counted
from when each message arrived), LOST, or its confirmation of the end
(RELEASED, RESIGNED), until the client leaves: it sends its farewell (a
release, a resignation), half-closes, and waits for that confirmation
(docs/design.md#sessions, #elections).

What is held is lost — ``lost`` set, and leaving the block raises — when the
daemon says LOST, when it ends the hold on its own while the block still
runs (``max_hold`` used up, shutdown), when the stream ends or breaks before
the client left, and, should the daemon fall silent, ``LOST_MARGIN`` (100 ms,
at most a quarter of the validity) before ``valid_until`` when no extension
came, on the client's own watch (``_lease.lost_at``).

A kind of session (``Session``, ``Candidacy``) says how it opens, which of
its events is which, and its words; the drivers (``_sync_stream.py``,
``_aio_stream.py``) only move messages."""

from __future__ import annotations

import time
from typing import Any, Dict, Generic, Optional, Type, TypeVar

from . import _validate as v
from ._errors import RedlockdError
from ._lease import Watched
from ._retry import Clock, retried
from ._steps import ENDED, TIMED_OUT, Receive, Steps

W = TypeVar("W", bound=Watched)

#: What each of a kind's events is (``SessionMachine._EVENTS``).
EXTENDED, LOST, CLOSED = "EXTENDED", "LOST", "CLOSED"


def durations(start: Any, ttl, max_hold, lock_delay) -> None:
    """Checks the durations every session's start may carry and sets those
    given (seconds or a ``timedelta``; unset: the daemon's default)."""
    for field, given in (("ttl", ttl), ("max_hold", max_hold), ("lock_delay", lock_delay)):
        seconds = v.optional_seconds(given, field)
        if seconds is not None:
            getattr(start, field).CopyFrom(v.to_wire(seconds))


class SessionMachine(Generic[W]):
    """One session, from its opening to what leaving raises, for a driver:
    it runs ``open`` and then ``follow`` (steps, ``_steps.py``), sends what
    ``leave`` gives, half-closes, waits for ``follow`` to end (at most
    ``CONFIRM_TIMEOUT``) and leaves (``left``). ``watch`` says when to look
    at ``valid_until`` again; ``on`` takes one message of the daemon."""

    #: How long leaving waits for the daemon to confirm the end.
    CONFIRM_TIMEOUT: float
    #: The kind's events: its wire enum's values to EXTENDED, LOST, CLOSED.
    _EVENTS: Dict[int, str]
    #: Its words: "session" or "campaign"; that it is entered once; what
    #: leaving is ("release"); how the daemon's own end is told ("the daemon
    #: released the lock while it was in use"); the silent daemon's loss;
    #: the error a loss raises.
    _NOUN: str
    _ONCE: str
    _LEAVING: str
    _UNASKED_END: str
    _SILENT: str
    _LOST_ERROR: Type[RedlockdError]

    def __init__(self, wait: float, clock: Clock = time.monotonic):
        self._wait = wait
        self._clock = clock
        #: What is held (a lease, a leadership), once opened.
        self.held: Optional[W] = None
        #: Set when the client starts leaving (the block ends).
        self.leaving = False
        #: Set when the daemon confirmed the end (RELEASED, RESIGNED).
        self.confirmed = False
        #: Why the stream ended without that confirmation, if it did.
        self.ended_because = ""

    def open(self, kind: Type[W]) -> Steps[W]:
        """Opens the session until ``kind`` is held (``_attempt``, tried
        again after UNAVAILABLE until the wait runs out). Raises at once,
        before any step, when it was opened before."""
        if self.held is not None:
            raise RuntimeError(self._ONCE)

        def attempt(left: float) -> Steps[W]:
            self.held = yield from self._attempt(kind, left)
            return self.held

        return retried(attempt, self._wait, self._clock)

    def _attempt(self, kind: Type[W], left: float) -> Steps[W]:
        """One try to open, with ``left`` seconds of the wait: the kind's."""
        raise NotImplementedError

    def follow(self) -> Steps[None]:
        """The session's life once held: takes the daemon's messages until
        the stream ends, looking at ``valid_until`` whenever it passes."""
        try:
            while True:
                got = yield Receive(self.watch(self._clock()))
                if got == TIMED_OUT:
                    continue  # watch() looks at valid_until
                if got == ENDED:
                    self.stream_ended()
                    return
                if self.on(*got):
                    return
        except RedlockdError as error:
            self.stream_broke(error)

    def on(self, message: Any, received: float) -> bool:
        """Takes one message, received at ``received``; ``True`` when the
        session is over. A late EXTENDED does not move what is lost."""
        what = self._EVENTS.get(message.event)
        if what == EXTENDED:
            if not self.held.lost.is_set():
                self.held._valid_for(received, self._validity(message))
            return False
        if what == LOST:
            self._lose(f"lost: {message.reason}")
            return True
        if what == CLOSED:
            self.confirmed = True
            self._closed(message)
            if not self.leaving:
                self._lose(f"{self._UNASKED_END}: {message.reason}")
            return True
        return self._other(message)

    def _validity(self, message: Any) -> float:
        """An EXTENDED's validity, in seconds."""
        raise NotImplementedError

    def _closed(self, message: Any) -> None:
        """What the daemon's end (RELEASED, RESIGNED) says besides."""

    def _other(self, message: Any) -> bool:
        """A message of the kind's own (PROCLAIMED); ``True`` when over."""
        return False

    def stream_ended(self) -> None:
        """The daemon ended the stream (without its confirmation or LOST)."""
        self._ended(f"the daemon ended the {self._NOUN}")

    def stream_broke(self, error: RedlockdError) -> None:
        """The stream failed with ``error``."""
        self._ended(f"the {self._NOUN} broke: {error}")

    def cancelled(self) -> None:
        """The driver stopped following the stream."""
        self._ended(f"the {self._NOUN} was cancelled")

    def _ended(self, why: str) -> None:
        if not self.confirmed:
            self.ended_because = why
            if not self.leaving:
                self._lose(why)

    def _lose(self, reason: str) -> None:
        self.held._lose(reason)

    def watch(self, now: float) -> Optional[float]:
        """Seconds until what is held is due to be said lost (look again
        then), or ``None`` — stop watching — once it is lost: when ``now`` is
        ``LOST_MARGIN`` or less before ``valid_until`` without an extension,
        this loses it, so the holder is told before the validity ends."""
        if self.held.lost.is_set():
            return None
        left = self.held._lost_at - now
        if left > 0:
            return left
        self._lose(self._SILENT)
        return None

    def leave(self) -> Optional[Any]:
        """Starts leaving: the farewell to send, then half-close and wait
        for the confirmation up to ``CONFIRM_TIMEOUT``; ``None`` when what
        was held is lost: then nothing is to confirm, cancel the stream (the
        daemon ends a cancelled session at once; with a ``lock_delay`` it
        keeps the lock that much longer: a loss is not a release)."""
        self.leaving = True
        return None if self.held.lost.is_set() else self._farewell()

    def _farewell(self) -> Any:
        """The message that leaves (a release, a resignation)."""
        raise NotImplementedError

    def exit_error(self, answered: bool) -> Optional[RedlockdError]:
        """What leaving the block raises (``answered``: the stream ended
        before ``CONFIRM_TIMEOUT``): never silent about a loss, nor about a
        leaving the daemon did not confirm."""
        if self.held.lost.is_set():
            return self._LOST_ERROR(self.held.lost_reason)
        if not self.confirmed:
            why = self.ended_because if answered else f"no answer within {self.CONFIRM_TIMEOUT:g} s"
            return RedlockdError(f"the daemon did not confirm the {self._LEAVING} ({why})")
        return self._confirmed_error()

    def _confirmed_error(self) -> Optional[RedlockdError]:
        """What a confirmed end raises (``None``: nothing)."""
        return None

    def left(self, answered: bool, cause: Optional[BaseException]) -> bool:
        """Leaving the block: raises ``exit_error`` (chained to what the
        block raised, ``cause``) if there is one; else ``False`` (whatever
        the block raised goes on)."""
        failure = self.exit_error(answered)
        if failure is not None:
            raise failure from cause
        return False
