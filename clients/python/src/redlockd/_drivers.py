"""What the blocking and the asyncio drivers share: the loop that runs an
operation of the core (``_steps.py``), performing each step with
``perform`` and sleeping through pauses — blocking (``run``) or on asyncio
(``run_async``) — and what a session's two streams share (``StreamBase``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable

from ._errors import RedlockdError
from ._steps import ENDED, Cancel, Close, Drive, OpenStream, Pause, Send, Step, Steps, T

#: Put on a session's request queue: half-close the stream.
END = None


def run(steps: Steps[T], perform: Callable[[Step], Any]) -> T:
    drive = Drive(steps)
    for step in drive:
        try:
            drive.answer(time.sleep(step.seconds) if isinstance(step, Pause) else perform(step))
        except Exception as error:
            drive.fail(error)
    return drive.result


async def run_async(steps: Steps[T], perform: Callable[[Step], Awaitable[Any]]) -> T:
    drive = Drive(steps)
    for step in drive:
        try:
            drive.answer(await (asyncio.sleep(step.seconds) if isinstance(step, Pause) else perform(step)))
        except Exception as error:
            drive.fail(error)
    return drive.result


class StreamBase:
    """What the blocking and the asyncio streams of a session share
    (``_sync_stream.Stream``, ``_aio_stream.AsyncStream``): the stream's
    requests go through a queue (``_queue``: ``queue.Queue`` or
    ``asyncio.Queue``) that the stream drains until ``END``; a reader
    (``_start_reading``) puts its messages into another, each stamped with
    when it arrived, then ``ENDED`` or the typed error, so that ``Receive``
    — the one step each waits for its own way — can wait with a limit."""

    _queue: Any

    def __init__(self, stub, metadata):
        self._stub = stub
        self._metadata = metadata
        self._call: Any = None
        # Made by OpenStream (asyncio's, in the event loop that runs the session).
        self._requests: Any = None
        self._replies: Any = None

    def act(self, step: Step) -> None:
        """Performs every step but ``Receive``."""
        if isinstance(step, OpenStream):
            self.cancel()  # the stream of a try that failed
            self._requests, self._replies = self._queue(), self._queue()
            self._requests.put_nowait(step.request)
            self._call = getattr(self._stub, step.method)(self._drain(self._requests), metadata=self._metadata)
            self._start_reading()
        elif isinstance(step, Send):
            self._requests.put_nowait(step.request)
        elif isinstance(step, Close):
            self._requests.put_nowait(END)
        elif isinstance(step, Cancel):
            self.cancel()
        else:
            raise RuntimeError(f"a session's stream cannot perform {type(step).__name__}")

    def _drain(self, requests: Any) -> Any:
        """The stream's request iterator, until ``END`` (half-close)."""
        raise NotImplementedError

    def _start_reading(self) -> None:
        raise NotImplementedError

    def _took(self, got: Any) -> Any:
        """What ``Receive`` gives of what the reader put."""
        if isinstance(got, RedlockdError) or got == ENDED:
            self._replies.put_nowait(got)  # what ended the stream, to every later Receive
        if isinstance(got, RedlockdError):
            raise got
        return got

    def cancel(self) -> None:
        """Ends the stream, if one is open; the daemon sees the client gone."""
        if self._call is not None:
            self._requests.put_nowait(END)
            self._call.cancel()
            self._call = None
