"""What the blocking and the asyncio drivers share: the loop that runs an
operation of the core (``_steps.py``), performing each step with
``perform`` and sleeping through pauses — blocking (``run``) or on asyncio
(``run_async``) — and what a Hold session's driver keeps (``HoldStream``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable, Optional

from ._lease import HeldLeaseBase
from ._session import Session
from ._steps import Drive, Pause, Step, Steps, T
from .v1 import lock_pb2 as pb

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


class HoldStream:
    """A Hold session's driver: the session (the core's), the stub to open
    its stream with, and the stream once opened with its request queue
    (``queue.Queue`` or ``asyncio.Queue``: the stream reads it until
    ``END``)."""

    def __init__(self, stub, metadata, start: pb.HoldStart, wait: float):
        self._stub = stub
        self._metadata = metadata
        self._session = Session(start, wait)
        self._requests: Any = None
        self._call: Any = None

    @property
    def lease(self) -> Optional[HeldLeaseBase]:
        """The held lease, once entered."""
        return self._session.lease

    def _abandon(self) -> None:
        """Ends a stream that holds nothing (a try that failed), and its
        request iterator, which grpc may be reading on a thread of its own."""
        if self._call is not None:
            self._requests.put_nowait(END)
            self._call.cancel()
            self._call = None
