"""The blocking Hold session (``Client.hold``): the session machine's
blocking driver (``_sync_stream.py``) with a Hold's types. What it all means
is the core's (``_session.py``, ``_machine.py``); this only moves messages."""

from __future__ import annotations

from typing import Any, Optional

from ._drivers import run
from ._lease import HeldLease
from ._retry import CALL_SLACK
from ._session import Session, opening
from ._steps import OpenSession, Step
from ._sync_stream import SessionDriver
from .v1 import lock_pb2 as pb


class Hold(SessionDriver):
    """A Hold session (see ``Client.hold``); enter it once."""

    def __init__(self, stub, metadata, start: pb.HoldStart, wait: float):
        super().__init__(Session(start, wait), stub, metadata)

    @property
    def lease(self) -> Optional[HeldLease]:
        """The held lease, once entered."""
        return self._machine.lease

    def __enter__(self) -> HeldLease:
        return self._enter(HeldLease)

    def _perform(self, step: Step) -> Any:
        if isinstance(step, OpenSession):
            return run(opening(step, CALL_SLACK), self._stream.perform)
        return self._stream.perform(step)

    def __exit__(self, exc_type, exc, tb) -> bool:
        return self._exit(exc)
