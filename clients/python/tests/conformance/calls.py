"""The conformance calls (clients/conformance/README.md#calls) through the
public API of one Python client: ``Client`` (blocking, each call in a
thread) or ``AsyncClient`` (awaited). Each call returns the fields its
expectations compare and the handle it binds."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, Dict, Optional, Tuple

import redlockd
from redlockd.v1 import lock_pb2 as pb

#: Typed errors by the code the scenarios name; the first that matches.
CODES = (
    (redlockd.InvalidArgument, "INVALID_ARGUMENT"),
    (redlockd.FailedPrecondition, "FAILED_PRECONDITION"),
    (redlockd.Unavailable, "UNAVAILABLE"),
    (redlockd.NotElected, "NOT_ELECTED"),
    (redlockd.NotAcquired, "NOT_ACQUIRED"),
)
#: Closing a stream's reader ends it with this.
CLOSED = object()


def seconds(args: dict, key: str, default: Any = None) -> Any:
    """``args[key]`` (milliseconds) in seconds, the clients' unit."""
    return args[key] / 1000 if key in args else default


class Stream:
    """An observe or watch view, read by a task or thread into a queue so
    that ``next`` can wait with a limit."""

    def __init__(self, view, convert: Callable[[Any], dict]):
        self.view = view
        self.convert = convert
        self.queue: asyncio.Queue = asyncio.Queue()


