"""The blocking Hold session (``Client.hold``): one gRPC stream, a thread
that reads the daemon's messages and one that watches ``valid_until``. What
it all means is the core's (``_session.py``); this only moves messages."""

from __future__ import annotations

import queue
import threading
import time
from typing import Iterator, Optional

import grpc

from ._drivers import END, HoldStream, run
from ._errors import DeadlineExceeded, from_rpc_error
from ._lease import HeldLease
from ._retry import CALL_SLACK
from ._session import RELEASE_TIMEOUT
from ._steps import OpenSession
from .v1 import lock_pb2 as pb


class Hold(HoldStream):
    """A Hold session (see ``Client.hold``); enter it once."""

    def __enter__(self) -> HeldLease:
        steps = self._session.open(HeldLease)
        try:
            lease = run(steps, self._open)
        except BaseException:
            self._abandon()
            raise
        self._done = threading.Event()
        threading.Thread(target=self._follow, name="redlockd-hold", daemon=True).start()
        threading.Thread(target=self._watch, name="redlockd-hold-watch", daemon=True).start()
        return lease

    def _open(self, step: OpenSession) -> Optional[pb.HoldResponse]:
        self._abandon()  # the stream of a try that failed
        self._requests = queue.Queue()
        self._requests.put_nowait(step.request)
        self._call = call = self._stub.Hold(_drain(self._requests), metadata=self._metadata)
        # A daemon that never answers must not hang the caller.
        timed_out = threading.Event()

        def give_up() -> None:
            timed_out.set()
            call.cancel()

        timer = threading.Timer(step.wait + CALL_SLACK, give_up)
        timer.daemon = True
        timer.start()
        try:
            return next(call, None)
        except grpc.RpcError as e:
            if timed_out.is_set():
                raise DeadlineExceeded(f"no answer from the daemon within {step.wait + CALL_SLACK:g} s") from None
            raise from_rpc_error(e) from None
        finally:
            timer.cancel()

    def _follow(self) -> None:
        try:
            for message in self._call:
                if self._session.on(message, time.monotonic()):
                    return
            self._session.stream_ended()
        except grpc.RpcError as e:
            self._session.stream_broke(from_rpc_error(e))
        finally:
            self._requests.put_nowait(END)
            self._done.set()

    def _watch(self) -> None:
        delay = self._session.watch(time.monotonic())
        while delay is not None and not self._done.wait(delay):
            delay = self._session.watch(time.monotonic())

    def __exit__(self, exc_type, exc, tb) -> bool:
        release = self._session.leave()
        answered = True
        if release is not None:
            self._requests.put_nowait(release)
            self._requests.put_nowait(END)
            answered = self._done.wait(RELEASE_TIMEOUT)
        if release is None or not answered:
            self._call.cancel()
        return self._session.left(answered, exc)


def _drain(requests: "queue.Queue[Optional[pb.HoldRequest]]") -> Iterator[pb.HoldRequest]:
    while True:
        request = requests.get()
        if request is END:
            return  # half-close: the daemon releases at once
        yield request
