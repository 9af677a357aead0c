"""What every lease shows, whichever way it was taken: the resource, the
fencing token and until when the lock is guaranteed. The lock's value (the
secret that proves ownership) is kept, never shown."""

from __future__ import annotations

import time


class LeaseInfo:
    """The common face of ``Lease``, ``HeldLease`` and their async twins."""

    __slots__ = ("resource", "fencing_token", "valid_until", "shared", "_value")

    def __init__(self, resource: str, value: str, fencing_token: int, valid_until: float, shared: bool = False):
        #: The locked resource, as requested.
        self.resource = resource
        #: ``True`` for a shared lock (a reader, taken with ``shared=True``):
        #: other readers may hold it too and share its fencing token; a
        #: writer's token is larger than every earlier reader's.
        self.shared = shared
        #: Strictly increases per resource; exact at any size (a Python
        #: int). Send it with every write to the protected storage.
        self.fencing_token = fencing_token
        #: A ``time.monotonic()`` deadline: the lock is guaranteed until
        #: then. Counted from the moment the request was sent (a session's,
        #: from each ACQUIRED / EXTENDED message, as the proto says).
        self.valid_until = valid_until
        self._value = value

    @property
    def remaining(self) -> float:
        """Seconds left until ``valid_until`` (0 once it has passed)."""
        return max(0.0, self.valid_until - time.monotonic())

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(resource={self.resource!r}, fencing_token={self.fencing_token}, "
            f"{'shared=True, ' if self.shared else ''}remaining={self.remaining:.3f}s)"
        )

    __str__ = __repr__
