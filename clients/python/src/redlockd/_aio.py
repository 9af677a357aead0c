"""The asyncio client (grpc.aio): the same shape as ``Client``, awaited."""

from __future__ import annotations

from typing import Iterable, List, Optional

import grpc
import grpc.aio

from . import _calls as calls
from . import _election as elections
from . import _validate as v
from ._aio_campaign import AsyncCampaign
from ._aio_hold import AsyncHold
from ._connect import TLS, settings
from ._drivers import run_async
from ._errors import LockLost, from_rpc_error
from ._leadership import start_message as campaign_start
from ._lease import LeaseBase
from ._retry import CALL_SLACK
from ._session import start_message
from ._steps import Call, Steps, T
from ._tracing import aio_interceptors
from ._views import AsyncView
from .v1 import election_pb2_grpc, lock_pb2_grpc
from .v1 import lock_pb2 as pb


class AsyncClient:
    """An asyncio connection to one redlockd; ``await client.close()`` (or
    ``async with``) when done. Create it inside the event loop that uses
    it. Unset arguments come from the environment, as for ``Client``."""

    def __init__(self, addr: Optional[str] = None, token: Optional[str] = None, tls: Optional[TLS] = None):
        s = settings(addr, token, tls)
        self._metadata = s.metadata()
        if s.tls:
            self._channel = grpc.aio.secure_channel(s.target, s.channel_credentials(), interceptors=aio_interceptors())
        else:
            self._channel = grpc.aio.insecure_channel(s.target, interceptors=aio_interceptors())
        self._stub = lock_pb2_grpc.LockStub(self._channel)
        self._elections = election_pb2_grpc.ElectionStub(self._channel)
        self._stubs = {"Lock": self._stub, "Election": self._elections}

    async def close(self) -> None:
        """Closes the connection; open sessions end (and are released)."""
        await self._channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def _call(self, call: Call):
        try:
            return await getattr(self._stubs[call.service], call.method)(
                call.request, metadata=self._metadata, timeout=call.wait + CALL_SLACK
            )
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    async def _run(self, steps: Steps[T]) -> T:
        return await run_async(steps, self._call)

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
        lock_delay: Optional[v.Seconds] = None,
    ) -> Optional["AsyncLease"]:
        """As ``Client.acquire``: ``None`` when someone else kept the lock.
        Cancelling the task gives up the wait."""
        return await self._run(
            calls.acquire(
                self, AsyncLease, resource, ttl, wait, owner, shared, permits, reentrancy_key, lock_delay=lock_delay
            )
        )

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
        return await self._run(calls.acquire_many(self, AsyncLease, resources, ttl, wait, owner))

    async def release_many(self, leases: Iterable["AsyncLease"]) -> bool:
        """As ``Client.release_many``."""
        return await self._run(calls.release_many(leases, AsyncLease))

    async def extend_many(self, leases: Iterable["AsyncLease"], ttl: Optional[v.Seconds] = None) -> bool:
        """As ``Client.extend_many``."""
        return await self._run(calls.extend_many(leases, AsyncLease, ttl))

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
        lock_delay: Optional[v.Seconds] = None,
    ) -> AsyncHold:
        """As ``Client.hold``, with ``async with``; ``lease.lost`` is an
        ``asyncio.Event``. Cancelling the task gives up the wait, or, once
        held, leaves the block and releases."""
        start, wait_s = start_message(
            resource, ttl, wait, owner, max_hold, shared, permits, reentrancy_key, lock_delay
        )
        return AsyncHold(self._stub, self._metadata, start, wait_s)

    async def inspect(self, resource: str) -> pb.InspectResponse:
        """What each master holds for ``resource`` (never lock values)."""
        return await self._run(calls.inspect(resource))

    def watch(self, resource: str) -> AsyncView[pb.WatchResponse]:
        """As ``Client.watch``, with ``async for``; ``await view.close()``
        (or ``async with``) ends the stream."""
        request = elections.watch_request(resource)
        return AsyncView(self._stub.Watch(request, metadata=self._metadata), lambda change: change)

    def campaign(
        self,
        election: str,
        candidate: str,
        value: elections.Value = b"",
        ttl: Optional[v.Seconds] = 10,
        wait: Optional[v.Seconds] = None,
        max_hold: Optional[v.Seconds] = None,
        *,
        lock_delay: Optional[v.Seconds] = None,
    ) -> AsyncCampaign:
        """As ``Client.campaign``, with ``async with``; ``leadership.lost``
        is an ``asyncio.Event`` and ``await leadership.proclaim(value)``
        publishes. Cancelling the task gives up the wait, or, once elected,
        leaves the block and resigns."""
        start = campaign_start(election, candidate, value, ttl, max_hold, lock_delay)
        return AsyncCampaign(self._elections, self._metadata, start, v.optional_seconds(wait, "wait"))

    async def leader(self, election: str) -> Optional[elections.Leader]:
        """As ``Client.leader``."""
        return await self._run(elections.leader(election))

    def observe(self, election: str) -> AsyncView[Optional[elections.Leader]]:
        """As ``Client.observe``, with ``async for``."""
        request = elections.observe_request(election)
        return AsyncView(self._elections.Observe(request, metadata=self._metadata), elections.leader_of)

    async def proclaim(self, election: str, term: int, value: elections.Value) -> None:
        """As ``Client.proclaim``."""
        await self._run(elections.proclaim(election, term, value))

    async def resign(self, election: str, term: int) -> None:
        """As ``Client.resign``."""
        await self._run(elections.resign(election, term))

    async def participants(self, election: str) -> List[str]:
        """As ``Client.participants``."""
        return await self._run(elections.participants(election))


class AsyncLease(LeaseBase):
    """A lock taken with ``AsyncClient.acquire``; ``async with lease:``
    releases on exit and raises ``LockLost`` when it was not held to the end."""

    __slots__ = ()

    async def extend(self, ttl: Optional[v.Seconds] = None) -> bool:
        """As ``Lease.extend``."""
        return await self._client._run(calls.extend(self, ttl))

    async def release(self) -> bool:
        """As ``Lease.release``."""
        return await self._client._run(calls.release(self))

    async def __aenter__(self) -> "AsyncLease":
        return self

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        if not await self.release():
            raise LockLost(calls.NOT_HELD_TO_END) from exc
        return False
