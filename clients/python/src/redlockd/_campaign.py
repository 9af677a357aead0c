"""The blocking campaign (``Client.campaign``): one gRPC stream, a thread
that reads the daemon's messages into a queue (each stamped with when it
arrived) and one that runs the candidacy's ``follow``. What it all means is
the core's (``_leadership.py``); this only moves messages."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Optional

import grpc

from ._drivers import END, run
from ._election import Value
from ._errors import RedlockdError, from_rpc_error
from ._hold import _drain
from ._leadership import RESIGN_TIMEOUT, Candidacy, LeadershipBase
from ._steps import ENDED, TIMED_OUT, Cancel, Close, OpenStream, Receive, Send, Step
from .v1 import election_pb2 as epb


class Leadership(LeadershipBase):
    """A leadership won with ``Client.campaign``; ``lost`` is a
    ``threading.Event``."""

    __slots__ = ()
    _event = threading.Event

    def proclaim(self, value: Value) -> None:
        """Publishes ``value`` (``bytes``, or a ``str`` sent as UTF-8; at most
        4096 bytes) as the leader's, through the campaign's stream, and
        returns once the daemon has recorded it. Raises ``LeadershipLost``
        when the leadership is lost first."""
        self._driver._proclaim(value)


class Campaign:
    """A campaign (see ``Client.campaign``); enter it once."""

    def __init__(self, stub, metadata, start: epb.CampaignStart, wait: Optional[float]):
        self._candidacy = Candidacy(start, wait)
        self._stream = Stream(stub, metadata)
        self._done = threading.Event()

    def __enter__(self) -> Leadership:
        try:
            leadership = run(self._candidacy.open(Leadership), self._stream.perform)
        except BaseException:
            self._stream.cancel()
            raise
        leadership._driver = self
        threading.Thread(target=self._follow, name="redlockd-campaign", daemon=True).start()
        return leadership

    def _follow(self) -> None:
        try:
            run(self._candidacy.follow(), self._stream.perform)
        finally:
            self._done.set()

    def _proclaim(self, value: Value) -> None:
        request, told = self._candidacy.proclaim(value)
        self._stream.perform(Send(request))
        self._candidacy.proclaimed(told.wait(RESIGN_TIMEOUT))

    def __exit__(self, exc_type, exc, tb) -> bool:
        resign = self._candidacy.leave()
        answered = True
        if resign is not None:
            self._stream.perform(Send(resign))
            self._stream.perform(Close())
            answered = self._done.wait(RESIGN_TIMEOUT)
        if resign is None or not answered:
            self._stream.cancel()
        return self._candidacy.left(answered, exc)


class Stream:
    """Performs a candidacy's stream steps on grpcio: the stream's requests
    go through a queue that the stream drains; a thread reads its messages
    into another, so that ``Receive`` can wait with a limit."""

    def __init__(self, stub, metadata):
        self._stub = stub
        self._metadata = metadata
        self._call: Any = None
        self._requests: "queue.Queue" = queue.Queue()
        self._replies: "queue.Queue" = queue.Queue()

    def perform(self, step: Step) -> Any:
        if isinstance(step, OpenStream):
            self.cancel()  # the stream of a try that failed
            self._requests, self._replies = queue.Queue(), queue.Queue()
            self._requests.put_nowait(step.request)
            self._call = getattr(self._stub, step.method)(_drain(self._requests), metadata=self._metadata)
            reader = threading.Thread(target=_read, args=(self._call, self._replies), name="redlockd-stream")
            reader.daemon = True
            reader.start()
        elif isinstance(step, Receive):
            return self._receive(step.within)
        elif isinstance(step, Send):
            self._requests.put_nowait(step.request)
        elif isinstance(step, Close):
            self._requests.put_nowait(END)
        elif isinstance(step, Cancel):
            self.cancel()
        else:
            raise RuntimeError(f"a campaign's stream cannot perform {type(step).__name__}")
        return None

    def _receive(self, within: Optional[float]):
        try:
            got = self._replies.get(timeout=within)
        except queue.Empty:
            return TIMED_OUT
        if isinstance(got, RedlockdError) or got == ENDED:
            self._replies.put_nowait(got)  # what ended the stream, to every later Receive
        if isinstance(got, RedlockdError):
            raise got
        return got

    def cancel(self) -> None:
        """Ends the stream, if one is open; the daemon sees the client gone."""
        if self._call is not None:
            self._requests.put_nowait(END)
            self._call.cancel()
            self._call = None


def _read(call, replies: "queue.Queue") -> None:
    try:
        for message in call:
            replies.put_nowait((message, time.monotonic()))
        replies.put_nowait(ENDED)
    except grpc.RpcError as e:
        replies.put_nowait(from_rpc_error(e))
