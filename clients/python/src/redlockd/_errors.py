"""What a call can fail with, by gRPC status code. Contention is not an
error: ``acquire`` returns ``None``."""

from __future__ import annotations

from typing import Dict, Iterable, Optional

import grpc


class RedlockdError(Exception):
    """Any error of this client."""

    #: The gRPC status code, when the daemon answered with one.
    code: Optional[grpc.StatusCode] = None


class InvalidArgument(RedlockdError, ValueError):
    """A request field is out of range: the message names the field and the
    allowed range (the daemon's own words; checked before sending when the
    client can)."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class Unavailable(RedlockdError):
    """Fewer than a quorum of the Redis masters could take part (or the
    daemon could not be reached: then ``nodes`` is empty)."""

    code = grpc.StatusCode.UNAVAILABLE

    def __init__(self, message: str, nodes: Optional[Dict[int, str]] = None, needed: Optional[int] = None):
        super().__init__(message)
        #: What each master said, by index: "granted", "held by another
        #: owner", "timed out", "errored", "quarantined", "unusable".
        self.nodes: Dict[int, str] = nodes or {}
        #: How many masters make a quorum, when the daemon said it.
        self.needed = needed


class NotAcquired(RedlockdError):
    """``hold`` gave up: the wait ran out while someone else held the lock."""

    def __init__(self, reason: str, nodes: Optional[Dict[int, str]] = None):
        super().__init__(f"not acquired: {reason}" if reason else "not acquired")
        #: The daemon's reason, e.g. "FAILURE_REASON_TAKEN".
        self.reason = reason
        #: What each master said in the last attempt, by index.
        self.nodes: Dict[int, str] = nodes or {}


class NotElected(NotAcquired):
    """``campaign()`` gave up: its ``wait`` ran out before it was elected
    (it resigned; nothing is held)."""

    def __init__(self, reason: str):
        RedlockdError.__init__(self, reason)
        self.reason = reason
        self.nodes: Dict[int, str] = {}


class LockLost(RedlockdError):
    """The lock was lost while it was held, or was no longer held when it
    was released: the work under it was not protected to the end."""


class LeadershipLost(LockLost):
    """The leadership was lost while the block ran (LOST, the daemon ending
    it, the stream breaking, or ``valid_until`` passing without an
    extension: the client's own deadline): stop acting as the leader."""


class Unauthenticated(RedlockdError):
    """No valid bearer token."""

    code = grpc.StatusCode.UNAUTHENTICATED


class PermissionDenied(RedlockdError):
    """The token's tenant may not lock this resource."""

    code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhausted(RedlockdError):
    """A waiter or session limit of the daemon was hit."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPrecondition(RedlockdError):
    """The lock is held as another kind than asked: permits of a semaphore
    with another number of permits are out, or a reentrancy key holds the
    lock in another mode or number of permits; or a proclaim or resign names
    a term that does not lead (the message names the current term)."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class DeadlineExceeded(RedlockdError):
    """The call's deadline passed."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED


_BY_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
}

#: NodeOutcome values, in the words the daemon's ErrorInfo uses.
OUTCOMES = {
    1: "granted",
    2: "held by another owner",
    3: "timed out",
    4: "errored",
    5: "quarantined",
    6: "unusable",
    7: "not awaited",
}


def outcomes(nodes: Iterable[int]) -> Dict[int, str]:
    """A repeated NodeOutcome, by master index."""
    return {i: OUTCOMES.get(n, f"outcome {n}") for i, n in enumerate(nodes)}


def from_rpc_error(rpc_error: grpc.RpcError) -> RedlockdError:
    """The typed error of a failed call (sync or grpc.aio)."""
    code = rpc_error.code() if hasattr(rpc_error, "code") else grpc.StatusCode.UNKNOWN
    message = (rpc_error.details() if hasattr(rpc_error, "details") else str(rpc_error)) or ""
    details = None
    trailers = rpc_error.trailing_metadata() if hasattr(rpc_error, "trailing_metadata") else None
    for key, value in trailers or ():
        if key == "grpc-status-details-bin":
            details = value
    return from_status(code, message, details)


def from_status(code: grpc.StatusCode, message: str, details: Optional[bytes]) -> RedlockdError:
    """The typed error for a status; ``details`` is the serialized
    ``google.rpc.Status`` of the ``grpc-status-details-bin`` trailer."""
    if code == grpc.StatusCode.UNAVAILABLE:
        nodes, needed = _error_info(details)
        return Unavailable(message, nodes, needed)
    kind = _BY_CODE.get(code)
    if kind is not None:
        return kind(message)
    error = RedlockdError(f"{code.name}: {message}")
    error.code = code
    return error


def _error_info(details: Optional[bytes]):
    """The ErrorInfo (reason NO_QUORUM) of an UNAVAILABLE: "node.<i>" -> what
    master i said, and "needed"."""
    if not details:
        return {}, None
    from google.rpc import error_details_pb2, status_pb2

    status = status_pb2.Status.FromString(details)
    nodes: Dict[int, str] = {}
    needed = None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Is(info.DESCRIPTOR) and detail.Unpack(info):
            for key, value in info.metadata.items():
                if key.startswith("node.") and key[5:].isdigit():
                    nodes[int(key[5:])] = value
                elif key == "needed" and value.isdigit():
                    needed = int(value)
    return dict(sorted(nodes.items())), needed
