"""The daemon's checks that the client can make before anything is sent,
worded as the daemon words them (src/api/request.rs), and durations:
seconds (an ``int`` or ``float``) or a ``datetime.timedelta``.

Ranges only the daemon knows (``ttl`` within its ``[min_ttl, max_ttl]``,
``wait`` up to ``max_wait``, a session's TTL floor) come back from it as
``InvalidArgument`` with the same kind of message."""

from __future__ import annotations

import math
import unicodedata
from collections import abc
from datetime import timedelta
from typing import Iterable, List, Optional, Union

from google.protobuf.duration_pb2 import Duration

from ._errors import InvalidArgument
from .v1 import lock_pb2 as pb

#: The daemon's limits on text fields, in bytes.
MAX_RESOURCE_BYTES = 256
MAX_OWNER_BYTES = 256
MAX_REENTRANCY_KEY_BYTES = 128
MAX_ELECTION_BYTES = 256
MAX_CANDIDATE_BYTES = 256
#: The longest value a leader publishes (docs/design.md#elections).
MAX_ELECTION_VALUE_BYTES = 4096
#: Terms are fencing tokens: a uint64, never 0.
MAX_TERM = 2**64 - 1
#: The most resources one set takes (AcquireMany, ReleaseMany).
MAX_SET = 16
#: The most permits the wire can carry (a uint32); the daemon's own limit,
#: lock.max_permits (64 by default), is checked by the daemon.
MAX_PERMITS_WIRE = 2**32 - 1
#: The longest a protobuf Duration can say (10,000 years).
MAX_DURATION_SECONDS = 315_576_000_000

Seconds = Union[float, int, timedelta]


def seconds(value: Seconds, field: str) -> float:
    """``value`` in seconds; ``InvalidArgument`` naming ``field`` when it is
    not a finite, non-negative duration."""
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgument(
            f"invalid {field}: must be seconds (an int or a float) or a datetime.timedelta, not {type(value).__name__}"
        )
    if not math.isfinite(value) or abs(value) > MAX_DURATION_SECONDS:
        raise InvalidArgument(f"invalid {field}: {value} is not a duration a request can carry (seconds, finite)")
    if value < 0:
        d = to_wire(value)
        # The daemon's words for a negative protobuf Duration.
        raise InvalidArgument(
            f"invalid {field}: {d.seconds}s {d.nanos}ns is not a valid non-negative duration "
            "(seconds >= 0, 0 <= nanos < 1e9)"
        )
    return float(value)


def optional_seconds(value: Optional[Seconds], field: str) -> Optional[float]:
    return None if value is None else seconds(value, field)


def to_wire(value: float) -> Duration:
    d = Duration()
    d.FromNanoseconds(int(round(value * 1e9)))
    return d


def from_wire(d: Duration) -> float:
    return d.ToNanoseconds() / 1e9


def mode(shared: bool) -> int:
    """The wire's ``LockMode`` for ``shared``: a reader or a writer."""
    if not isinstance(shared, bool):
        raise InvalidArgument(f"invalid shared: must be a bool, not {type(shared).__name__}")
    return pb.LOCK_MODE_SHARED if shared else pb.LOCK_MODE_EXCLUSIVE


