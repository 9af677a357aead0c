"""How the transport-free core and the two drivers (blocking, asyncio) talk.

Every operation of the client is written once, in the core (``_calls.py``,
``_session.py``), as a generator that yields *steps* — a unary call to make,
a Hold stream to open, a pause to sleep — and is sent back what each step
gave (a reply, the session's first message), or has the step's typed error
thrown into it. The core validates, builds the requests, reads the clock
it is given, decides about retries and turns replies into leases; it does
no I/O. A driver (``_run.py``) only performs the steps: grpcio and
``time.sleep`` for ``Client``, grpc.aio and ``asyncio.sleep`` for
``AsyncClient``."""

from __future__ import annotations

from typing import Any, Callable, Generator, NamedTuple, TypeVar, Union

T = TypeVar("T")


class Call(NamedTuple):
    """A unary call: ``method`` of the Lock service with ``request``; the
    driver gives it a gRPC deadline of ``wait`` plus its slack, and sends
    back the reply or throws the typed error (``_errors.from_rpc_error``)."""

    method: str
    request: Any
    wait: float = 0.0


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


Step = Union[Call, OpenSession, Pause]
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
