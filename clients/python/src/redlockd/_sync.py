"""The blocking client (grpcio): ``Client`` and the ``Lease`` that
``acquire`` returns."""

from __future__ import annotations

from typing import Iterable, List, Optional

import grpc

from . import _calls as calls
from . import _election as elections
from . import _validate as v
from ._campaign import Campaign
from ._connect import TLS, settings
from ._drivers import run
from ._errors import LockLost, from_rpc_error
from ._hold import Hold
from ._leadership import start_message as campaign_start
from ._lease import LeaseBase
from ._retry import CALL_SLACK
from ._session import start_message
from ._steps import Call, Steps, T
from ._tracing import traced
from ._views import View
from .v1 import election_pb2_grpc, lock_pb2_grpc
from .v1 import lock_pb2 as pb


class Client:
    """A connection to one redlockd (or a load balancer in front of
    several). Thread-safe; close it, or use it as a context manager, when
    done. Unset arguments come from the environment as ``redlockctl``
    reads it: ``REDLOCKD_ADDR`` (else ``127.0.0.1:7420``),
    ``REDLOCKD_TOKEN``, ``REDLOCKD_CA``/``REDLOCKD_CERT``/``REDLOCKD_KEY``."""

    def __init__(self, addr: Optional[str] = None, token: Optional[str] = None, tls: Optional[TLS] = None):
        s = settings(addr, token, tls)
        self._metadata = s.metadata()
        self._channel = (
            grpc.secure_channel(s.target, s.channel_credentials()) if s.tls else grpc.insecure_channel(s.target)
        )
        self._channel = traced(self._channel)  # the caller's trace context, with OpenTelemetry
        self._stub = lock_pb2_grpc.LockStub(self._channel)
        self._elections = election_pb2_grpc.ElectionStub(self._channel)
        self._stubs = {"Lock": self._stub, "Election": self._elections}

    def close(self) -> None:
        """Closes the connection; open sessions end (and are released)."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, call: Call):
        try:
            return getattr(self._stubs[call.service], call.method)(
                call.request, metadata=self._metadata, timeout=call.wait + CALL_SLACK
            )
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def _run(self, steps: Steps[T]) -> T:
        return run(steps, self._call)

    def acquire(
        self,
        resource: str,
        ttl: Optional[v.Seconds] = 10,
        wait: v.Seconds = 0,
        owner: str = "",
        *,
        shared: bool = False,
        permits: int = 0,
        reentrancy_key: str = "",
        lock_delay: Optional[v.Seconds] = None,
    ) -> Optional["Lease"]:
        """Takes the lock on ``resource``, trying for up to ``wait`` seconds.
        Returns ``None`` when someone else kept it all along: contention is a
        value, not an error. ``ttl=None`` means the daemon's default. A wait
        the daemon cuts short with UNAVAILABLE is retried with jitter until
        it runs out; then ``Unavailable`` is raised. ``shared=True`` takes a
        shared lock (a reader of a read-write lock): readers hold it
        together, a writer (the default) excludes them all; ``lease.shared``
        says which was granted. ``permits=N`` (N >= 2) takes one of N
        permits of a semaphore: every holder must ask for the same N (another
        N raises ``FailedPrecondition`` while permits are out); ``lease.slot``
        says which permit, and tokens increase per slot. ``reentrancy_key``
        (at most 128 bytes; a job or trace id only your work knows): while
        the daemon holds the lock for the key, another acquire with it gets
        the same lock and token at once; each release counts one down.
        ``lock_delay`` (seconds or a timedelta, at most the daemon's
        ``lock.max_lock_delay``, 60 s by default): the masters keep a lease
        that is never released that much past its validity, through every
        extend; a release frees it at once (docs/design.md#lock-delay)."""
        return self._run(
            calls.acquire(
                self, Lease, resource, ttl, wait, owner, shared, permits, reentrancy_key, lock_delay=lock_delay
            )
        )

    def acquire_many(
        self,
        resources: Iterable[str],
        ttl: Optional[v.Seconds] = 10,
        wait: v.Seconds = 0,
        owner: str = "",
    ) -> Optional[List["Lease"]]:
        """Takes the locks on several resources at once, all or none,
        trying for up to ``wait`` seconds. ``resources``: 1 to 16 names
        (repeats are dropped). Returns one ``Lease`` per resource, sorted by
        resource, or ``None`` when any of them stayed with someone else all
        along: then none is held, and none was held while waiting (two
        callers with overlapping sets cannot deadlock). The leases share one
        value and validity, and each has its own fencing token (strictly
        increasing per resource, like any lock's): each is an ordinary lock,
        extended and released on its own, or released together with
        ``release_many``. A set's locks are exclusive. A wait cut short by
        UNAVAILABLE is retried as ``acquire``'s is."""
        return self._run(calls.acquire_many(self, Lease, resources, ttl, wait, owner))

    def release_many(self, leases: Iterable["Lease"]) -> bool:
        """Gives back leases of one set (what ``acquire_many`` returned, or
        some of them) in one call. ``True`` when every one was still held to
        the end; ``False`` when any had expired, been taken over or been
        released already."""
        return self._run(calls.release_many(leases, Lease))

    def extend_many(self, leases: Iterable["Lease"], ttl: Optional[v.Seconds] = None) -> bool:
        """Extends leases of one set (what ``acquire_many`` returned, or
        some of them) in one call: resets their time to live to ``ttl``
        (default: the TTL the set was taken with) and moves each extended
        lease's ``valid_until`` on. ``True`` when every one was extended;
        ``False`` when any had expired, been taken over or been released:
        stop working under the set."""
        return self._run(calls.extend_many(leases, Lease, ttl))

    def hold(
        self,
        resource: str,
        ttl: Optional[v.Seconds] = 10,
        wait: v.Seconds = 5,
        owner: str = "",
        max_hold: Optional[v.Seconds] = None,
        *,
        shared: bool = False,
        permits: int = 0,
        reentrancy_key: str = "",
        lock_delay: Optional[v.Seconds] = None,
    ) -> Hold:
        """A Hold session, as a context manager::

            with client.hold("jobs/nightly", ttl=10, wait=5) as lease:
                ...

        enters once the lock is held (``NotAcquired`` when the wait runs
        out), the daemon extends it at about a third of the TTL while the
        block runs, and leaving the block releases it — also when the body
        raises, and when the process dies. ``lease.lost`` (a
        ``threading.Event``) is set the moment the lock is lost; leaving the
        block after a loss, or a release that finds the lock gone, raises
        ``LockLost``. ``max_hold``: the longest the daemon keeps the lock.
        ``shared=True``, ``permits`` and ``reentrancy_key`` are as for
        ``acquire`` (a session counts as one hold of a reentrancy key).
        ``lock_delay`` (at most the daemon's ``lock.max_lock_delay``): when
        the session ends without a release — the process died, the stream
        broke, the lock was lost — the daemon keeps the lock that much
        longer, for resources that cannot check fencing tokens; leaving the
        block releases at once (docs/design.md#lock-delay)."""
        start, wait_s = start_message(
            resource, ttl, wait, owner, max_hold, shared, permits, reentrancy_key, lock_delay
        )
        return Hold(self._stub, self._metadata, start, wait_s)

    def inspect(self, resource: str) -> pb.InspectResponse:
        """What each master holds for ``resource`` (never lock values)."""
        return self._run(calls.inspect(resource))

    def watch(self, resource: str) -> View[pb.WatchResponse]:
        """Follows who holds ``resource``: an iterator of ``WatchResponse``s,
        the state now first (``WATCH_EVENT_CURRENT``), then each change as
        the daemon sees it (ACQUIRED, RELEASED, EXPIRED, FORCE_RELEASED,
        CHANGED). A view, not a lock. ``close()`` it, or use it in a
        ``with`` block, to end the stream."""
        request = elections.watch_request(resource)
        return View(self._stub.Watch(request, metadata=self._metadata), lambda change: change)

    def campaign(
        self,
        election: str,
        candidate: str,
        value: elections.Value = b"",
        ttl: Optional[v.Seconds] = 10,
        wait: Optional[v.Seconds] = None,
        max_hold: Optional[v.Seconds] = None,
        *,
        lock_delay: Optional[v.Seconds] = None,
    ) -> Campaign:
        """A campaign to lead ``election``, as a context manager::

            with client.campaign("jobs", candidate="pod-7", value=b"10.0.0.7:80") as leadership:
                store.write(data, term=leadership.term)   # the store rejects older terms

        enters once elected — waiting in line behind the other candidates,
        for up to ``wait`` seconds (``None``: until elected; then it raises
        ``NotElected``). The daemon extends the term at about a third of
        ``ttl`` while the block runs, and leaving the block resigns — also
        when the body raises, and when the process dies. ``leadership.lost``
        (a ``threading.Event``) is set the moment the leadership can no
        longer be guaranteed: at LOST, or when ``valid_until`` passes without
        an extension (the client's own deadline, should the daemon fall
        silent); leaving after a loss raises ``LeadershipLost``. ``value``
        (at most 4096 bytes) is published with the leadership;
        ``leadership.proclaim(value)`` publishes another. ``max_hold``: the
        longest one term lasts. ``lock_delay``: as for ``hold``."""
        start = campaign_start(election, candidate, value, ttl, max_hold, lock_delay)
        return Campaign(self._elections, self._metadata, start, v.optional_seconds(wait, "wait"))

    def leader(self, election: str) -> Optional[elections.Leader]:
        """Who leads ``election`` as a majority of the masters agree (its
        candidate, value, term and since), or ``None`` when nobody does."""
        return self._run(elections.leader(election))

    def observe(self, election: str) -> View[Optional[elections.Leader]]:
        """Follows ``election``: an iterator of its states — a ``Leader``,
        or ``None`` when nobody leads — the state now first, then every
        change; terms never go back. A view, not a lock. ``close()`` it, or
        use it in a ``with`` block, to end the stream."""
        request = elections.observe_request(election)
        return View(self._elections.Observe(request, metadata=self._metadata), elections.leader_of)

    def proclaim(self, election: str, term: int, value: elections.Value) -> None:
        """Sets the value of the leader of ``term``, from anywhere. Raises
        ``FailedPrecondition`` (naming the current term) when ``term`` does
        not lead; nothing changes then."""
        self._run(elections.proclaim(election, term, value))

    def resign(self, election: str, term: int) -> None:
        """Ends the leadership of ``term``, from anywhere: its lock is
        released. Raises ``FailedPrecondition`` (naming the current term)
        when ``term`` does not lead; nothing changes then."""
        self._run(elections.resign(election, term))

    def participants(self, election: str) -> List[str]:
        """The candidates this daemon queues for ``election``, first in line
        first (other daemons keep their own queues; a leader is no longer
        queued)."""
        return self._run(elections.participants(election))


class Lease(LeaseBase):
    """A lock taken with ``Client.acquire``, which the caller keeps alive
    (``extend``) and gives back (``release``). As a context manager it
    releases on exit and raises ``LockLost`` when the lock was no longer
    held to the end."""

    __slots__ = ()

    def extend(self, ttl: Optional[v.Seconds] = None) -> bool:
        """Resets the lock's time to live to ``ttl`` (default: the TTL it
        was taken with) and moves ``valid_until`` on. ``False`` when the lock
        is lost (expired or taken over) or this lease was released: stop
        working under it."""
        return self._client._run(calls.extend(self, ttl))

    def release(self) -> bool:
        """Gives the lock back. ``True`` when it was still held to the end;
        ``False`` when it had expired or been taken over meanwhile, or (the
        daemon is not asked again) when this lease was released before."""
        return self._client._run(calls.release(self))

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if not self.release():
            raise LockLost(calls.NOT_HELD_TO_END) from exc
        return False
