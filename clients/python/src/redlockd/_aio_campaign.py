"""The asyncio campaign (``AsyncClient.campaign``): the session machine's
asyncio driver (``_aio_stream.py``) with a campaign's types, and the
leader's ``proclaim`` through its stream. What it all means is the core's
(``_leadership.py``, ``_machine.py``); this only moves messages."""

from __future__ import annotations

import asyncio
from typing import Optional

from ._aio_stream import AsyncSessionDriver
from ._election import Value
from ._leadership import RESIGN_TIMEOUT, Candidacy, LeadershipBase
from ._steps import Send
from .v1 import election_pb2 as epb


class AsyncLeadership(LeadershipBase):
    """A leadership won with ``AsyncClient.campaign``; ``lost`` is an
    ``asyncio.Event``."""

    __slots__ = ()
    _event = asyncio.Event

    async def proclaim(self, value: Value) -> None:
        """As ``Leadership.proclaim``."""
        await self._driver._proclaim(value)


class AsyncCampaign(AsyncSessionDriver):
    """An async campaign (see ``AsyncClient.campaign``); enter it once."""

    def __init__(self, stub, metadata, start: epb.CampaignStart, wait: Optional[float]):
        super().__init__(Candidacy(start, wait), stub, metadata)

    async def __aenter__(self) -> AsyncLeadership:
        leadership = await self._enter(AsyncLeadership)
        leadership._driver = self
        return leadership

    async def _proclaim(self, value: Value) -> None:
        request, told = self._machine.proclaim(value)
        await self._stream.perform(Send(request))
        try:
            answered = bool(await asyncio.wait_for(told.wait(), RESIGN_TIMEOUT))
        except asyncio.TimeoutError:
            answered = False
        self._machine.proclaimed(answered)

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        return await self._exit(exc)
