"""The asyncio campaign (``AsyncClient.campaign``): one gRPC stream, a task
that reads the daemon's messages into a queue (each stamped with when it
arrived) and one that runs the candidacy's ``follow``. What it all means is
the core's (``_leadership.py``); this only moves messages."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Optional

import grpc
import grpc.aio

from ._aio_hold import _drain
from ._drivers import END, run_async
from ._election import Value
from ._errors import RedlockdError, from_rpc_error
from ._leadership import RESIGN_TIMEOUT, Candidacy, LeadershipBase
from ._steps import ENDED, TIMED_OUT, Cancel, Close, OpenStream, Receive, Send, Step
from .v1 import election_pb2 as epb


class AsyncLeadership(LeadershipBase):
    """A leadership won with ``AsyncClient.campaign``; ``lost`` is an
    ``asyncio.Event``."""

    __slots__ = ()
    _event = asyncio.Event

    async def proclaim(self, value: Value) -> None:
        """As ``Leadership.proclaim``."""
        await self._driver._proclaim(value)


class AsyncCampaign:
    """An async campaign (see ``AsyncClient.campaign``); enter it once."""

    def __init__(self, stub, metadata, start: epb.CampaignStart, wait: Optional[float]):
        self._candidacy = Candidacy(start, wait)
        self._stream = AsyncStream(stub, metadata)
        self._following: Optional[asyncio.Future] = None

    async def __aenter__(self) -> AsyncLeadership:
        try:
            leadership = await run_async(self._candidacy.open(AsyncLeadership), self._stream.perform)
        except BaseException:  # also a cancelled wait: the daemon withdraws the candidate
            self._stream.cancel()
            raise
        leadership._driver = self
        self._following = asyncio.ensure_future(self._follow())
        return leadership

    async def _follow(self) -> None:
        try:
            await run_async(self._candidacy.follow(), self._stream.perform)
        except asyncio.CancelledError:
            self._candidacy.cancelled()
            raise

    async def _proclaim(self, value: Value) -> None:
        request, told = self._candidacy.proclaim(value)
        await self._stream.perform(Send(request))
        try:
            answered = bool(await asyncio.wait_for(told.wait(), RESIGN_TIMEOUT))
        except asyncio.TimeoutError:
            answered = False
        self._candidacy.proclaimed(answered)

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        resign = self._candidacy.leave()
        answered = True
        if resign is None:
            self._stream.cancel()
        else:
            await self._stream.perform(Send(resign))
            await self._stream.perform(Close())
            try:
                answered = bool((await asyncio.wait({self._following}, timeout=RESIGN_TIMEOUT))[0])
            finally:
                if not self._following.done():
                    # Not confirmed in time, or this task was cancelled.
                    self._stream.cancel()
        return self._candidacy.left(answered, exc)


class AsyncStream:
    """Performs a candidacy's stream steps on grpc.aio: the stream's
    requests go through a queue that the stream drains; a task reads its
    messages into another, so that ``Receive`` can wait with a limit."""

    def __init__(self, stub, metadata):
        self._stub = stub
        self._metadata = metadata
        self._call: Any = None
        self._reader: Optional[asyncio.Future] = None
        # Made by OpenStream, in the event loop that runs the campaign.
        self._requests: Optional[asyncio.Queue] = None
        self._replies: Optional[asyncio.Queue] = None

    async def perform(self, step: Step) -> Any:
        if isinstance(step, OpenStream):
            self.cancel()  # the stream of a try that failed
            self._requests, self._replies = asyncio.Queue(), asyncio.Queue()
            self._requests.put_nowait(step.request)
            self._call = getattr(self._stub, step.method)(_drain(self._requests), metadata=self._metadata)
            self._reader = asyncio.ensure_future(_read(self._call, self._replies))
        elif isinstance(step, Receive):
            return await self._receive(step.within)
        elif isinstance(step, Send):
            self._requests.put_nowait(step.request)
        elif isinstance(step, Close):
            self._requests.put_nowait(END)
        elif isinstance(step, Cancel):
            self.cancel()
        else:
            raise RuntimeError(f"a campaign's stream cannot perform {type(step).__name__}")
        return None

    async def _receive(self, within: Optional[float]):
        try:
            got = await asyncio.wait_for(self._replies.get(), within)
        except asyncio.TimeoutError:
            return TIMED_OUT
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


async def _read(call, replies: "asyncio.Queue") -> None:
    try:
        message = await call.read()
        while message is not grpc.aio.EOF:
            replies.put_nowait((message, time.monotonic()))
            message = await call.read()
        replies.put_nowait(ENDED)
    except grpc.RpcError as e:
        replies.put_nowait(from_rpc_error(e))
    except asyncio.CancelledError:
        replies.put_nowait(RedlockdError("the stream was cancelled"))
