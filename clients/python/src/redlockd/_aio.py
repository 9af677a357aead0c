"""The asyncio client (grpc.aio): the same shape as ``Client``, awaited."""

from __future__ import annotations

import asyncio
import time
from typing import AsyncIterator, Optional

import grpc
import grpc.aio

from . import _common as c
from ._errors import LockLost, NotAcquired, RedlockdError, Unavailable
from .v1 import lock_pb2 as pb
from .v1 import lock_pb2_grpc


class AsyncClient:
    """An asyncio connection to one redlockd; ``await client.close()`` (or
    ``async with``) when done. Unset arguments come from the environment."""

    def __init__(self, addr: Optional[str] = None, token: Optional[str] = None, tls: Optional[c.TLS] = None):
        target, token, tls = c.settings(addr, token, tls)
        self._metadata = c.metadata(token)
        if tls:
            self._channel = grpc.aio.secure_channel(target, c.credentials(tls))
        else:
            self._channel = grpc.aio.insecure_channel(target)
        self._stub = lock_pb2_grpc.LockStub(self._channel)

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def acquire(
        self, resource: str, ttl: Optional[c.Seconds] = 10, wait: c.Seconds = 0, owner: str = ""
    ) -> Optional["AsyncLease"]:
        """As ``Client.acquire``."""
        c.check(resource, owner)
        ttl_s = None if ttl is None else c.seconds(ttl, "ttl")
        deadline = time.monotonic() + c.seconds(wait, "wait")
        while True:
            sent = time.monotonic()
            left = max(0.0, deadline - sent)
            request = pb.AcquireRequest(resource=resource, owner=owner)
            if ttl_s is not None:
                request.ttl.CopyFrom(c.wire(ttl_s))
            if left > 0:
                request.wait.CopyFrom(c.wire(left))
            try:
                reply = await self._stub.Acquire(request, metadata=self._metadata)
            except grpc.RpcError as e:
                failure = c.error(e)
                pause = c.retry_pause(deadline) if isinstance(failure, Unavailable) else None
                if pause is None:
                    raise failure from None
                await asyncio.sleep(pause)
                continue
            if not reply.acquired:
                return None
            lease = reply.lease
            return AsyncLease(self, lease.resource, lease.value, lease.fencing_token, sent + c.from_wire(lease.validity))

    def hold(
        self,
        resource: str,
        ttl: Optional[c.Seconds] = 10,
        wait: c.Seconds = 5,
        owner: str = "",
        max_hold: Optional[c.Seconds] = None,
    ) -> "AsyncHold":
        """As ``Client.hold``, with ``async with``; ``lease.lost`` is an
        ``asyncio.Event``."""
        c.check(resource, owner)
        return AsyncHold(self, resource, ttl, wait, owner, max_hold)

    async def inspect(self, resource: str) -> pb.InspectResponse:
        c.check(resource)
        try:
            return await self._stub.Inspect(pb.InspectRequest(resource=resource), metadata=self._metadata)
        except grpc.RpcError as e:
            raise c.error(e) from None


class AsyncLease(c.LeaseInfo):
    """A lock taken with ``AsyncClient.acquire``."""

    __slots__ = ("_client",)

    def __init__(self, client: AsyncClient, resource: str, value: str, fencing_token: int, valid_until: float):
        super().__init__(resource, value, fencing_token, valid_until)
        self._client = client

    async def extend(self, ttl: Optional[c.Seconds] = None) -> bool:
        request = pb.ExtendRequest(resource=self.resource, value=self._value)
        if ttl is not None:
            request.ttl.CopyFrom(c.wire(c.seconds(ttl, "ttl")))
        sent = time.monotonic()
        try:
            reply = await self._client._stub.Extend(request, metadata=self._client._metadata)
        except grpc.RpcError as e:
            raise c.error(e) from None
        if reply.extended:
            self.valid_until = sent + c.from_wire(reply.validity)
        return reply.extended

    async def release(self) -> bool:
        request = pb.ReleaseRequest(resource=self.resource, value=self._value)
        try:
            return (await self._client._stub.Release(request, metadata=self._client._metadata)).released
        except grpc.RpcError as e:
            raise c.error(e) from None


