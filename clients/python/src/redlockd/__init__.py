"""redlockd: distributed locks with fencing tokens, from a daemon that runs
Redlock against independent Redis masters.

    import redlockd

    client = redlockd.Client()                      # REDLOCKD_ADDR, else 127.0.0.1:7420
    with client.hold("jobs/nightly", ttl=10, wait=5) as lease:
        store.write(data, token=lease.fencing_token)  # the store rejects older tokens
        if lease.lost.is_set(): ...                   # stop: the lock is gone

``Client.acquire`` returns a ``Lease`` or ``None`` (contention is a value);
``Client.hold`` is a session the daemon keeps extending, released on exit,
which raises ``LockLost`` if the lock was lost meanwhile.
``Client.acquire_many`` takes up to 16 resources at once, all or none: a
list of leases (one value, a token each) or ``None``. ``AsyncClient`` is
the same for asyncio.

``Client.campaign`` leads an election (docs/design.md#elections)::

    with client.campaign("jobs", candidate="pod-7", value=b"10.0.0.7:80") as leadership:
        store.write(data, term=leadership.term)       # the store rejects older terms
        if leadership.lost.is_set(): ...              # stop: LOST, or valid_until passed

``leader()``, ``observe()`` (an iterator of states), ``watch()`` (a lock's
holder and its changes), ``proclaim()``, ``resign()`` and
``participants()`` go with it. Durations are seconds (a float) or a ``timedelta``;
``valid_until`` is a ``time.monotonic()`` deadline counted from the moment
the request was sent.
"""

from ._aio import AsyncClient, AsyncLease
from ._aio_campaign import AsyncCampaign, AsyncLeadership
from ._aio_hold import AsyncHeldLease, AsyncHold
from ._campaign import Campaign, Leadership
from ._connect import TLS
from ._election import Leader
from ._errors import (
    DeadlineExceeded,
    FailedPrecondition,
    InvalidArgument,
    LeadershipLost,
    LockLost,
    NotAcquired,
    NotElected,
    PermissionDenied,
    RedlockdError,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from ._hold import HeldLease, Hold
from ._sync import Client, Lease

__version__ = "0.1.0"

__all__ = [
    "AsyncCampaign",
    "AsyncClient",
    "AsyncHeldLease",
    "AsyncHold",
    "AsyncLeadership",
    "AsyncLease",
    "Campaign",
    "Client",
    "DeadlineExceeded",
    "FailedPrecondition",
    "HeldLease",
    "Hold",
    "InvalidArgument",
    "Leader",
    "Leadership",
    "LeadershipLost",
    "Lease",
    "LockLost",
    "NotAcquired",
    "NotElected",
    "PermissionDenied",
    "RedlockdError",
    "ResourceExhausted",
    "TLS",
    "Unauthenticated",
    "Unavailable",
]
