import datetime

from google.api import annotations_pb2 as _annotations_pb2
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

class WatchEvent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WATCH_EVENT_UNSPECIFIED: _ClassVar[WatchEvent]
    WATCH_EVENT_CURRENT: _ClassVar[WatchEvent]
    WATCH_EVENT_ACQUIRED: _ClassVar[WatchEvent]
    WATCH_EVENT_RELEASED: _ClassVar[WatchEvent]
    WATCH_EVENT_EXPIRED: _ClassVar[WatchEvent]
    WATCH_EVENT_FORCE_RELEASED: _ClassVar[WatchEvent]
    WATCH_EVENT_CHANGED: _ClassVar[WatchEvent]
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
WATCH_EVENT_UNSPECIFIED: WatchEvent
WATCH_EVENT_CURRENT: WatchEvent
WATCH_EVENT_ACQUIRED: WatchEvent
WATCH_EVENT_RELEASED: WatchEvent
WATCH_EVENT_EXPIRED: WatchEvent
WATCH_EVENT_FORCE_RELEASED: WatchEvent
WATCH_EVENT_CHANGED: WatchEvent

class AcquireManyRequest(_message.Message):
    __slots__ = ("resources", "ttl", "wait", "owner")
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    resources: _containers.RepeatedScalarFieldContainer[str]
    ttl: _duration_pb2.Duration
    wait: _duration_pb2.Duration
    owner: str
    def __init__(self, resources: _Optional[_Iterable[str]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., owner: _Optional[str] = ...) -> None: ...

class AcquireManyResponse(_message.Message):
    __slots__ = ("acquired", "leases", "reason", "attempts", "nodes")
    ACQUIRED_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    acquired: bool
    leases: _containers.RepeatedCompositeFieldContainer[Lease]
    reason: FailureReason
    attempts: int
    nodes: _containers.RepeatedScalarFieldContainer[NodeOutcome]
    def __init__(self, acquired: _Optional[bool] = ..., leases: _Optional[_Iterable[_Union[Lease, _Mapping]]] = ..., reason: _Optional[_Union[FailureReason, str]] = ..., attempts: _Optional[int] = ..., nodes: _Optional[_Iterable[_Union[NodeOutcome, str]]] = ...) -> None: ...

class ExtendManyRequest(_message.Message):
    __slots__ = ("resources", "value", "ttl")
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    resources: _containers.RepeatedScalarFieldContainer[str]
    value: str
    ttl: _duration_pb2.Duration
    def __init__(self, resources: _Optional[_Iterable[str]] = ..., value: _Optional[str] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ExtendManyResponse(_message.Message):
    __slots__ = ("extended", "members", "validity")
    EXTENDED_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    extended: bool
    members: _containers.RepeatedScalarFieldContainer[bool]
    validity: _duration_pb2.Duration
    def __init__(self, extended: _Optional[bool] = ..., members: _Optional[_Iterable[bool]] = ..., validity: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ReleaseManyRequest(_message.Message):
    __slots__ = ("resources", "value")
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    resources: _containers.RepeatedScalarFieldContainer[str]
    value: str
    def __init__(self, resources: _Optional[_Iterable[str]] = ..., value: _Optional[str] = ...) -> None: ...

class ReleaseManyResponse(_message.Message):
    __slots__ = ("released", "members")
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    released: bool
    members: _containers.RepeatedScalarFieldContainer[bool]
    def __init__(self, released: _Optional[bool] = ..., members: _Optional[_Iterable[bool]] = ...) -> None: ...

class AcquireRequest(_message.Message):
    __slots__ = ("resource", "ttl", "wait", "owner", "mode", "permits", "reentrancy_key", "lock_delay")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PERMITS_FIELD_NUMBER: _ClassVar[int]
    REENTRANCY_KEY_FIELD_NUMBER: _ClassVar[int]
    LOCK_DELAY_FIELD_NUMBER: _ClassVar[int]
    resource: str
    ttl: _duration_pb2.Duration
    wait: _duration_pb2.Duration
    owner: str
    mode: LockMode
    permits: int
    reentrancy_key: str
    lock_delay: _duration_pb2.Duration
    def __init__(self, resource: _Optional[str] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., owner: _Optional[str] = ..., mode: _Optional[_Union[LockMode, str]] = ..., permits: _Optional[int] = ..., reentrancy_key: _Optional[str] = ..., lock_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class Lease(_message.Message):
    __slots__ = ("resource", "value", "fencing_token", "validity", "mode", "permits", "slot")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    FENCING_TOKEN_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PERMITS_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    resource: str
    value: str
    fencing_token: int
    validity: _duration_pb2.Duration
    mode: LockMode
    permits: int
    slot: int
    def __init__(self, resource: _Optional[str] = ..., value: _Optional[str] = ..., fencing_token: _Optional[int] = ..., validity: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., mode: _Optional[_Union[LockMode, str]] = ..., permits: _Optional[int] = ..., slot: _Optional[int] = ...) -> None: ...

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
    __slots__ = ("resource", "ttl", "wait", "owner", "max_hold", "mode", "permits", "reentrancy_key", "lock_delay")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    MAX_HOLD_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PERMITS_FIELD_NUMBER: _ClassVar[int]
    REENTRANCY_KEY_FIELD_NUMBER: _ClassVar[int]
    LOCK_DELAY_FIELD_NUMBER: _ClassVar[int]
    resource: str
    ttl: _duration_pb2.Duration
    wait: _duration_pb2.Duration
    owner: str
    max_hold: _duration_pb2.Duration
    mode: LockMode
    permits: int
    reentrancy_key: str
    lock_delay: _duration_pb2.Duration
    def __init__(self, resource: _Optional[str] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., owner: _Optional[str] = ..., max_hold: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., mode: _Optional[_Union[LockMode, str]] = ..., permits: _Optional[int] = ..., reentrancy_key: _Optional[str] = ..., lock_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("id", "acquire", "extend", "release", "acquire_many", "extend_many", "release_many")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACQUIRE_FIELD_NUMBER: _ClassVar[int]
    EXTEND_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    ACQUIRE_MANY_FIELD_NUMBER: _ClassVar[int]
    EXTEND_MANY_FIELD_NUMBER: _ClassVar[int]
    RELEASE_MANY_FIELD_NUMBER: _ClassVar[int]
    id: int
    acquire: AcquireRequest
    extend: ExtendRequest
    release: ReleaseRequest
    acquire_many: AcquireManyRequest
    extend_many: ExtendManyRequest
    release_many: ReleaseManyRequest
    def __init__(self, id: _Optional[int] = ..., acquire: _Optional[_Union[AcquireRequest, _Mapping]] = ..., extend: _Optional[_Union[ExtendRequest, _Mapping]] = ..., release: _Optional[_Union[ReleaseRequest, _Mapping]] = ..., acquire_many: _Optional[_Union[AcquireManyRequest, _Mapping]] = ..., extend_many: _Optional[_Union[ExtendManyRequest, _Mapping]] = ..., release_many: _Optional[_Union[ReleaseManyRequest, _Mapping]] = ...) -> None: ...

class PipelineResponse(_message.Message):
    __slots__ = ("id", "acquire", "extend", "release", "error", "acquire_many", "extend_many", "release_many")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACQUIRE_FIELD_NUMBER: _ClassVar[int]
    EXTEND_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ACQUIRE_MANY_FIELD_NUMBER: _ClassVar[int]
    EXTEND_MANY_FIELD_NUMBER: _ClassVar[int]
    RELEASE_MANY_FIELD_NUMBER: _ClassVar[int]
    id: int
    acquire: AcquireResponse
    extend: ExtendResponse
    release: ReleaseResponse
    error: CallError
    acquire_many: AcquireManyResponse
    extend_many: ExtendManyResponse
    release_many: ReleaseManyResponse
    def __init__(self, id: _Optional[int] = ..., acquire: _Optional[_Union[AcquireResponse, _Mapping]] = ..., extend: _Optional[_Union[ExtendResponse, _Mapping]] = ..., release: _Optional[_Union[ReleaseResponse, _Mapping]] = ..., error: _Optional[_Union[CallError, _Mapping]] = ..., acquire_many: _Optional[_Union[AcquireManyResponse, _Mapping]] = ..., extend_many: _Optional[_Union[ExtendManyResponse, _Mapping]] = ..., release_many: _Optional[_Union[ReleaseManyResponse, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("held", "agreeing", "quorum", "nodes", "holder", "waiting", "waiter_owners", "readers", "permits", "permits_out", "set_members")
    HELD_FIELD_NUMBER: _ClassVar[int]
    AGREEING_FIELD_NUMBER: _ClassVar[int]
    QUORUM_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    WAITER_OWNERS_FIELD_NUMBER: _ClassVar[int]
    READERS_FIELD_NUMBER: _ClassVar[int]
    PERMITS_FIELD_NUMBER: _ClassVar[int]
    PERMITS_OUT_FIELD_NUMBER: _ClassVar[int]
    SET_MEMBERS_FIELD_NUMBER: _ClassVar[int]
    held: bool
    agreeing: int
    quorum: int
    nodes: _containers.RepeatedCompositeFieldContainer[NodeView]
    holder: Holder
    waiting: int
    waiter_owners: _containers.RepeatedScalarFieldContainer[str]
    readers: int
    permits: int
    permits_out: int
    set_members: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, held: _Optional[bool] = ..., agreeing: _Optional[int] = ..., quorum: _Optional[int] = ..., nodes: _Optional[_Iterable[_Union[NodeView, _Mapping]]] = ..., holder: _Optional[_Union[Holder, _Mapping]] = ..., waiting: _Optional[int] = ..., waiter_owners: _Optional[_Iterable[str]] = ..., readers: _Optional[int] = ..., permits: _Optional[int] = ..., permits_out: _Optional[int] = ..., set_members: _Optional[_Iterable[str]] = ...) -> None: ...

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

class WatchRequest(_message.Message):
    __slots__ = ("resource",)
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    resource: str
    def __init__(self, resource: _Optional[str] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("event", "held", "holder", "readers", "permits", "permits_out")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    HELD_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    READERS_FIELD_NUMBER: _ClassVar[int]
    PERMITS_FIELD_NUMBER: _ClassVar[int]
    PERMITS_OUT_FIELD_NUMBER: _ClassVar[int]
    event: WatchEvent
    held: bool
    holder: Holder
    readers: int
    permits: int
    permits_out: int
    def __init__(self, event: _Optional[_Union[WatchEvent, str]] = ..., held: _Optional[bool] = ..., holder: _Optional[_Union[Holder, _Mapping]] = ..., readers: _Optional[int] = ..., permits: _Optional[int] = ..., permits_out: _Optional[int] = ...) -> None: ...
