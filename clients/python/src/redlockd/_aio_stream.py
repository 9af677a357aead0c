"""The asyncio driver of the session machine (``_machine.py``), for a Hold
session and a campaign alike: one gRPC stream (grpc.aio), a task that reads
the daemon's messages into a queue (each stamped with when it arrived) and
one that runs the machine's ``follow``. What it all means is the machine's;
this only moves messages."""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Optional, Type

import grpc
import grpc.aio

from ._drivers import END, StreamBase, run_async
from ._errors import RedlockdError, from_rpc_error
from ._machine import SessionMachine, W
from ._steps import ENDED, TIMED_OUT, Close, Receive, Send, Step


class AsyncSessionDriver:
    """Runs one session machine on an ``AsyncStream``: ``_enter`` opens it
    and starts following, ``_exit`` leaves. ``AsyncHold`` and
    ``AsyncCampaign`` are this, with their types."""

    def __init__(self, machine: SessionMachine, stub, metadata):
        self._machine = machine
        self._stream = AsyncStream(stub, metadata)
        self._following: Optional[asyncio.Future] = None

    async def _enter(self, kind: Type[W]) -> W:
        steps = self._machine.open(kind)  # raises at once when entered before
        try:
            held = await run_async(steps, self._perform)
        except BaseException:  # also a cancelled wait: the daemon gives it up
            self._stream.cancel()
            raise
        self._following = asyncio.ensure_future(self._follow())
        return held

    async def _perform(self, step: Step) -> Any:
        return await self._stream.perform(step)

    async def _follow(self) -> None:
        try:
            await run_async(self._machine.follow(), self._stream.perform)
        except asyncio.CancelledError:
            self._machine.cancelled()
            raise
        finally:
            self._stream.act(Close())  # over: grpc's reader of the requests may stop

    async def _exit(self, cause: Optional[BaseException]) -> bool:
        farewell = self._machine.leave()
        answered = True
        if farewell is None:
            self._stream.cancel()
        else:
            await self._stream.perform(Send(farewell))
            await self._stream.perform(Close())
            try:
                done, _ = await asyncio.wait({self._following}, timeout=self._machine.CONFIRM_TIMEOUT)
                answered = bool(done)
            finally:
                if not self._following.done():
                    # Not confirmed in time, or this task was cancelled: the
                    # daemon ends a cancelled session at once.
                    self._stream.cancel()
        return self._machine.left(answered, cause)


class AsyncStream(StreamBase):
    """A session's stream on grpc.aio; a task reads its messages."""

    _queue = asyncio.Queue

    def __init__(self, stub, metadata):
        super().__init__(stub, metadata)
        self._reader: Optional[asyncio.Future] = None

    async def perform(self, step: Step) -> Any:
        return await self._receive(step.within) if isinstance(step, Receive) else self.act(step)

    async def _receive(self, within: Optional[float]) -> Any:
        try:
            got = await asyncio.wait_for(self._replies.get(), within)
        except asyncio.TimeoutError:
            return TIMED_OUT
        return self._took(got)

    def _start_reading(self) -> None:
        self._reader = asyncio.ensure_future(_read(self._call, self._replies))

    @staticmethod
    async def _drain(requests: "asyncio.Queue") -> AsyncIterator[Any]:
        while True:
            request = await requests.get()
            if request is END:
                return  # half-close: the daemon ends the session at once
            yield request


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