class Calls:
    """The calls, through ``client`` (a ``redlockd.Client`` or ``AsyncClient``)."""

    def __init__(self, client):
        self.client = client
        self.blocking = isinstance(client, redlockd.Client)

    async def do(self, fn: Callable, *args, **kwargs) -> Any:
        """``fn(*args, **kwargs)``: in a thread when blocking, else awaited."""
        if self.blocking:
            return await asyncio.to_thread(fn, *args, **kwargs)
        return await fn(*args, **kwargs)

    async def enter(self, manager) -> Any:
        return await self.do(manager.__enter__ if self.blocking else manager.__aenter__)

    async def exit(self, manager) -> Any:
        return await self.do(manager.__exit__ if self.blocking else manager.__aexit__, None, None, None)

    @staticmethod
    def code(error: Exception) -> str:
        for kind, code in CODES:
            if isinstance(error, kind):
                return code
        return type(error).__name__

    async def call(self, verb: str, args: dict) -> Tuple[dict, Any]:
        method = getattr(self, f"call_{verb}", None)
        if method is None:
            raise ValueError(f"no such call {verb!r}")
        return await method(args)

    # Locks.

    async def call_acquire(self, a: dict):
        lease = await self.do(
            self.client.acquire,
            a["resource"],
            ttl=seconds(a, "ttl_ms"),
            wait=seconds(a, "wait_ms", 0),
            owner=a.get("owner", ""),
            shared=a.get("shared", False),
            permits=a.get("permits", 0),
            reentrancy_key=a.get("reentrancy_key", ""),
            lock_delay=seconds(a, "lock_delay_ms"),
        )
        return ({"acquired": False}, None) if lease is None else ({"acquired": True, **lease_fields(lease)}, lease)

    async def call_extend(self, a: dict):
        return {"extended": await self.do(a["lease"].extend, seconds(a, "ttl_ms"))}, None

    async def call_release(self, a: dict):
        return {"released": await self.do(a["lease"].release)}, None

    async def call_inspect(self, a: dict):
        view = await self.do(self.client.inspect, a["resource"])
        fields = {"held": view.held, "readers": view.readers, "permits": view.permits, "permits_out": view.permits_out}
        if view.HasField("holder"):
            fields.update(token=view.holder.fencing_token, owner=view.holder.owner)
        return fields, None

    async def call_acquire_many(self, a: dict):
        leases = await self.do(
            self.client.acquire_many,
            a["resources"],
            ttl=seconds(a, "ttl_ms"),
            wait=seconds(a, "wait_ms", 0),
            owner=a.get("owner", ""),
        )
        if leases is None:
            return {"acquired": False}, None
        fields: Dict[str, Any] = {
            "acquired": True,
            "count": len(leases),
            "resources": [lease.resource for lease in leases],
            "tokens": [lease.fencing_token for lease in leases],
        }
        fields.update({str(i): lease_fields(lease) for i, lease in enumerate(leases)})
        return fields, leases

    async def call_extend_many(self, a: dict):
        return {"extended": await self.do(self.client.extend_many, a["set"], seconds(a, "ttl_ms"))}, None

    async def call_release_many(self, a: dict):
        return {"released": await self.do(self.client.release_many, a["set"])}, None

    # Sessions.

    async def call_hold(self, a: dict):
        session = self.client.hold(
            a["resource"],
            ttl=seconds(a, "ttl_ms"),
            wait=seconds(a, "wait_ms", 0),
            owner=a.get("owner", ""),
            max_hold=seconds(a, "max_hold_ms"),
            shared=a.get("shared", False),
            permits=a.get("permits", 0),
            reentrancy_key=a.get("reentrancy_key", ""),
            lock_delay=seconds(a, "lock_delay_ms"),
        )
        lease = await self.enter(session)
        return {"held": True, **lease_fields(lease)}, Held(session, lease)

    async def call_release_hold(self, a: dict):
        held: Held = a["hold"]
        held.left = True
        try:
            await self.exit(held.manager)
        except redlockd.LockLost:
            return {"released": False}, None
        return {"released": True}, None

    # Elections.

    async def call_campaign(self, a: dict):
        campaign = self.client.campaign(
            a["election"],
            a["candidate"],
            a.get("value", ""),
            ttl=seconds(a, "ttl_ms"),
            wait=seconds(a, "wait_ms"),
        )
        leadership = await self.enter(campaign)
        fields = {"elected": True, "term": leadership.term, "value": leadership.value.decode()}
        return fields, Held(campaign, leadership)

    async def call_leader(self, a: dict):
        return leader_fields(await self.do(self.client.leader, a["election"])), None

    async def call_proclaim(self, a: dict):
        if "leadership" in a:
            await self.do(a["leadership"].lease.proclaim, a["value"])
        else:
            await self.do(self.client.proclaim, a["election"], int(a["term"]), a["value"])
        return {}, None

    async def call_resign(self, a: dict):
        if "leadership" in a:
            a["leadership"].left = True
            await self.exit(a["leadership"].manager)
        else:
            await self.do(self.client.resign, a["election"], int(a["term"]))
        return {}, None

    async def call_observe(self, a: dict):
        return await self.follow(self.client.observe, a["election"], leader_fields)

    async def call_watch(self, a: dict):
        return await self.follow(self.client.watch, a["resource"], watch_fields)

    async def call_close(self, a: dict):
        await self.close(a["stream"])
        return {}, None

    # Streams.

    async def follow(self, opener: Callable, name: str, convert: Callable[[Any], dict]):
        """Opens a view, starts reading it, and answers its first state."""
        stream = Stream(opener(name), convert)
        loop = asyncio.get_running_loop()
        if self.blocking:

            def read() -> None:
                try:
                    for state in stream.view:
                        loop.call_soon_threadsafe(stream.queue.put_nowait, state)
                except Exception as e:  # noqa: BLE001 - handed to the reader
                    loop.call_soon_threadsafe(stream.queue.put_nowait, e)
                loop.call_soon_threadsafe(stream.queue.put_nowait, CLOSED)

            threading.Thread(target=read, name="conformance-stream", daemon=True).start()
        else:

            async def read() -> None:
                try:
                    async for state in stream.view:
                        stream.queue.put_nowait(state)
                except Exception as e:  # noqa: BLE001 - handed to the reader
                    stream.queue.put_nowait(e)
                stream.queue.put_nowait(CLOSED)

            stream.task = asyncio.ensure_future(read())
        first = await self.next(stream, 10)
        if first is None:
            raise TimeoutError(f"no first state of {name} within 10 s")
        return first, stream

    async def next(self, stream: Stream, within: float) -> Optional[dict]:
        """The stream's next state's fields; ``None`` when none came in time."""
        try:
            state = await asyncio.wait_for(stream.queue.get(), within)
        except asyncio.TimeoutError:
            return None
        if isinstance(state, Exception):
            raise state
        if state is CLOSED:
            stream.queue.put_nowait(CLOSED)
            raise EOFError("the stream ended")
        return stream.convert(state)

    async def close(self, stream: Stream) -> None:
        if self.blocking:
            stream.view.close()
        else:
            await stream.view.close()

    async def lost(self, held: "Held", within: float) -> bool:
        """Whether the session or leadership was told lost within ``within``."""
        event = held.lease.lost
        if isinstance(event, threading.Event):
            return await asyncio.to_thread(event.wait, within)
        try:
            await asyncio.wait_for(event.wait(), within)
            return True
        except asyncio.TimeoutError:
            return False

    async def clean_up(self, handles: dict) -> None:
        """Ends what a scenario left open, whatever its outcome."""
        for handle in handles.values():
            leases = handle if isinstance(handle, list) else [handle]
            for thing in leases:
                try:
                    if isinstance(thing, Held) and not thing.left:
                        thing.left = True
                        await asyncio.wait_for(self.exit(thing.manager), 10)
                    elif isinstance(thing, Stream):
                        await self.close(thing)
                    elif isinstance(thing, (redlockd.Lease, redlockd.AsyncLease)):
                        await asyncio.wait_for(self.do(thing.release), 10)
                except Exception:  # noqa: BLE001, S110 - already lost, released or unreachable: nothing to end
                    pass


class Held:
    """A session or a campaign: its context manager and what entering gave."""

    def __init__(self, manager, lease):
        self.manager = manager
        self.lease = lease
        self.left = False


def lease_fields(lease) -> dict:
    return {
        "token": lease.fencing_token,
        "shared": lease.shared,
        "permits": lease.permits,
        "slot": lease.slot,
        "resource": lease.resource,
    }


def leader_fields(leader: Optional[redlockd.Leader]) -> dict:
    if leader is None:
        return {"elected": False}
    return {"elected": True, "candidate": leader.candidate, "value": leader.value.decode(), "term": leader.term}


def watch_fields(change: pb.WatchResponse) -> dict:
    fields = {
        "kind": pb.WatchEvent.Name(change.event).removeprefix("WATCH_EVENT_"),
        "held": change.held,
        "readers": change.readers,
        "permits": change.permits,
        "permits_out": change.permits_out,
    }
    if change.HasField("holder"):
        fields.update(token=change.holder.fencing_token, owner=change.holder.owner)
    return fields
