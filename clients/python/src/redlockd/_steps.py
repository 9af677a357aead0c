"""How the transport-free core and the two drivers (blocking, asyncio) talk.

Every operation of the client is written once, in the core (``_calls.py``,
``_session.py``, ``_leadership.py``), as a generator that yields *steps* — a unary call to make,
a Hold stream to open, a pause to sleep — and is sent back what each step
gave (a reply, the session's first message), or has the step's typed error
thrown into it. The core validates, builds the requests, reads the clock
it is given, decides about retries and turns replies into leases; it does
no I/O. A driver (``_drivers.py``) only performs the steps: grpcio and
``time.sleep`` for ``Client``, grpc.aio and ``asyncio.sleep`` for
``AsyncClient``.

A session — a Hold (``_session.py``) or a campaign (``_leadership.py``),
one machine (``_machine.py``) — is a whole stream driven by steps: open it
(``OpenStream``), take the daemon's next message (``Receive``), send
(``Send``), half-close (``Close``), cancel (``Cancel``). A Hold opens with
``OpenSession``, which its drivers perform as ``OpenStream`` and one
``Receive`` (``_session.opening``), adding their slack to its wait."""

from __future__ import annotations

from typing import Any, Callable, Generator, NamedTuple, Optional, TypeVar, Union

T = TypeVar("T")


class Call(NamedTuple):
    """A unary call: ``method`` of ``service`` (``Lock`` or ``Election``)
    with ``request``; the driver gives it a gRPC deadline of ``wait`` plus
    its slack, and sends back the reply or throws the typed error
    (``_errors.from_rpc_error``)."""

    method: str
    request: Any
    wait: float = 0.0
    service: str = "Lock"


class OpenSession(NamedTuple):
    """A Hold stream to open with ``request`` (its start) as the first
    message: the driver sends back the first message the daemon answers
    with (``None`` when the stream ended without one), or throws the typed
    error, ``DeadlineExceeded`` when nothing came within ``wait`` plus its
    slack. The driver keeps the stream for the session."""

    request: Any
    wait: float


class Pause(NamedTuple):
    """Sleep ``seconds``, then send back ``None``."""

    seconds: float


class OpenStream(NamedTuple):
    """A session's bidirectional stream to open (``method``: ``Hold``, or
    ``Campaign``, on the stub the driver was given) with ``request`` as its
    first message: the driver ends the stream it kept before (if any),
    opens this one, stamps each message of the daemon with the monotonic
    time it arrived, and sends back ``None``."""

    method: str
    request: Any


class Receive(NamedTuple):
    """The open stream's next message: the driver sends back ``(message,
    received)`` — ``received`` the ``time.monotonic()`` of its arrival —
    or ``ENDED`` when the stream ended, or ``TIMED_OUT`` when nothing came
    within ``within`` seconds (``None``: no limit; the stream stays open);
    it throws the typed error when the stream failed."""

    within: Optional[float]


class Send(NamedTuple):
    """Send ``request`` on the open stream; sends back ``None``."""

    request: Any


class Close(NamedTuple):
    """Half-close the open stream; sends back ``None``."""


class Cancel(NamedTuple):
    """Cancel the open stream (the daemon sees the client gone); sends back
    ``None``."""


#: What ``Receive`` sends back when the stream ended, and when nothing came in time.
ENDED = "ENDED"
TIMED_OUT = "TIMED_OUT"

Step = Union[Call, OpenSession, Pause, OpenStream, Receive, Send, Close, Cancel]
#: An operation of the core: yields steps, returns its result.
Steps = Generator[Step, Any, T]


class Drive:
    """Walks one operation for a driver, which answers every step::

        drive = Drive(steps)
        for step in drive:
            try:
                drive.answer(perform(step))
            except Exception as error:
                drive.fail(error)
        return drive.result

    An error the operation does not handle comes out of the ``for``."""

    def __init__(self, steps: Steps[Any]):
        self._steps = steps
        self._resume: Callable[[Any], Step] = steps.send
        self._given: Any = None
        #: What the operation returned, once the ``for`` has ended.
        self.result: Any = None

    def __iter__(self):
        while True:
            try:
                step = self._resume(self._given)
            except StopIteration as done:
                self.result = done.value
                return
            self._resume, self._given = self._unanswered, step
            yield step

    def answer(self, value: Any) -> None:
        """What the step gave."""
        self._resume, self._given = self._steps.send, value

    def fail(self, error: BaseException) -> None:
        """The step failed with ``error``: it is raised where the operation
        yielded the step."""
        self._resume, self._given = self._steps.throw, error

    @staticmethod
    def _unanswered(step: Step) -> Step:
        raise RuntimeError(f"the driver did not answer {type(step).__name__}")
