"""The blocking campaign (``Client.campaign``): the session machine's
blocking driver (``_sync_stream.py``) with a campaign's types, and the
leader's ``proclaim`` through its stream. What it all means is the core's
(``_leadership.py``, ``_machine.py``); this only moves messages."""

from __future__ import annotations

import threading
from typing import Optional

from ._election import Value
from ._leadership import RESIGN_TIMEOUT, Candidacy, LeadershipBase
from ._steps import Send
from ._sync_stream import SessionDriver
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


class Campaign(SessionDriver):
    """A campaign (see ``Client.campaign``); enter it once."""

    def __init__(self, stub, metadata, start: epb.CampaignStart, wait: Optional[float]):
        super().__init__(Candidacy(start, wait), stub, metadata)

    def __enter__(self) -> Leadership:
        leadership = self._enter(Leadership)
        leadership._driver = self
        return leadership

    def _proclaim(self, value: Value) -> None:
        request, told = self._machine.proclaim(value)
        self._stream.perform(Send(request))
        self._machine.proclaimed(told.wait(RESIGN_TIMEOUT))

    def __exit__(self, exc_type, exc, tb) -> bool:
        return self._exit(exc)