class AsyncHeldLease(c.LeaseInfo):
    """The lock of an async ``Hold`` session; ``lost`` is an ``asyncio.Event``."""

    __slots__ = ("lost", "lost_reason")

    def __init__(self, resource: str, value: str, fencing_token: int, valid_until: float):
        super().__init__(resource, value, fencing_token, valid_until)
        self.lost = asyncio.Event()
        self.lost_reason = ""


class AsyncHold:
    """An async ``Hold`` session (see ``AsyncClient.hold``)."""

    def __init__(self, client: AsyncClient, resource: str, ttl, wait, owner: str, max_hold):
        self._client = client
        self._start = pb.HoldStart(resource=resource, owner=owner)
        if ttl is not None:
            self._start.ttl.CopyFrom(c.wire(c.seconds(ttl, "ttl")))
        if max_hold is not None:
            self._start.max_hold.CopyFrom(c.wire(c.seconds(max_hold, "max_hold")))
        self._wait = c.seconds(wait, "wait")
        self._requests: "asyncio.Queue[Optional[pb.HoldRequest]]" = asyncio.Queue()
        self._released: Optional[bool] = None
        self._following: Optional[asyncio.Task] = None
        self.lease: Optional[AsyncHeldLease] = None

    async def __aenter__(self) -> AsyncHeldLease:
        deadline = time.monotonic() + self._wait
        while True:
            try:
                return await self._open(max(0.0, deadline - time.monotonic()))
            except Unavailable:
                pause = c.retry_pause(deadline)
                if pause is None:
                    raise
                await asyncio.sleep(pause)

    async def _open(self, wait: float) -> AsyncHeldLease:
        self._requests = asyncio.Queue()
        start = pb.HoldStart()
        start.CopyFrom(self._start)
        if wait > 0:
            start.wait.CopyFrom(c.wire(wait))
        self._requests.put_nowait(pb.HoldRequest(start=start))
        call = self._client._stub.Hold(self._outgoing(), metadata=self._client._metadata)
        try:
            first = await call.read()
        except grpc.RpcError as e:
            raise c.error(e) from None
        if first is grpc.aio.EOF:
            raise RedlockdError("the daemon ended the session before answering")
        received = time.monotonic()
        if first.event != pb.HOLD_EVENT_ACQUIRED:
            call.cancel()
            if first.event == pb.HOLD_EVENT_NOT_ACQUIRED:
                raise NotAcquired(first.reason)
            raise RedlockdError(f"the session ended before the lock was held: {first.reason}")
        lease = first.lease
        self.lease = AsyncHeldLease(lease.resource, lease.value, lease.fencing_token, received + c.from_wire(lease.validity))
        self._following = asyncio.ensure_future(self._follow(call))
        return self.lease

    async def _outgoing(self) -> AsyncIterator[pb.HoldRequest]:
        while True:
            request = await self._requests.get()
            if request is None:
                return  # half-close: the daemon releases at once
            yield request

    async def _follow(self, call) -> None:
        try:
            while True:
                event = await call.read()
                if event is grpc.aio.EOF:
                    break
                if event.event == pb.HOLD_EVENT_EXTENDED:
                    self.lease.valid_until = time.monotonic() + c.from_wire(event.lease.validity)
                elif event.event == pb.HOLD_EVENT_LOST:
                    self._lose(event.reason)
                    return
                elif event.event == pb.HOLD_EVENT_RELEASED:
                    self._released = event.held_to_end
                    return
            if self._released is None:
                self._lose("the daemon ended the session")
        except grpc.RpcError as e:
            if self._released is None:
                self._lose(f"the session failed: {e.details() if hasattr(e, 'details') else e}")

    def _lose(self, reason: str) -> None:
        self.lease.lost_reason = reason
        self.lease.lost.set()

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        self._requests.put_nowait(pb.HoldRequest(release=pb.HoldRelease()))
        self._requests.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.shield(self._following), timeout=10)
            answered = True
        except asyncio.TimeoutError:
            answered = False
        if self.lease.lost.is_set():
            raise LockLost(self.lease.lost_reason) from exc
        if not answered:
            raise RedlockdError("the daemon did not confirm the release within 10 s") from exc
        if self._released is False:
            raise LockLost("released, but a majority of the masters no longer held the lock") from exc
        return False
