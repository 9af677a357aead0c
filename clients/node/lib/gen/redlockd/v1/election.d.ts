import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { type CallOptions, type ChannelCredentials, Client, type ClientDuplexStream, type ClientOptions, type ClientReadableStream, type ClientUnaryCall, type handleBidiStreamingCall, type handleServerStreamingCall, type handleUnaryCall, type Metadata, type ServiceError, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { Duration } from "../../google/protobuf/duration";
import { Timestamp } from "../../google/protobuf/timestamp";
/**
 * redlockd.v1 — leader election (docs/design.md#elections).
 *
 * An election is a lock with a value. Candidates campaign on a stream; the
 * daemon queues them first-in first-out and, when one gets the election's
 * lock, tells it ELECTED with its term: the lock's fencing token, minted by
 * a quorum of masters and strictly increasing per election. A leader keeps
 * leading while its stream lives; it may publish a value (Proclaim) that
 * everyone can read (Leader) or follow (Observe).
 *
 * The leader's rule: send the term with every write to the resource the
 * leader manages, and have the resource reject terms lower than one it has
 * seen; stop leading at LOST, or when the last valid_for (counted from when
 * its message arrived) runs out, whichever comes first.
 *
 * Errors are as in lock.proto. A Proclaim or Resign naming a term that is
 * not the current leader's is refused with FAILED_PRECONDITION, whose
 * message names the current term, and changes nothing.
 */
/** CampaignEvent is what happened in a candidacy. */
export declare enum CampaignEvent {
    /** CAMPAIGN_EVENT_UNSPECIFIED - CAMPAIGN_EVENT_UNSPECIFIED is never sent. */
    CAMPAIGN_EVENT_UNSPECIFIED = 0,
    /**
     * CAMPAIGN_EVENT_ELECTED - CAMPAIGN_EVENT_ELECTED: this candidate leads; `term`, `valid_for` and
     * `value` are set.
     */
    CAMPAIGN_EVENT_ELECTED = 1,
    /** CAMPAIGN_EVENT_EXTENDED - CAMPAIGN_EVENT_EXTENDED: the term was extended; `valid_for` is new. */
    CAMPAIGN_EVENT_EXTENDED = 2,
    /** CAMPAIGN_EVENT_PROCLAIMED - CAMPAIGN_EVENT_PROCLAIMED: the new value is published; `value` is set. */
    CAMPAIGN_EVENT_PROCLAIMED = 3,
    /**
     * CAMPAIGN_EVENT_LOST - CAMPAIGN_EVENT_LOST: the leadership can no longer be guaranteed. Stop
     * now. The stream ends after this.
     */
    CAMPAIGN_EVENT_LOST = 4,
    /**
     * CAMPAIGN_EVENT_RESIGNED - CAMPAIGN_EVENT_RESIGNED: the candidacy ended (asked, max_hold used up,
     * the daemon shutting down); the stream ends after this.
     */
    CAMPAIGN_EVENT_RESIGNED = 5,
    /**
     * CAMPAIGN_EVENT_NOT_ELECTED - CAMPAIGN_EVENT_NOT_ELECTED: the candidacy ended before this candidate
     * led (it resigned while waiting); the stream ends after this.
     */
    CAMPAIGN_EVENT_NOT_ELECTED = 6,
    UNRECOGNIZED = -1
}
/** CampaignRequest is a message from the client in a Campaign stream. */
export interface CampaignRequest {
    request?: //
    /** start must be the first message, and only the first. */
    {
        $case: "start";
        value: CampaignStart;
    } | //
    /** proclaim sets the value, once elected. */
    {
        $case: "proclaim";
        value: CampaignProclaim;
    } | //
    /** resign ends the candidacy (or the leadership). */
    {
        $case: "resign";
        value: CampaignResign;
    } | undefined;
}
/** CampaignStart begins a candidacy. */
export interface CampaignStart {
    /**
     * election names the election: 1 to 256 bytes of UTF-8, no control
     * characters.
     */
    election: string;
    /** candidate names this candidate (e.g. a pod name): 1 to 256 bytes. */
    candidate: string;
    /** value is what the leader publishes when elected: at most 4096 bytes. */
    value: Buffer;
    /**
     * ttl is the term's time to live; the daemon extends it at about a third
     * of it. As a Hold's TTL: at least 8 x node_timeout, at most lock.max_ttl.
     */
    ttl?: Duration | undefined;
    /**
     * max_hold is the longest one term may last (then RESIGNED); at most, and
     * when unset, lock.max_hold.
     */
    maxHold?: Duration | undefined;
    /**
     * lock_delay, when set, keeps the election's lock for this long after a
     * leadership ends without a resignation (the stream broke, LOST, the
     * client died), so that the next leader starts only after it: for
     * resources that cannot check terms. At most lock.max_lock_delay.
     */
    lockDelay?: Duration | undefined;
}
/** CampaignProclaim sets the leader's value. */
export interface CampaignProclaim {
    /** value is the new value: at most 4096 bytes. */
    value: Buffer;
}
/** CampaignResign ends a candidacy. */
export interface CampaignResign {
}
/** CampaignResponse is a message from the daemon in a Campaign stream. */
export interface CampaignResponse {
    /** event is what happened. */
    event: CampaignEvent;
    /**
     * term is this leadership's term (ELECTED and after): the election lock's
     * fencing token, strictly increasing per election.
     */
    term: bigint;
    /**
     * valid_for is how long the leadership is guaranteed, counted from the
     * moment you RECEIVE this message (ELECTED, EXTENDED).
     */
    validFor?: Duration | undefined;
    /** value is the published value (ELECTED, PROCLAIMED). */
    value: Buffer;
    /** reason says why, for LOST, RESIGNED and NOT_ELECTED. */
    reason: string;
}
/** LeaderRequest names an election. */
export interface LeaderRequest {
    /** election is as in CampaignStart. */
    election: string;
}
/** LeaderResponse is who leads an election. */
export interface LeaderResponse {
    /** elected is false when no candidate leads (or no majority agrees). */
    elected: boolean;
    /**
     * candidate, value and term are the leader's; term is exactly the one it
     * was told in ELECTED.
     */
    candidate: string;
    value: Buffer;
    term: bigint;
    /** since is when the term began, on the masters' clocks. */
    since?: Timestamp | undefined;
}
/** ObserveRequest names an election to follow. */
export interface ObserveRequest {
    /** election is as in CampaignStart. */
    election: string;
}
/** ProclaimRequest sets the leader's value from outside its stream. */
export interface ProclaimRequest {
    /** election is as in CampaignStart. */
    election: string;
    /** term must be the current leader's. */
    term: bigint;
    /** value is the new value: at most 4096 bytes. */
    value: Buffer;
}
/** ProclaimResponse answers a Proclaim. */
export interface ProclaimResponse {
}
/** ResignRequest ends a leadership from outside its stream. */
export interface ResignRequest {
    /** election is as in CampaignStart. */
    election: string;
    /** term must be the current leader's. */
    term: bigint;
}
/** ResignResponse answers a Resign. */
export interface ResignResponse {
}
/** ParticipantsRequest names an election. */
export interface ParticipantsRequest {
    /** election is as in CampaignStart. */
    election: string;
}
/** ParticipantsResponse lists this daemon's candidates. */
export interface ParticipantsResponse {
    /**
     * candidates are in queue order: the first one is next. A leader is no
     * longer queued (ask Leader who leads).
     */
    candidates: string[];
}
export declare const CampaignRequest: MessageFns<CampaignRequest>;
export declare const CampaignStart: MessageFns<CampaignStart>;
export declare const CampaignProclaim: MessageFns<CampaignProclaim>;
export declare const CampaignResign: MessageFns<CampaignResign>;
export declare const CampaignResponse: MessageFns<CampaignResponse>;
export declare const LeaderRequest: MessageFns<LeaderRequest>;
export declare const LeaderResponse: MessageFns<LeaderResponse>;
export declare const ObserveRequest: MessageFns<ObserveRequest>;
export declare const ProclaimRequest: MessageFns<ProclaimRequest>;
export declare const ProclaimResponse: MessageFns<ProclaimResponse>;
export declare const ResignRequest: MessageFns<ResignRequest>;
export declare const ResignResponse: MessageFns<ResignResponse>;
export declare const ParticipantsRequest: MessageFns<ParticipantsRequest>;
export declare const ParticipantsResponse: MessageFns<ParticipantsResponse>;
/**
 * Election is the election service. Elections and locks live in separate
 * namespaces: an election named "jobs" and a lock on "jobs" are unrelated.
 */
export type ElectionService = typeof ElectionService;
export declare const ElectionService: {
    /**
     * Campaign is a candidacy. The client sends one CampaignRequest with
     * `start`; the daemon queues the candidate behind the others (here and on
     * other daemons) and answers ELECTED when it leads, then extends its term
     * by itself (EXTENDED). The client may send `proclaim` (PROCLAIMED) and
     * `resign` (RESIGNED; the stream ends). The daemon answers LOST and ends
     * the stream when the leadership can no longer be guaranteed. When the
     * client half-closes, cancels or disconnects, the daemon resigns for it
     * (after `lock_delay`, when one was asked for).
     */
    readonly campaign: {
        readonly path: "/redlockd.v1.Election/Campaign";
        readonly requestStream: true;
        readonly responseStream: true;
        readonly requestSerialize: (value: CampaignRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => CampaignRequest;
        readonly responseSerialize: (value: CampaignResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => CampaignResponse;
    };
    /** Leader says who leads now, as a majority of the masters agree. */
    readonly leader: {
        readonly path: "/redlockd.v1.Election/Leader";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: LeaderRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => LeaderRequest;
        readonly responseSerialize: (value: LeaderResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => LeaderResponse;
    };
    /**
     * Observe streams the election's state: the current one first, then every
     * change (a new leader, a new value, no leader). Terms never go backwards
     * in one stream and a state is never sent twice in a row. It is a view,
     * not a lock: by the time a message arrives the state may have changed.
     */
    readonly observe: {
        readonly path: "/redlockd.v1.Election/Observe";
        readonly requestStream: false;
        readonly responseStream: true;
        readonly requestSerialize: (value: ObserveRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ObserveRequest;
        readonly responseSerialize: (value: LeaderResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => LeaderResponse;
    };
    /** Proclaim sets the leader's value, if `term` is still the leader's. */
    readonly proclaim: {
        readonly path: "/redlockd.v1.Election/Proclaim";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ProclaimRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ProclaimRequest;
        readonly responseSerialize: (value: ProclaimResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ProclaimResponse;
    };
    /** Resign ends the leadership of `term`, if it is still the leader's. */
    readonly resign: {
        readonly path: "/redlockd.v1.Election/Resign";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ResignRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ResignRequest;
        readonly responseSerialize: (value: ResignResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ResignResponse;
    };
    /**
     * Participants lists the candidates THIS daemon is queueing for the
     * election, first in line first (other daemons keep their own queues).
     */
    readonly participants: {
        readonly path: "/redlockd.v1.Election/Participants";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ParticipantsRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ParticipantsRequest;
        readonly responseSerialize: (value: ParticipantsResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ParticipantsResponse;
    };
};
export interface ElectionServer extends UntypedServiceImplementation {
    /**
     * Campaign is a candidacy. The client sends one CampaignRequest with
     * `start`; the daemon queues the candidate behind the others (here and on
     * other daemons) and answers ELECTED when it leads, then extends its term
     * by itself (EXTENDED). The client may send `proclaim` (PROCLAIMED) and
     * `resign` (RESIGNED; the stream ends). The daemon answers LOST and ends
     * the stream when the leadership can no longer be guaranteed. When the
     * client half-closes, cancels or disconnects, the daemon resigns for it
     * (after `lock_delay`, when one was asked for).
     */
    campaign: handleBidiStreamingCall<CampaignRequest, CampaignResponse>;
    /** Leader says who leads now, as a majority of the masters agree. */
    leader: handleUnaryCall<LeaderRequest, LeaderResponse>;
    /**
     * Observe streams the election's state: the current one first, then every
     * change (a new leader, a new value, no leader). Terms never go backwards
     * in one stream and a state is never sent twice in a row. It is a view,
     * not a lock: by the time a message arrives the state may have changed.
     */
    observe: handleServerStreamingCall<ObserveRequest, LeaderResponse>;
    /** Proclaim sets the leader's value, if `term` is still the leader's. */
    proclaim: handleUnaryCall<ProclaimRequest, ProclaimResponse>;
    /** Resign ends the leadership of `term`, if it is still the leader's. */
    resign: handleUnaryCall<ResignRequest, ResignResponse>;
    /**
     * Participants lists the candidates THIS daemon is queueing for the
     * election, first in line first (other daemons keep their own queues).
     */
    participants: handleUnaryCall<ParticipantsRequest, ParticipantsResponse>;
}
export interface ElectionClient extends Client {
    /**
     * Campaign is a candidacy. The client sends one CampaignRequest with
     * `start`; the daemon queues the candidate behind the others (here and on
     * other daemons) and answers ELECTED when it leads, then extends its term
     * by itself (EXTENDED). The client may send `proclaim` (PROCLAIMED) and
     * `resign` (RESIGNED; the stream ends). The daemon answers LOST and ends
     * the stream when the leadership can no longer be guaranteed. When the
     * client half-closes, cancels or disconnects, the daemon resigns for it
     * (after `lock_delay`, when one was asked for).
     */
    campaign(): ClientDuplexStream<CampaignRequest, CampaignResponse>;
    campaign(options: Partial<CallOptions>): ClientDuplexStream<CampaignRequest, CampaignResponse>;
    campaign(metadata: Metadata, options?: Partial<CallOptions>): ClientDuplexStream<CampaignRequest, CampaignResponse>;
    /** Leader says who leads now, as a majority of the masters agree. */
    leader(request: LeaderRequest, callback: (error: ServiceError | null, response: LeaderResponse) => void): ClientUnaryCall;
    leader(request: LeaderRequest, metadata: Metadata, callback: (error: ServiceError | null, response: LeaderResponse) => void): ClientUnaryCall;
    leader(request: LeaderRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: LeaderResponse) => void): ClientUnaryCall;
    /**
     * Observe streams the election's state: the current one first, then every
     * change (a new leader, a new value, no leader). Terms never go backwards
     * in one stream and a state is never sent twice in a row. It is a view,
     * not a lock: by the time a message arrives the state may have changed.
     */
    observe(request: ObserveRequest, options?: Partial<CallOptions>): ClientReadableStream<LeaderResponse>;
    observe(request: ObserveRequest, metadata?: Metadata, options?: Partial<CallOptions>): ClientReadableStream<LeaderResponse>;
    /** Proclaim sets the leader's value, if `term` is still the leader's. */
    proclaim(request: ProclaimRequest, callback: (error: ServiceError | null, response: ProclaimResponse) => void): ClientUnaryCall;
    proclaim(request: ProclaimRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ProclaimResponse) => void): ClientUnaryCall;
    proclaim(request: ProclaimRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ProclaimResponse) => void): ClientUnaryCall;
    /** Resign ends the leadership of `term`, if it is still the leader's. */
    resign(request: ResignRequest, callback: (error: ServiceError | null, response: ResignResponse) => void): ClientUnaryCall;
    resign(request: ResignRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ResignResponse) => void): ClientUnaryCall;
    resign(request: ResignRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ResignResponse) => void): ClientUnaryCall;
    /**
     * Participants lists the candidates THIS daemon is queueing for the
     * election, first in line first (other daemons keep their own queues).
     */
    participants(request: ParticipantsRequest, callback: (error: ServiceError | null, response: ParticipantsResponse) => void): ClientUnaryCall;
    participants(request: ParticipantsRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ParticipantsResponse) => void): ClientUnaryCall;
    participants(request: ParticipantsRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ParticipantsResponse) => void): ClientUnaryCall;
}
export declare const ElectionClient: {
    new (address: string, credentials: ChannelCredentials, options?: Partial<ClientOptions>): ElectionClient;
    service: typeof ElectionService;
    serviceName: string;
};
interface MessageFns<T> {
    encode(message: T, writer?: BinaryWriter): BinaryWriter;
    decode(input: BinaryReader | Uint8Array, length?: number): T;
}
export {};
