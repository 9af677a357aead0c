"""What the sync and async clients share: the connection settings (read
like redlockctl reads them), durations, the daemon's checks made before
sending, and the leases' bookkeeping."""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Optional, Tuple, Union

import grpc
from google.protobuf.duration_pb2 import Duration

from ._errors import InvalidArgument, RedlockdError, from_status

#: The sidecar on loopback.
DEFAULT_ADDR = "127.0.0.1:7420"
#: A wait the daemon cuts short with UNAVAILABLE is retried after a pause
#: uniform in this range (seconds), never past the caller's wait.
RETRY_PAUSE = (0.05, 0.25)
#: The daemon's limits on text fields, in bytes.
MAX_RESOURCE_BYTES = 256
MAX_OWNER_BYTES = 256

Seconds = Union[float, int, timedelta]


@dataclass(frozen=True)
class TLS:
    """TLS settings, as PEM bytes: the CA to trust (``None``: the system's
    roots) and, for mutual TLS, a client certificate chain and its key."""

    ca: Optional[bytes] = None
    cert: Optional[bytes] = None
    key: Optional[bytes] = None

    @staticmethod
    def from_files(ca: Optional[str] = None, cert: Optional[str] = None, key: Optional[str] = None) -> "TLS":
        """Reads the PEM files."""

        def read(path: Optional[str]) -> Optional[bytes]:
            if path is None:
                return None
            with open(path, "rb") as f:
                return f.read()

        if (cert is None) != (key is None):
            raise InvalidArgument("cert and key must be given together")
        return TLS(read(ca), read(cert), read(key))


def settings(addr: Optional[str], token: Optional[str], tls: Optional[TLS]) -> Tuple[str, Optional[str], Optional[TLS]]:
    """The address, token and TLS to use: what was given, else what the
    environment says (``REDLOCKD_ADDR``, ``REDLOCKD_TOKEN``, ``REDLOCKD_CA``,
    ``REDLOCKD_CERT`` with ``REDLOCKD_KEY``), as redlockctl reads them."""
    env = lambda name: os.environ.get(name) or None  # noqa: E731
    addr = addr or env("REDLOCKD_ADDR") or DEFAULT_ADDR
    token = token if token is not None else env("REDLOCKD_TOKEN")
    if tls is None and (env("REDLOCKD_CA") or env("REDLOCKD_CERT") or env("REDLOCKD_KEY")):
        if bool(env("REDLOCKD_CERT")) != bool(env("REDLOCKD_KEY")):
            raise InvalidArgument("REDLOCKD_CERT and REDLOCKD_KEY must be set together")
        tls = TLS.from_files(env("REDLOCKD_CA"), env("REDLOCKD_CERT"), env("REDLOCKD_KEY"))
    for scheme in ("http://", "https://"):
        if addr.startswith(scheme):
            if scheme == "https://" and tls is None:
                tls = TLS()
            addr = addr[len(scheme):]
    return addr, token, tls


def credentials(tls: TLS) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(root_certificates=tls.ca, private_key=tls.key, certificate_chain=tls.cert)


def metadata(token: Optional[str]):
    if token is None:
        return None
    if not token.isascii() or not token.isprintable():
        raise InvalidArgument("the token must be printable ASCII")
    return (("authorization", f"Bearer {token}"),)


def seconds(value: Seconds, field: str) -> float:
    """A duration given as seconds (float) or a ``timedelta``."""
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise InvalidArgument(f"invalid {field}: must be seconds (a number) or a timedelta, not {type(value).__name__}")
    if value < 0:
        raise InvalidArgument(f"invalid {field}: must not be negative (got {value} s)")
    return float(value)


def wire(value: float) -> Duration:
    d = Duration()
    d.FromNanoseconds(int(round(value * 1e9)))
    return d


def from_wire(d: Duration) -> float:
    return d.ToNanoseconds() / 1e9


def printable(field: str, value: str, least: int, most: int) -> None:
    """The daemon's rule for text fields, with its message."""
    size = len(value.encode("utf-8"))
    if size < least or size > most:
        raise InvalidArgument(
            f"invalid {field}: is {size} bytes long; it must be {least} to {most} bytes of printable UTF-8"
        )
    for c in value:
        if not c.isprintable() and c != " ":
            raise InvalidArgument(f"invalid {field}: contains the control character {c!r}; only printable UTF-8 is allowed")


def check(resource: str, owner: str = "") -> None:
    printable("resource", resource, 1, MAX_RESOURCE_BYTES)
    printable("owner", owner, 0, MAX_OWNER_BYTES)


def error(rpc_error: grpc.RpcError) -> RedlockdError:
    """The typed error of a failed call."""
    code = rpc_error.code() if hasattr(rpc_error, "code") else grpc.StatusCode.UNKNOWN
    message = rpc_error.details() if hasattr(rpc_error, "details") else str(rpc_error)
    details = None
    trailers = rpc_error.trailing_metadata() if hasattr(rpc_error, "trailing_metadata") else None
    for key, value in trailers or ():
        if key == "grpc-status-details-bin":
            details = value
    return from_status(code, message or "", details)


def retry_pause(deadline: float) -> Optional[float]:
    """How long to pause before trying again after UNAVAILABLE, or ``None``
    when the wait would run out first."""
    pause = random.uniform(*RETRY_PAUSE)
    return pause if time.monotonic() + pause < deadline else None


class LeaseInfo:
    """What every lease shows: the resource, the fencing token and until
    when the lock is guaranteed. The value is never shown."""

    __slots__ = ("resource", "fencing_token", "valid_until", "_value")

    def __init__(self, resource: str, value: str, fencing_token: int, valid_until: float):
        #: The locked resource.
        self.resource = resource
        #: Strictly increases per resource; exact at any size (a Python int).
        self.fencing_token = fencing_token
        #: A ``time.monotonic()`` deadline, counted from when the request was sent.
        self.valid_until = valid_until
        self._value = value

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(resource={self.resource!r}, fencing_token={self.fencing_token}, "
            f"valid_for={max(0.0, self.valid_until - time.monotonic()):.3f}s)"
        )
