"""The asyncio Hold session (``AsyncClient.hold``): one gRPC stream, a task
that reads the daemon's messages and one that watches ``valid_until``. What
it all means is the core's (``_session.py``); this only moves messages."""

from __future__ import annotations

import asyncio
import time
from typing import AsyncIterator, Optional

import grpc
import grpc.aio

from ._drivers import END, HoldStream, run_async
from ._errors import DeadlineExceeded, from_rpc_error
from ._lease import AsyncHeldLease
from ._retry import CALL_SLACK
from ._session import RELEASE_TIMEOUT
from ._steps import OpenSession
from .v1 import lock_pb2 as pb


class AsyncHold(HoldStream):
    """An async Hold session (see ``AsyncClient.hold``); enter it once."""

    async def __aenter__(self) -> AsyncHeldLease:
        steps = self._session.open(AsyncHeldLease)
        try:
            lease = await run_async(steps, self._open)
        except BaseException:  # also a cancelled wait: the daemon gives it up
            self._abandon()
            raise
        self._following = asyncio.ensure_future(self._follow())
        self._watching = asyncio.ensure_future(self._watch())
        return lease

    async def _open(self, step: OpenSession) -> Optional[pb.HoldResponse]:
        self._abandon()  # the stream of a try that failed
        self._requests = asyncio.Queue()
        self._requests.put_nowait(step.request)
        self._call = self._stub.Hold(_drain(self._requests), metadata=self._metadata)
        try:
            # A daemon that never answers must not hang the caller.
            first = await asyncio.wait_for(self._call.read(), step.wait + CALL_SLACK)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        except asyncio.TimeoutError:
            raise DeadlineExceeded(f"no answer from the daemon within {step.wait + CALL_SLACK:g} s") from None
        return None if first is grpc.aio.EOF else first

    async def _follow(self) -> None:
        try:
            message = await self._call.read()
            while message is not grpc.aio.EOF:
                if self._session.on(message, time.monotonic()):
                    return
                message = await self._call.read()
            self._session.stream_ended()
        except grpc.RpcError as e:
            self._session.stream_broke(from_rpc_error(e))
        except asyncio.CancelledError:
            self._session.cancelled()
            raise
        finally:
            self._requests.put_nowait(END)
            self._watching.cancel()

    async def _watch(self) -> None:
        delay = self._session.watch(time.monotonic())
        while delay is not None:
            await asyncio.sleep(delay)
            delay = self._session.watch(time.monotonic())

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        release = self._session.leave()
        answered = True
        if release is None:
            self._call.cancel()
        else:
            self._requests.put_nowait(release)
            self._requests.put_nowait(END)
            try:
                answered = bool((await asyncio.wait({self._following}, timeout=RELEASE_TIMEOUT))[0])
            finally:
                if not self._following.done():
                    # Not confirmed in time, or this task was cancelled: the
                    # daemon releases a cancelled session at once.
                    self._call.cancel()
        return self._session.left(answered, exc)


async def _drain(requests: "asyncio.Queue[Optional[pb.HoldRequest]]") -> AsyncIterator[pb.HoldRequest]:
    while True:
        request = await requests.get()
        if request is END:
            return  # half-close: the daemon releases at once
        yield request
