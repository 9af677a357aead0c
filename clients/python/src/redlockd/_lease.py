"""What every lease shows, whichever way it was taken: the resource, the
fencing token and until when the lock is guaranteed. The lock's value (the
secret that proves ownership) is kept, never shown."""

from __future__ import annotations

import time

from .v1 import lock_pb2 as pb


class LeaseInfo:
    """The common face of ``Lease``, ``HeldLease`` and their async twins."""

    __slots__ = ("resource", "fencing_token", "valid_until", "shared", "permits", "slot", "_value")

    def __init__(
        self,
        resource: str,
        value: str,
        fencing_token: int,
        valid_until: float,
        shared: bool = False,
        permits: int = 0,
        slot: int = 0,
    ):
        #: The locked resource, as requested.
        self.resource = resource
        #: ``True`` for a shared lock (a reader, taken with ``shared=True``):
        #: other readers may hold it too and share its fencing token; a
        #: writer's token is larger than every earlier reader's.
        self.shared = shared
        #: For a permit of a semaphore (taken with ``permits=N``, N >= 2):
        #: N, and the slot this lease holds (0 to N - 1). Fencing tokens
        #: increase per slot: compare a permit's token with earlier tokens
        #: of the same slot only. 0 and 0 for a lock.
        self.permits = permits
        self.slot = slot
        #: Strictly increases per resource (per slot for a permit); exact at
        #: any size (a Python int). Send it with every write to the protected
        #: storage.
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
            f"{'shared=True, ' if self.shared else ''}{self._permit()}remaining={self.remaining:.3f}s)"
        )

    def _permit(self) -> str:
        return f"slot={self.slot} of permits={self.permits}, " if self.permits >= 2 else ""

    @staticmethod
    def _wire(lease) -> dict:
        """What a wire ``Lease`` says of the kind of lock: keyword arguments."""
        return {"shared": lease.mode == pb.LOCK_MODE_SHARED, "permits": lease.permits, "slot": lease.slot}

    __str__ = __repr__
