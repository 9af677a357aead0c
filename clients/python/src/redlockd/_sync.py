"""The blocking client (grpcio)."""

from __future__ import annotations

import queue
import threading
import time
from typing import Iterator, Optional

import grpc

from . import _common as c
from ._errors import LockLost, NotAcquired, RedlockdError, Unavailable
from .v1 import lock_pb2 as pb
from .v1 import lock_pb2_grpc


class Client:
    """A connection to one redlockd. Thread-safe; close it (or use it as a
    context manager) when done. Unset arguments come from the environment
    (``REDLOCKD_ADDR``, ``REDLOCKD_TOKEN``, ``REDLOCKD_CA``/``CERT``/``KEY``)."""

    def __init__(self, addr: Optional[str] = None, token: Optional[str] = None, tls: Optional[c.TLS] = None):
        target, token, tls = c.settings(addr, token, tls)
        self._metadata = c.metadata(token)
        self._channel = grpc.secure_channel(target, c.credentials(tls)) if tls else grpc.insecure_channel(target)
        self._stub = lock_pb2_grpc.LockStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def acquire(self, resource: str, ttl: Optional[c.Seconds] = 10, wait: c.Seconds = 0, owner: str = "") -> Optional["Lease"]:
        """Takes the lock on ``resource``, trying for up to ``wait`` seconds.
        ``None`` when someone else kept it all along (contention is a value).
        A wait the daemon cuts short with UNAVAILABLE is retried with jitter
        until it runs out."""
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
                reply = self._stub.Acquire(request, metadata=self._metadata)
            except grpc.RpcError as e:
                failure = c.error(e)
                pause = c.retry_pause(deadline) if isinstance(failure, Unavailable) else None
                if pause is None:
                    raise failure from None
                time.sleep(pause)
                continue
            if not reply.acquired:
                return None
            lease = reply.lease
            return Lease(self, lease.resource, lease.value, lease.fencing_token, sent + c.from_wire(lease.validity))

    def hold(
        self,
        resource: str,
        ttl: Optional[c.Seconds] = 10,
        wait: c.Seconds = 5,
        owner: str = "",
        max_hold: Optional[c.Seconds] = None,
    ) -> "Hold":
        """A ``Hold`` session, as a context manager: ``with client.hold(r) as
        lease:`` enters once the lock is held (``NotAcquired`` when the wait
        runs out) and releases on exit; the daemon extends the lock
        meanwhile. ``lease.lost`` is set the moment the lock is lost, and
        leaving the block after a loss raises ``LockLost``."""
        c.check(resource, owner)
        return Hold(self, resource, ttl, wait, owner, max_hold)

    def inspect(self, resource: str) -> pb.InspectResponse:
        """What the masters hold for ``resource`` (never lock values)."""
        c.check(resource)
        try:
            return self._stub.Inspect(pb.InspectRequest(resource=resource), metadata=self._metadata)
        except grpc.RpcError as e:
            raise c.error(e) from None


class Lease(c.LeaseInfo):
    """A lock taken with ``acquire``: extend it, release it."""

    __slots__ = ("_client",)

    def __init__(self, client: Client, resource: str, value: str, fencing_token: int, valid_until: float):
        super().__init__(resource, value, fencing_token, valid_until)
        self._client = client

    def extend(self, ttl: Optional[c.Seconds] = None) -> bool:
        """Resets the lock's time to live (``None``: the daemon's default).
        ``False`` when the lock is lost: stop working under it."""
        request = pb.ExtendRequest(resource=self.resource, value=self._value)
        if ttl is not None:
            request.ttl.CopyFrom(c.wire(c.seconds(ttl, "ttl")))
        sent = time.monotonic()
        try:
            reply = self._client._stub.Extend(request, metadata=self._client._metadata)
        except grpc.RpcError as e:
            raise c.error(e) from None
        if reply.extended:
            self.valid_until = sent + c.from_wire(reply.validity)
        return reply.extended

    def release(self) -> bool:
        """Gives the lock back. ``True`` when it was still held to the end."""
        request = pb.ReleaseRequest(resource=self.resource, value=self._value)
        try:
            return self._client._stub.Release(request, metadata=self._client._metadata).released
        except grpc.RpcError as e:
            raise c.error(e) from None


