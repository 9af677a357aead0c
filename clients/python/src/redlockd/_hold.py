"""The blocking Hold session (``Client.hold``): one gRPC stream, a thread
that reads the daemon's messages and one that watches ``valid_until``."""

from __future__ import annotations

import queue
import threading
import time
from typing import Iterator, Optional

import grpc

from ._errors import DeadlineExceeded, Unavailable, from_rpc_error
from ._retry import CALL_SLACK, Backoff
from ._session import RELEASE_TIMEOUT, HeldLeaseBase, SessionState, first_request, opened
from .v1 import lock_pb2 as pb

_END = None  # put on the request queue: half-close the stream


class HeldLease(HeldLeaseBase):
    """The lock of a ``Hold`` session; ``lost`` is a ``threading.Event``."""

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
        super().__init__(resource, value, fencing_token, valid_until, threading.Event(), shared, permits, slot)


class Hold:
    """A Hold session (see ``Client.hold``); enter it once."""

    def __init__(self, stub, metadata, start: pb.HoldStart, wait: float):
        self._stub = stub
        self._metadata = metadata
        self._start = start
        self._wait = wait
        self._requests: "queue.Queue[Optional[pb.HoldRequest]]" = queue.Queue()
        self._call = None
        self._state: Optional[SessionState] = None
        self._done = threading.Event()
        #: The held lease, once entered.
        self.lease: Optional[HeldLease] = None

    def __enter__(self) -> HeldLease:
        if self._call is not None:
            raise RuntimeError("a Hold session is entered once; call client.hold() again")
        backoff = Backoff(self._wait)
        while True:
            try:
                return self._open(backoff.left())
            except Unavailable:
                pause = backoff.pause()
                if pause is None:
                    raise
                time.sleep(pause)

    def _open(self, wait: float) -> HeldLease:
        requests: "queue.Queue[Optional[pb.HoldRequest]]" = queue.Queue()
        requests.put(first_request(self._start, wait))
        call = self._stub.Hold(_drain(requests), metadata=self._metadata)
        # A daemon that never answers must not hang the caller.
        timed_out = threading.Event()

        def give_up() -> None:
            timed_out.set()
            call.cancel()

        timer = threading.Timer(wait + CALL_SLACK, give_up)
        timer.daemon = True
        timer.start()
        try:
            try:
                first = next(call, None)
            except grpc.RpcError as e:
                if timed_out.is_set():
                    raise DeadlineExceeded(f"no answer from the daemon within {wait + CALL_SLACK:g} s") from None
                raise from_rpc_error(e) from None
            finally:
                timer.cancel()
            lease = opened(first, time.monotonic(), HeldLease)
        except BaseException:
            # Ends the request iterator, which grpc's own thread is reading.
            requests.put(_END)
            call.cancel()
            raise
        self._requests, self._call, self.lease = requests, call, lease
        self._state = SessionState(lease)
        threading.Thread(target=self._follow, name="redlockd-hold", daemon=True).start()
        threading.Thread(target=self._watch, name="redlockd-hold-watch", daemon=True).start()
        return lease

    def _follow(self) -> None:
        try:
            for message in self._call:
                if self._state.on(message):
                    return
            self._state.ended("the daemon ended the session")
        except grpc.RpcError as e:
            self._state.ended(f"the session broke: {from_rpc_error(e)}")
        finally:
            self._requests.put(_END)
            self._done.set()

    def _watch(self) -> None:
        lease = self.lease
        while not self._done.wait(lease.remaining):
            if time.monotonic() >= lease.valid_until:
                self._state.silent()
                return

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._state.releasing = True
        if self.lease.lost.is_set():
            # Nothing to confirm: the daemon releases a cancelled session at
            # once (and one that said LOST has released already).
            self._call.cancel()
            answered = True
        else:
            self._requests.put(pb.HoldRequest(release=pb.HoldRelease()))
            self._requests.put(_END)
            answered = self._done.wait(RELEASE_TIMEOUT)
            if not answered:
                self._call.cancel()
        failure = self._state.exit_error(answered)
        if failure is not None:
            raise failure from exc
        return False


def _drain(requests: "queue.Queue[Optional[pb.HoldRequest]]") -> Iterator[pb.HoldRequest]:
    while True:
        request = requests.get()
        if request is _END:
            return  # half-close: the daemon releases at once
        yield request
