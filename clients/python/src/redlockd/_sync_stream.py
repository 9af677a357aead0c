"""The blocking driver of the session machine (``_machine.py``), for a Hold
session and a campaign alike: one gRPC stream (grpcio), a thread that reads
the daemon's messages into a queue (each stamped with when it arrived) and
one that runs the machine's ``follow``. What it all means is the machine's;
this only moves messages."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Iterator, Optional, Type

import grpc

from ._drivers import END, StreamBase, run
from ._errors import from_rpc_error
from ._machine import SessionMachine, W
from ._steps import ENDED, TIMED_OUT, Close, Receive, Send, Step


class SessionDriver:
    """Runs one session machine on a ``Stream``: ``_enter`` opens it and
    starts following, ``_exit`` leaves. ``Hold`` and ``Campaign`` are this,
    with their types."""

    def __init__(self, machine: SessionMachine, stub, metadata):
        self._machine = machine
        self._stream = Stream(stub, metadata)
        self._done = threading.Event()

    def _enter(self, kind: Type[W]) -> W:
        steps = self._machine.open(kind)  # raises at once when entered before
        try:
            held = run(steps, self._perform)
        except BaseException:
            self._stream.cancel()
            raise
        name = f"redlockd-{type(self).__name__.lower()}"  # redlockd-hold, redlockd-campaign
        threading.Thread(target=self._follow, name=name, daemon=True).start()
        return held

    def _perform(self, step: Step) -> Any:
        return self._stream.perform(step)

    def _follow(self) -> None:
        try:
            run(self._machine.follow(), self._stream.perform)
        finally:
            self._stream.act(Close())  # over: grpc's reader of the requests may stop
            self._done.set()

    def _exit(self, cause: Optional[BaseException]) -> bool:
        farewell = self._machine.leave()
        answered = True
        if farewell is not None:
            self._stream.perform(Send(farewell))
            self._stream.perform(Close())
            answered = self._done.wait(self._machine.CONFIRM_TIMEOUT)
        if farewell is None or not answered:
            self._stream.cancel()
        return self._machine.left(answered, cause)


class Stream(StreamBase):
    """A session's stream on grpcio; a thread reads its messages."""

    _queue = queue.Queue

    def perform(self, step: Step) -> Any:
        return self._receive(step.within) if isinstance(step, Receive) else self.act(step)

    def _receive(self, within: Optional[float]) -> Any:
        try:
            return self._took(self._replies.get(timeout=within))
        except queue.Empty:
            return TIMED_OUT

    def _start_reading(self) -> None:
        reader = threading.Thread(target=_read, args=(self._call, self._replies), name="redlockd-stream")
        reader.daemon = True
        reader.start()

    @staticmethod
    def _drain(requests: "queue.Queue") -> Iterator[Any]:
        while True:
            request = requests.get()
            if request is END:
                return  # half-close: the daemon ends the session at once
            yield request


def _read(call, replies: "queue.Queue") -> None:
    try:
        for message in call:
            replies.put_nowait((message, time.monotonic()))
        replies.put_nowait(ENDED)
    except grpc.RpcError as e:
        replies.put_nowait(from_rpc_error(e))
