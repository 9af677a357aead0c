import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LockMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LOCK_MODE_EXCLUSIVE: _ClassVar[LockMode]
    LOCK_MODE_SHARED: _ClassVar[LockMode]

class NodeOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NODE_OUTCOME_UNSPECIFIED: _ClassVar[NodeOutcome]
    NODE_OUTCOME_GRANTED: _ClassVar[NodeOutcome]
    NODE_OUTCOME_TAKEN: _ClassVar[NodeOutcome]
    NODE_OUTCOME_TIMED_OUT: _ClassVar[NodeOutcome]
    NODE_OUTCOME_ERRORED: _ClassVar[NodeOutcome]
    NODE_OUTCOME_QUARANTINED: _ClassVar[NodeOutcome]
    NODE_OUTCOME_UNUSABLE: _ClassVar[NodeOutcome]
    NODE_OUTCOME_NOT_AWAITED: _ClassVar[NodeOutcome]

class FailureReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAILURE_REASON_UNSPECIFIED: _ClassVar[FailureReason]
    FAILURE_REASON_TAKEN: _ClassVar[FailureReason]
    FAILURE_REASON_VALIDITY_USED_UP: _ClassVar[FailureReason]

class HoldEvent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOLD_EVENT_UNSPECIFIED: _ClassVar[HoldEvent]
    HOLD_EVENT_ACQUIRED: _ClassVar[HoldEvent]
    HOLD_EVENT_EXTENDED: _ClassVar[HoldEvent]
    HOLD_EVENT_LOST: _ClassVar[HoldEvent]
    HOLD_EVENT_RELEASED: _ClassVar[HoldEvent]
    HOLD_EVENT_NOT_ACQUIRED: _ClassVar[HoldEvent]
LOCK_MODE_EXCLUSIVE: LockMode
LOCK_MODE_SHARED: LockMode
NODE_OUTCOME_UNSPECIFIED: NodeOutcome
NODE_OUTCOME_GRANTED: NodeOutcome
NODE_OUTCOME_TAKEN: NodeOutcome
NODE_OUTCOME_TIMED_OUT: NodeOutcome
NODE_OUTCOME_ERRORED: NodeOutcome
NODE_OUTCOME_QUARANTINED: NodeOutcome
NODE_OUTCOME_UNUSABLE: NodeOutcome
NODE_OUTCOME_NOT_AWAITED: NodeOutcome
FAILURE_REASON_UNSPECIFIED: FailureReason
FAILURE_REASON_TAKEN: FailureReason
FAILURE_REASON_VALIDITY_USED_UP: FailureReason
HOLD_EVENT_UNSPECIFIED: HoldEvent
HOLD_EVENT_ACQUIRED: HoldEvent
HOLD_EVENT_EXTENDED: HoldEvent
HOLD_EVENT_LOST: HoldEvent
HOLD_EVENT_RELEASED: HoldEvent
HOLD_EVENT_NOT_ACQUIRED: HoldEvent

class AcquireRequest(_message.Message):
    __slots__ = ("resource", "ttl", "wait", "owner", "mode")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    resource: str
    ttl: _duration_pb2.Duration
    wait: _duration_pb2.Duration
    owner: str
    mode: LockMode
    def __init__(self, resource: _Optional[str] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., owner: _Optional[str] = ..., mode: _Optional[_Union[LockMode, str]] = ...) -> None: ...

class Lease(_message.Message):
    __slots__ = ("resource", "value", "fencing_token", "validity", "mode")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    FENCING_TOKEN_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    resource: str
    value: str
    fencing_token: int
    validity: _duration_pb2.Duration
    mode: LockMode
    def __init__(self, resource: _Optional[str] = ..., value: _Optional[str] = ..., fencing_token: _Optional[int] = ..., validity: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., mode: _Optional[_Union[LockMode, str]] = ...) -> None: ...

