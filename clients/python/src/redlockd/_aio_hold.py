"""The asyncio Hold session (``AsyncClient.hold``): the session machine's
asyncio driver (``_aio_stream.py``) with a Hold's types. What it all means
is the core's (``_session.py``, ``_machine.py``); this only moves messages."""

from __future__ import annotations

from typing import Any, Optional

from ._aio_stream import AsyncSessionDriver
from ._drivers import run_async
from ._lease import AsyncHeldLease
from ._retry import CALL_SLACK
from ._session import Session, opening
from ._steps import OpenSession, Step
from .v1 import lock_pb2 as pb


class AsyncHold(AsyncSessionDriver):
    """An async Hold session (see ``AsyncClient.hold``); enter it once."""

    def __init__(self, stub, metadata, start: pb.HoldStart, wait: float):
        super().__init__(Session(start, wait), stub, metadata)

    @property
    def lease(self) -> Optional[AsyncHeldLease]:
        """The held lease, once entered."""
        return self._machine.lease

    async def __aenter__(self) -> AsyncHeldLease:
        return await self._enter(AsyncHeldLease)

    async def _perform(self, step: Step) -> Any:
        if isinstance(step, OpenSession):
            return await run_async(opening(step, CALL_SLACK), self._stream.perform)
        return await self._stream.perform(step)

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        return await self._exit(exc)
