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

class CampaignEvent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CAMPAIGN_EVENT_UNSPECIFIED: _ClassVar[CampaignEvent]
    CAMPAIGN_EVENT_ELECTED: _ClassVar[CampaignEvent]
    CAMPAIGN_EVENT_EXTENDED: _ClassVar[CampaignEvent]
    CAMPAIGN_EVENT_PROCLAIMED: _ClassVar[CampaignEvent]
    CAMPAIGN_EVENT_LOST: _ClassVar[CampaignEvent]
    CAMPAIGN_EVENT_RESIGNED: _ClassVar[CampaignEvent]
    CAMPAIGN_EVENT_NOT_ELECTED: _ClassVar[CampaignEvent]
CAMPAIGN_EVENT_UNSPECIFIED: CampaignEvent
CAMPAIGN_EVENT_ELECTED: CampaignEvent
CAMPAIGN_EVENT_EXTENDED: CampaignEvent
CAMPAIGN_EVENT_PROCLAIMED: CampaignEvent
CAMPAIGN_EVENT_LOST: CampaignEvent
CAMPAIGN_EVENT_RESIGNED: CampaignEvent
CAMPAIGN_EVENT_NOT_ELECTED: CampaignEvent

class CampaignRequest(_message.Message):
    __slots__ = ("start", "proclaim", "resign")
    START_FIELD_NUMBER: _ClassVar[int]
    PROCLAIM_FIELD_NUMBER: _ClassVar[int]
    RESIGN_FIELD_NUMBER: _ClassVar[int]
    start: CampaignStart
    proclaim: CampaignProclaim
    resign: CampaignResign
    def __init__(self, start: _Optional[_Union[CampaignStart, _Mapping]] = ..., proclaim: _Optional[_Union[CampaignProclaim, _Mapping]] = ..., resign: _Optional[_Union[CampaignResign, _Mapping]] = ...) -> None: ...

class CampaignStart(_message.Message):
    __slots__ = ("election", "candidate", "value", "ttl", "max_hold", "lock_delay")
    ELECTION_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    MAX_HOLD_FIELD_NUMBER: _ClassVar[int]
    LOCK_DELAY_FIELD_NUMBER: _ClassVar[int]
    election: str
    candidate: str
    value: bytes
    ttl: _duration_pb2.Duration
    max_hold: _duration_pb2.Duration
    lock_delay: _duration_pb2.Duration
    def __init__(self, election: _Optional[str] = ..., candidate: _Optional[str] = ..., value: _Optional[bytes] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_hold: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., lock_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class CampaignProclaim(_message.Message):
    __slots__ = ("value",)
    VALUE_FIELD_NUMBER: _ClassVar[int]
    value: bytes
    def __init__(self, value: _Optional[bytes] = ...) -> None: ...

class CampaignResign(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CampaignResponse(_message.Message):
    __slots__ = ("event", "term", "valid_for", "value", "reason")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    VALID_FOR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    event: CampaignEvent
    term: int
    valid_for: _duration_pb2.Duration
    value: bytes
    reason: str
    def __init__(self, event: _Optional[_Union[CampaignEvent, str]] = ..., term: _Optional[int] = ..., valid_for: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., value: _Optional[bytes] = ..., reason: _Optional[str] = ...) -> None: ...

class LeaderRequest(_message.Message):
    __slots__ = ("election",)
    ELECTION_FIELD_NUMBER: _ClassVar[int]
    election: str
    def __init__(self, election: _Optional[str] = ...) -> None: ...

class LeaderResponse(_message.Message):
    __slots__ = ("elected", "candidate", "value", "term", "since")
    ELECTED_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    elected: bool
    candidate: str
    value: bytes
    term: int
    since: _timestamp_pb2.Timestamp
    def __init__(self, elected: _Optional[bool] = ..., candidate: _Optional[str] = ..., value: _Optional[bytes] = ..., term: _Optional[int] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ObserveRequest(_message.Message):
    __slots__ = ("election",)
    ELECTION_FIELD_NUMBER: _ClassVar[int]
    election: str
    def __init__(self, election: _Optional[str] = ...) -> None: ...

class ProclaimRequest(_message.Message):
    __slots__ = ("election", "term", "value")
    ELECTION_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    election: str
    term: int
    value: bytes
    def __init__(self, election: _Optional[str] = ..., term: _Optional[int] = ..., value: _Optional[bytes] = ...) -> None: ...

class ProclaimResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ResignRequest(_message.Message):
    __slots__ = ("election", "term")
    ELECTION_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    election: str
    term: int
    def __init__(self, election: _Optional[str] = ..., term: _Optional[int] = ...) -> None: ...

class ResignResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ParticipantsRequest(_message.Message):
    __slots__ = ("election",)
    ELECTION_FIELD_NUMBER: _ClassVar[int]
    election: str
    def __init__(self, election: _Optional[str] = ...) -> None: ...

class ParticipantsResponse(_message.Message):
    __slots__ = ("candidates",)
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    candidates: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, candidates: _Optional[_Iterable[str]] = ...) -> None: ...