class AcquireResponse(_message.Message):
    __slots__ = ("acquired", "lease", "reason", "attempts", "nodes", "validity_left")
    ACQUIRED_FIELD_NUMBER: _ClassVar[int]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_LEFT_FIELD_NUMBER: _ClassVar[int]
    acquired: bool
    lease: Lease
    reason: FailureReason
    attempts: int
    nodes: _containers.RepeatedScalarFieldContainer[NodeOutcome]
    validity_left: _duration_pb2.Duration
    def __init__(self, acquired: _Optional[bool] = ..., lease: _Optional[_Union[Lease, _Mapping]] = ..., reason: _Optional[_Union[FailureReason, str]] = ..., attempts: _Optional[int] = ..., nodes: _Optional[_Iterable[_Union[NodeOutcome, str]]] = ..., validity_left: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ExtendRequest(_message.Message):
    __slots__ = ("resource", "value", "ttl")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    resource: str
    value: str
    ttl: _duration_pb2.Duration
    def __init__(self, resource: _Optional[str] = ..., value: _Optional[str] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ExtendResponse(_message.Message):
    __slots__ = ("extended", "validity")
    EXTENDED_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    extended: bool
    validity: _duration_pb2.Duration
    def __init__(self, extended: _Optional[bool] = ..., validity: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ReleaseRequest(_message.Message):
    __slots__ = ("resource", "value")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    resource: str
    value: str
    def __init__(self, resource: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class ReleaseResponse(_message.Message):
    __slots__ = ("released",)
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    released: bool
    def __init__(self, released: _Optional[bool] = ...) -> None: ...

class HoldRequest(_message.Message):
    __slots__ = ("start", "release")
    START_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    start: HoldStart
    release: HoldRelease
    def __init__(self, start: _Optional[_Union[HoldStart, _Mapping]] = ..., release: _Optional[_Union[HoldRelease, _Mapping]] = ...) -> None: ...

class HoldStart(_message.Message):
    __slots__ = ("resource", "ttl", "wait", "owner", "max_hold", "mode")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    MAX_HOLD_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    resource: str
    ttl: _duration_pb2.Duration
    wait: _duration_pb2.Duration
    owner: str
    max_hold: _duration_pb2.Duration
    mode: LockMode
    def __init__(self, resource: _Optional[str] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., owner: _Optional[str] = ..., max_hold: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., mode: _Optional[_Union[LockMode, str]] = ...) -> None: ...

class HoldRelease(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HoldResponse(_message.Message):
    __slots__ = ("event", "lease", "reason", "held_to_end", "nodes")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    HELD_TO_END_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    event: HoldEvent
    lease: Lease
    reason: str
    held_to_end: bool
    nodes: _containers.RepeatedScalarFieldContainer[NodeOutcome]
    def __init__(self, event: _Optional[_Union[HoldEvent, str]] = ..., lease: _Optional[_Union[Lease, _Mapping]] = ..., reason: _Optional[str] = ..., held_to_end: _Optional[bool] = ..., nodes: _Optional[_Iterable[_Union[NodeOutcome, str]]] = ...) -> None: ...

class PipelineRequest(_message.Message):
    __slots__ = ("id", "acquire", "extend", "release")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACQUIRE_FIELD_NUMBER: _ClassVar[int]
    EXTEND_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    id: int
    acquire: AcquireRequest
    extend: ExtendRequest
    release: ReleaseRequest
    def __init__(self, id: _Optional[int] = ..., acquire: _Optional[_Union[AcquireRequest, _Mapping]] = ..., extend: _Optional[_Union[ExtendRequest, _Mapping]] = ..., release: _Optional[_Union[ReleaseRequest, _Mapping]] = ...) -> None: ...

class PipelineResponse(_message.Message):
    __slots__ = ("id", "acquire", "extend", "release", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACQUIRE_FIELD_NUMBER: _ClassVar[int]
    EXTEND_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: int
    acquire: AcquireResponse
    extend: ExtendResponse
    release: ReleaseResponse
    error: CallError
    def __init__(self, id: _Optional[int] = ..., acquire: _Optional[_Union[AcquireResponse, _Mapping]] = ..., extend: _Optional[_Union[ExtendResponse, _Mapping]] = ..., release: _Optional[_Union[ReleaseResponse, _Mapping]] = ..., error: _Optional[_Union[CallError, _Mapping]] = ...) -> None: ...

class CallError(_message.Message):
    __slots__ = ("code", "message", "nodes", "needed")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    NEEDED_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    nodes: _containers.RepeatedScalarFieldContainer[NodeOutcome]
    needed: int
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., nodes: _Optional[_Iterable[_Union[NodeOutcome, str]]] = ..., needed: _Optional[int] = ...) -> None: ...

class InspectRequest(_message.Message):
    __slots__ = ("resource",)
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    resource: str
    def __init__(self, resource: _Optional[str] = ...) -> None: ...

class InspectResponse(_message.Message):
    __slots__ = ("held", "agreeing", "quorum", "nodes", "holder", "waiting", "waiter_owners", "readers")
    HELD_FIELD_NUMBER: _ClassVar[int]
    AGREEING_FIELD_NUMBER: _ClassVar[int]
    QUORUM_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    WAITER_OWNERS_FIELD_NUMBER: _ClassVar[int]
    READERS_FIELD_NUMBER: _ClassVar[int]
    held: bool
    agreeing: int
    quorum: int
    nodes: _containers.RepeatedCompositeFieldContainer[NodeView]
    holder: Holder
    waiting: int
    waiter_owners: _containers.RepeatedScalarFieldContainer[str]
    readers: int
    def __init__(self, held: _Optional[bool] = ..., agreeing: _Optional[int] = ..., quorum: _Optional[int] = ..., nodes: _Optional[_Iterable[_Union[NodeView, _Mapping]]] = ..., holder: _Optional[_Union[Holder, _Mapping]] = ..., waiting: _Optional[int] = ..., waiter_owners: _Optional[_Iterable[str]] = ..., readers: _Optional[int] = ...) -> None: ...

class Holder(_message.Message):
    __slots__ = ("owner", "tenant", "daemon", "since", "fencing_token", "ttl")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    DAEMON_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    FENCING_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    owner: str
    tenant: str
    daemon: str
    since: _timestamp_pb2.Timestamp
    fencing_token: int
    ttl: _duration_pb2.Duration
    def __init__(self, owner: _Optional[str] = ..., tenant: _Optional[str] = ..., daemon: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., fencing_token: _Optional[int] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class NodeView(_message.Message):
    __slots__ = ("index", "address", "reachable", "state", "held", "with_majority", "ttl", "fence_counter")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    REACHABLE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    HELD_FIELD_NUMBER: _ClassVar[int]
    WITH_MAJORITY_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    FENCE_COUNTER_FIELD_NUMBER: _ClassVar[int]
    index: int
    address: str
    reachable: bool
    state: str
    held: bool
    with_majority: bool
    ttl: _duration_pb2.Duration
    fence_counter: int
    def __init__(self, index: _Optional[int] = ..., address: _Optional[str] = ..., reachable: _Optional[bool] = ..., state: _Optional[str] = ..., held: _Optional[bool] = ..., with_majority: _Optional[bool] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., fence_counter: _Optional[int] = ...) -> None: ...
