"""The asyncio Hold session (``AsyncClient.hold``): one gRPC stream, a task
that reads the daemon's messages and one that watches ``valid_until``."""

from __future__ import annotations

import asyncio
import time
from typing import AsyncIterator, Optional

import grpc
import grpc.aio

from ._errors import DeadlineExceeded, Unavailable, from_rpc_error
from ._retry import CALL_SLACK, Backoff
from ._session import RELEASE_TIMEOUT, HeldLeaseBase, SessionState, first_request, opened
from .v1 import lock_pb2 as pb

_END = None  # put on the request queue: half-close the stream


class AsyncHeldLease(HeldLeaseBase):
    """The lock of an async Hold session; ``lost`` is an ``asyncio.Event``."""

    __slots__ = ()

    def __init__(
        self,
        resource: str,
        value: str,
        fencing_token: int,
        valid_until: float,
        shared: bool = False,
        permits: int = 0,
        slot: int = 0,
    ):
        super().__init__(resource, value, fencing_token, valid_until, asyncio.Event(), shared, permits, slot)


class AsyncHold:
    """An async Hold session (see ``AsyncClient.hold``); enter it once."""

    def __init__(self, stub, metadata, start: pb.HoldStart, wait: float):
        self._stub = stub
        self._metadata = metadata
        self._start = start
        self._wait = wait
        self._requests: "Optional[asyncio.Queue[Optional[pb.HoldRequest]]]" = None
        self._call = None
        self._state: Optional[SessionState] = None
        self._following: Optional[asyncio.Task] = None
        self._watching: Optional[asyncio.Task] = None
        #: The held lease, once entered.
        self.lease: Optional[AsyncHeldLease] = None

    async def __aenter__(self) -> AsyncHeldLease:
        if self._call is not None:
            raise RuntimeError("a Hold session is entered once; call client.hold() again")
        backoff = Backoff(self._wait)
        while True:
            try:
                return await self._open(backoff.left())
            except Unavailable:
                pause = backoff.pause()
                if pause is None:
                    raise
                await asyncio.sleep(pause)

    async def _open(self, wait: float) -> AsyncHeldLease:
        requests: "asyncio.Queue[Optional[pb.HoldRequest]]" = asyncio.Queue()
        requests.put_nowait(first_request(self._start, wait))
        call = self._stub.Hold(_drain(requests), metadata=self._metadata)
        try:
            try:
                # A daemon that never answers must not hang the caller.
                first = await asyncio.wait_for(call.read(), wait + CALL_SLACK)
            except grpc.RpcError as e:
                raise from_rpc_error(e) from None
            except asyncio.TimeoutError:
                raise DeadlineExceeded(f"no answer from the daemon within {wait + CALL_SLACK:g} s") from None
            lease = opened(None if first is grpc.aio.EOF else first, time.monotonic(), AsyncHeldLease)
        except BaseException:  # also a cancelled wait: the daemon gives it up
            requests.put_nowait(_END)
            call.cancel()
            raise
        self._requests, self._call, self.lease = requests, call, lease
        self._state = SessionState(lease)
        self._following = asyncio.ensure_future(self._follow())
        self._watching = asyncio.ensure_future(self._watch())
        return lease

    async def _follow(self) -> None:
        try:
            while True:
                message = await self._call.read()
                if message is grpc.aio.EOF:
                    self._state.ended("the daemon ended the session")
                    return
                if self._state.on(message):
                    return
        except grpc.RpcError as e:
            self._state.ended(f"the session broke: {from_rpc_error(e)}")
        except asyncio.CancelledError:
            self._state.ended("the session was cancelled")
            raise
        finally:
            self._requests.put_nowait(_END)
            self._watching.cancel()

    async def _watch(self) -> None:
        lease = self.lease
        while True:
            await asyncio.sleep(lease.remaining)
            if time.monotonic() >= lease.valid_until:
                self._state.silent()
                return

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        self._state.releasing = True
        done = True
        if self.lease.lost.is_set():
            # Nothing to confirm: the daemon releases a cancelled session at
            # once (and one that said LOST has released already).
            self._call.cancel()
        else:
            self._requests.put_nowait(pb.HoldRequest(release=pb.HoldRelease()))
            self._requests.put_nowait(_END)
            try:
                done = bool((await asyncio.wait({self._following}, timeout=RELEASE_TIMEOUT))[0])
            finally:
                if not self._following.done():
                    # Not confirmed in time, or this task was cancelled: the
                    # daemon releases a cancelled session at once.
                    self._call.cancel()
        failure = self._state.exit_error(done)
        if failure is not None:
            raise failure from exc
        return False


async def _drain(requests: "asyncio.Queue[Optional[pb.HoldRequest]]") -> AsyncIterator[pb.HoldRequest]:
    while True:
        request = await requests.get()
        if request is _END:
            return  # half-close: the daemon releases at once
        yield request