def kind(shared: bool, permits: int, reentrancy_key: str) -> dict:
    """The request fields that say what is taken: ``mode``, ``permits`` (0 or
    1: a lock; N >= 2: one of N permits of a semaphore) and
    ``reentrancy_key``, checked as the daemon checks them (the key is never
    shown in a message)."""
    wire_mode = mode(shared)
    if isinstance(permits, bool) or not isinstance(permits, int):
        raise InvalidArgument(f"invalid permits: must be an int, not {type(permits).__name__}")
    if permits < 0 or permits > MAX_PERMITS_WIRE:
        raise InvalidArgument(f"invalid permits: {permits} is not a number of permits (0 or 1: a lock; N >= 2: a semaphore)")
    if shared and permits >= 2:
        # The daemon's words (src/api/request.rs).
        raise InvalidArgument(
            "invalid permits: a shared lock takes no permits: set permits to 0 or 1, or mode to LOCK_MODE_EXCLUSIVE"
        )
    if not isinstance(reentrancy_key, str):
        raise InvalidArgument(f"invalid reentrancy_key: must be a str, not {type(reentrancy_key).__name__}")
    try:
        size = len(reentrancy_key.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidArgument("invalid reentrancy_key: is not valid UTF-8 (it has a lone surrogate)") from None
    if size > MAX_REENTRANCY_KEY_BYTES:
        raise InvalidArgument(f"invalid reentrancy_key: is {size} bytes; at most {MAX_REENTRANCY_KEY_BYTES} are allowed")
    return {"mode": wire_mode, "permits": permits, "reentrancy_key": reentrancy_key}


def resource(value: str) -> None:
    """1 to 256 bytes of printable UTF-8."""
    _printable("resource", value, 1, MAX_RESOURCE_BYTES)


def resources(value: Iterable[str]) -> List[str]:
    """A set's names (a list or another iterable of ``str``, not one
    ``str``): 1 to 16, each a valid resource, counted as given (repeats
    too, as the daemon counts them). Returns them as a list."""
    if isinstance(value, (str, bytes)) or not isinstance(value, abc.Iterable):
        raise InvalidArgument(f"invalid resources: must be a list of str, not {type(value).__name__}")
    names = list(value)
    if not 1 <= len(names) <= MAX_SET:
        # The daemon's words (src/api/request.rs).
        raise InvalidArgument(f"invalid resources: {len(names)} names; 1 to {MAX_SET} are allowed")
    for i, name in enumerate(names):
        wrong = _not_printable(name, 1, MAX_RESOURCE_BYTES)
        if wrong:
            raise InvalidArgument(f"invalid resources: [{i}] {wrong}")
    return names


def owner(value: str) -> None:
    """0 to 256 bytes of printable UTF-8."""
    _printable("owner", value, 0, MAX_OWNER_BYTES)


def election(value: str) -> None:
    """An election's name: 1 to 256 bytes of printable UTF-8."""
    _printable("election", value, 1, MAX_ELECTION_BYTES)


def candidate(value: str) -> None:
    """A candidate's name: 1 to 256 bytes of printable UTF-8."""
    _printable("candidate", value, 1, MAX_CANDIDATE_BYTES)


def election_value(value) -> bytes:
    """A leader's value (``bytes``, or a ``str`` sent as UTF-8): at most
    4096 bytes, anything. Returns the bytes."""
    if isinstance(value, str):
        try:
            value = value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidArgument("invalid value: is not valid UTF-8 (it has a lone surrogate)") from None
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidArgument(f"invalid value: must be bytes or a str, not {type(value).__name__}")
    value = bytes(value)
    if len(value) > MAX_ELECTION_VALUE_BYTES:
        # The daemon's words (src/api/request.rs).
        raise InvalidArgument(
            f"invalid value: is {len(value)} bytes long; at most {MAX_ELECTION_VALUE_BYTES} are allowed"
        )
    return value


def term(value: int) -> int:
    """A term, as ELECTED or ``leader()`` gave it: 1 to 2^64 - 1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"invalid term: must be an int, not {type(value).__name__}")
    if value == 0:
        # The daemon's words (src/api/request.rs).
        raise InvalidArgument("invalid term: must be set: the term ELECTED or Leader gave")
    if not 0 < value <= MAX_TERM:
        raise InvalidArgument(f"invalid term: {value} is not a term (1 to 2^64 - 1)")
    return value


def _printable(field: str, value: str, least: int, most: int) -> None:
    wrong = _not_printable(value, least, most)
    if wrong:
        raise InvalidArgument(f"invalid {field}: {wrong}")


def _not_printable(value: str, least: int, most: int) -> Optional[str]:
    """What is wrong with ``value`` as ``least`` to ``most`` bytes of
    printable UTF-8, in the daemon's words; ``None`` when nothing is."""
    if not isinstance(value, str):
        return f"must be a str, not {type(value).__name__}"
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return "is not valid UTF-8 (it has a lone surrogate)"
    if size < least or size > most:
        return f"is {size} bytes long; it must be {least} to {most} bytes of printable UTF-8"
    for c in value:
        # The daemon refuses what Rust's char::is_control refuses: category Cc.
        if unicodedata.category(c) == "Cc":
            return f"contains the control character {_rust_debug(c)}; only printable UTF-8 is allowed"
    return None


def _rust_debug(c: str) -> str:
    """A control character as Rust's ``{:?}`` shows it, as the daemon does."""
    named = {"\0": "\\0", "\t": "\\t", "\r": "\\r", "\n": "\\n"}
    return "'" + named.get(c, f"\\u{{{ord(c):x}}}") + "'"