class HeldLease(c.LeaseInfo):
    """The lock of a ``Hold`` session. ``valid_until`` moves on with every
    extension the daemon makes; ``lost`` is set when the lock is lost."""

    __slots__ = ("lost", "lost_reason")

    def __init__(self, resource: str, value: str, fencing_token: int, valid_until: float):
        super().__init__(resource, value, fencing_token, valid_until)
        #: Set the moment the lock can no longer be guaranteed: stop working.
        self.lost = threading.Event()
        #: The daemon's reason, once lost.
        self.lost_reason = ""


class Hold:
    """A ``Hold`` session (see ``Client.hold``)."""

    def __init__(self, client: Client, resource: str, ttl, wait, owner: str, max_hold):
        self._client = client
        self._start = pb.HoldStart(resource=resource, owner=owner)
        if ttl is not None:
            self._start.ttl.CopyFrom(c.wire(c.seconds(ttl, "ttl")))
        if max_hold is not None:
            self._start.max_hold.CopyFrom(c.wire(c.seconds(max_hold, "max_hold")))
        self._wait = c.seconds(wait, "wait")
        self._requests: "queue.Queue[Optional[pb.HoldRequest]]" = queue.Queue()
        self._done = threading.Event()
        self._released: Optional[bool] = None
        self.lease: Optional[HeldLease] = None

    def __enter__(self) -> HeldLease:
        deadline = time.monotonic() + self._wait
        while True:
            try:
                return self._open(max(0.0, deadline - time.monotonic()))
            except Unavailable:
                pause = c.retry_pause(deadline)
                if pause is None:
                    raise
                time.sleep(pause)

    def _open(self, wait: float) -> HeldLease:
        self._requests = queue.Queue()
        start = pb.HoldStart()
        start.CopyFrom(self._start)
        if wait > 0:
            start.wait.CopyFrom(c.wire(wait))
        self._requests.put(pb.HoldRequest(start=start))
        call = self._client._stub.Hold(self._outgoing(), metadata=self._client._metadata)
        try:
            first = next(call)
        except grpc.RpcError as e:
            raise c.error(e) from None
        except StopIteration:
            raise RedlockdError("the daemon ended the session before answering") from None
        received = time.monotonic()
        if first.event != pb.HOLD_EVENT_ACQUIRED:
            self._requests.put(None)
            call.cancel()
            if first.event == pb.HOLD_EVENT_NOT_ACQUIRED:
                raise NotAcquired(first.reason)
            raise RedlockdError(f"the session ended before the lock was held: {first.reason}")
        lease = first.lease
        self.lease = HeldLease(lease.resource, lease.value, lease.fencing_token, received + c.from_wire(lease.validity))
        threading.Thread(target=self._follow, args=(call,), daemon=True).start()
        return self.lease

    def _outgoing(self) -> Iterator[pb.HoldRequest]:
        while True:
            request = self._requests.get()
            if request is None:
                return  # half-close: the daemon releases at once
            yield request

    def _follow(self, call) -> None:
        lease = self.lease
        try:
            for event in call:
                if event.event == pb.HOLD_EVENT_EXTENDED:
                    lease.valid_until = time.monotonic() + c.from_wire(event.lease.validity)
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
        finally:
            self._done.set()

    def _lose(self, reason: str) -> None:
        self.lease.lost_reason = reason
        self.lease.lost.set()

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._requests.put(pb.HoldRequest(release=pb.HoldRelease()))
        self._requests.put(None)
        answered = self._done.wait(timeout=10)
        if self.lease.lost.is_set():
            raise LockLost(self.lease.lost_reason) from exc
        if not answered:
            raise RedlockdError("the daemon did not confirm the release within 10 s") from exc
        if self._released is False:
            raise LockLost("released, but a majority of the masters no longer held the lock") from exc
        return False
