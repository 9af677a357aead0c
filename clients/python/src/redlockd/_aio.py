"""The asyncio client (grpc.aio): the same shape as ``Client``, awaited."""

from __future__ import annotations

import asyncio
import time
from typing import Iterable, List, Optional

import grpc
import grpc.aio

from . import _many
from . import _validate as v
from ._aio_hold import AsyncHold
from ._connect import TLS, settings
from ._errors import LockLost, Unavailable, from_rpc_error
from ._lease import LeaseInfo
from ._retry import CALL_SLACK, Backoff
from ._session import start_message
from .v1 import lock_pb2 as pb
from .v1 import lock_pb2_grpc


class AsyncClient:
    """An asyncio connection to one redlockd; ``await client.close()`` (or
    ``async with``) when done. Create it inside the event loop that uses
    it. Unset arguments come from the environment, as for ``Client``."""

    def __init__(self, addr: Optional[str] = None, token: Optional[str] = None, tls: Optional[TLS] = None):
        s = settings(addr, token, tls)
        self._metadata = s.metadata()
        if s.tls:
            self._channel = grpc.aio.secure_channel(s.target, s.channel_credentials())
        else:
            self._channel = grpc.aio.insecure_channel(s.target)
        self._stub = lock_pb2_grpc.LockStub(self._channel)

    async def close(self) -> None:
        """Closes the connection; open sessions end (and are released)."""
        await self._channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def _call(self, method: str, request, wait: float = 0.0):
        try:
            return await getattr(self._stub, method)(request, metadata=self._metadata, timeout=wait + CALL_SLACK)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    async def acquire(
        self,
        resource: str,
        ttl: Optional[v.Seconds] = 10,
        wait: v.Seconds = 0,
        owner: str = "",
        *,
        shared: bool = False,
        permits: int = 0,
        reentrancy_key: str = "",
    ) -> Optional["AsyncLease"]:
        """As ``Client.acquire``: ``None`` when someone else kept the lock.
        Cancelling the task gives up the wait."""
        v.resource(resource)
        v.owner(owner)
        kind = v.kind(shared, permits, reentrancy_key)
        ttl_s = v.optional_seconds(ttl, "ttl")
        backoff = Backoff(v.seconds(wait, "wait"))
        while True:
            left = backoff.left()
            request = pb.AcquireRequest(resource=resource, owner=owner, **kind)
            if ttl_s is not None:
                request.ttl.CopyFrom(v.to_wire(ttl_s))
            if left > 0:
                request.wait.CopyFrom(v.to_wire(left))
            sent = time.monotonic()  # the client rule: validity counts from here
            try:
                reply = await self._call("Acquire", request, left)
            except Unavailable:
                pause = backoff.pause()
                if pause is None:
                    raise
                await asyncio.sleep(pause)
                continue
            if not reply.acquired:
                return None
            lease = reply.lease
            valid_until = sent + v.from_wire(lease.validity)
            return AsyncLease(self, lease.resource, lease.value, lease.fencing_token, valid_until, ttl_s, **LeaseInfo._wire(lease))

    async def acquire_many(
        self,
        resources: Iterable[str],
        ttl: Optional[v.Seconds] = 10,
        wait: v.Seconds = 0,
        owner: str = "",
    ) -> Optional[List["AsyncLease"]]:
        """As ``Client.acquire_many``: a list of ``AsyncLease``, sorted by
        resource, or ``None`` when any of them stayed with someone else.
        Cancelling the task gives up the wait."""
        names = v.resources(resources)
        v.owner(owner)
        ttl_s = v.optional_seconds(ttl, "ttl")
        backoff = Backoff(v.seconds(wait, "wait"))

        def make(lease, valid_until):
            return AsyncLease(self, lease.resource, lease.value, lease.fencing_token, valid_until, ttl_s, **LeaseInfo._wire(lease))

        while True:
            left = backoff.left()
            request = _many.acquire_request(names, owner, ttl_s, left)
            sent = time.monotonic()  # the client rule: validity counts from here
            try:
                reply = await self._call("AcquireMany", request, left)
            except Unavailable:
                pause = backoff.pause()
                if pause is None:
                    raise
                await asyncio.sleep(pause)
                continue
            return _many.leases_of(reply, make, sent)

    async def release_many(self, leases: Iterable["AsyncLease"]) -> bool:
        """As ``Client.release_many``."""
        return (await self._call("ReleaseMany", _many.release_request(leases, AsyncLease))).released

    def hold(
        self,
        resource: str,
        ttl: Optional[v.Seconds] = 10,
        wait: v.Seconds = 5,
        owner: str = "",
        max_hold: Optional[v.Seconds] = None,
        *,
        shared: bool = False,
        permits: int = 0,
        reentrancy_key: str = "",
    ) -> AsyncHold:
        """As ``Client.hold``, with ``async with``; ``lease.lost`` is an
        ``asyncio.Event``. Cancelling the task gives up the wait, or, once
        held, leaves the block and releases."""
        start, wait_s = start_message(resource, ttl, wait, owner, max_hold, shared, permits, reentrancy_key)
        return AsyncHold(self._stub, self._metadata, start, wait_s)

    async def inspect(self, resource: str) -> pb.InspectResponse:
        """What each master holds for ``resource`` (never lock values)."""
        v.resource(resource)
        return await self._call("Inspect", pb.InspectRequest(resource=resource))


class AsyncLease(LeaseInfo):
    """A lock taken with ``AsyncClient.acquire``; ``async with lease:``
    releases on exit and raises ``LockLost`` when it was not held to the end."""

    __slots__ = ("_client", "_ttl")

    def __init__(
        self,
        client: AsyncClient,
        resource: str,
        value: str,
        fencing_token: int,
        valid_until: float,
        ttl,
        shared: bool = False,
        permits: int = 0,
        slot: int = 0,
    ):
        super().__init__(resource, value, fencing_token, valid_until, shared, permits, slot)
        self._client = client
        self._ttl = ttl

    async def extend(self, ttl: Optional[v.Seconds] = None) -> bool:
        """As ``Lease.extend``."""
        ttl_s = self._ttl if ttl is None else v.seconds(ttl, "ttl")
        request = pb.ExtendRequest(resource=self.resource, value=self._value)
        if ttl_s is not None:
            request.ttl.CopyFrom(v.to_wire(ttl_s))
        sent = time.monotonic()
        reply = await self._client._call("Extend", request)
        if reply.extended:
            self.valid_until = sent + v.from_wire(reply.validity)
        return reply.extended

    async def release(self) -> bool:
        """As ``Lease.release``."""
        request = pb.ReleaseRequest(resource=self.resource, value=self._value)
        return (await self._client._call("Release", request)).released

    async def __aenter__(self) -> "AsyncLease":
        return self

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        if not await self.release():
            raise LockLost("released, but the lock had expired or been taken over") from exc
        return False
