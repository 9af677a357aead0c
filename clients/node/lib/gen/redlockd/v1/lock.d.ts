import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { type CallOptions, type ChannelCredentials, Client, type ClientDuplexStream, type ClientOptions, type ClientReadableStream, type ClientUnaryCall, type handleBidiStreamingCall, type handleServerStreamingCall, type handleUnaryCall, type Metadata, type ServiceError, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { Duration } from "../../google/protobuf/duration";
import { Timestamp } from "../../google/protobuf/timestamp";
/**
 * redlockd.v1 — the lock API.
 *
 * redlockd runs the Redlock quorum algorithm against N independent Redis
 * masters and returns, with every lock, a fencing token that strictly
 * increases per resource. A client takes a lock with Acquire, keeps it with
 * Extend and gives it back with Release.
 *
 * The client rule: count a lease's `validity` from the moment you SENT the
 * Acquire (or Extend) request, not from the moment the reply arrived. The
 * daemon may pause, or the reply may be slow, after the validity was
 * computed; only the send time is a safe starting point.
 *
 * Errors are gRPC status codes:
 *   INVALID_ARGUMENT   a field is out of range; the message names the field
 *                      and the allowed range.
 *   UNAVAILABLE        fewer than a quorum of Redis masters could be reached.
 *                      Contention is NOT an error: it is `acquired = false`.
 *   DEADLINE_EXCEEDED  the client's gRPC deadline passed before the lock
 *                      could be taken.
 *   RESOURCE_EXHAUSTED waiter or session limits were hit, or a tenant's quota
 *                      (then with a google.rpc.QuotaFailure detail whose
 *                      violation's quota_id names the quota, e.g.
 *                      "max_locks_held").
 *   FAILED_PRECONDITION a semaphore's masters remember another number of
 *                      permits than the request asked for, or a reentrancy
 *                      key holds the lock as another kind.
 *
 * UNAVAILABLE statuses carry a google.rpc.ErrorInfo detail (reason
 * "NO_QUORUM", domain "redlockd") whose metadata has one entry per master,
 * "node.<index>" -> what it said ("granted", "held by another owner",
 * "timed out", "errored", "quarantined", "unusable"), plus "needed".
 */
/** LockMode is how a lock is held. */
export declare enum LockMode {
    /**
     * LOCK_MODE_EXCLUSIVE - LOCK_MODE_EXCLUSIVE: one holder at a time, shared holders excluded (a
     * writer). The default.
     */
    LOCK_MODE_EXCLUSIVE = 0,
    /**
     * LOCK_MODE_SHARED - LOCK_MODE_SHARED: any number of shared holders at once while no
     * exclusive holder has the lock (readers). An exclusive request refused
     * by readers keeps new readers out for a moment, so a stream of readers
     * cannot starve it. A shared lease's fencing token is the token of the
     * last exclusive grant or above, and below any later exclusive grant's;
     * shared leases may share a token (they do not exclude each other).
     */
    LOCK_MODE_SHARED = 1,
    UNRECOGNIZED = -1
}
/** NodeOutcome is what one master said in an acquisition attempt. */
export declare enum NodeOutcome {
    /** NODE_OUTCOME_UNSPECIFIED - NODE_OUTCOME_UNSPECIFIED is never sent. */
    NODE_OUTCOME_UNSPECIFIED = 0,
    /** NODE_OUTCOME_GRANTED - NODE_OUTCOME_GRANTED: it locked the resource (and was released again). */
    NODE_OUTCOME_GRANTED = 1,
    /** NODE_OUTCOME_TAKEN - NODE_OUTCOME_TAKEN: another owner holds the resource there. */
    NODE_OUTCOME_TAKEN = 2,
    /** NODE_OUTCOME_TIMED_OUT - NODE_OUTCOME_TIMED_OUT: no answer within the per-node timeout. */
    NODE_OUTCOME_TIMED_OUT = 3,
    /** NODE_OUTCOME_ERRORED - NODE_OUTCOME_ERRORED: it answered with an error or refused the connection. */
    NODE_OUTCOME_ERRORED = 4,
    /**
     * NODE_OUTCOME_QUARANTINED - NODE_OUTCOME_QUARANTINED: not asked; it may have lost locks (restart,
     * failover, young, clock jump) and waits out lock.max_ttl.
     */
    NODE_OUTCOME_QUARANTINED = 5,
    /**
     * NODE_OUTCOME_UNUSABLE - NODE_OUTCOME_UNUSABLE: not asked; it failed preflight or is not verified
     * yet.
     */
    NODE_OUTCOME_UNUSABLE = 6,
    /**
     * NODE_OUTCOME_NOT_AWAITED - NODE_OUTCOME_NOT_AWAITED: asked, but a quorum had already granted before
     * it answered (only when the rounds then used up the validity).
     */
    NODE_OUTCOME_NOT_AWAITED = 7,
    UNRECOGNIZED = -1
}
/** FailureReason is why an acquisition attempt did not produce a lock. */
export declare enum FailureReason {
    /** FAILURE_REASON_UNSPECIFIED - FAILURE_REASON_UNSPECIFIED is never sent with acquired = false. */
    FAILURE_REASON_UNSPECIFIED = 0,
    /**
     * FAILURE_REASON_TAKEN - FAILURE_REASON_TAKEN: a majority of the masters could be reached, but
     * the lock is held by someone else on too many of them.
     */
    FAILURE_REASON_TAKEN = 1,
    /**
     * FAILURE_REASON_VALIDITY_USED_UP - FAILURE_REASON_VALIDITY_USED_UP: a quorum was reached, but the round
     * trips took so long that no validity was left after the drift margin.
     */
    FAILURE_REASON_VALIDITY_USED_UP = 2,
    UNRECOGNIZED = -1
}
/** HoldEvent is what happened in a session. */
export declare enum HoldEvent {
    /** HOLD_EVENT_UNSPECIFIED - HOLD_EVENT_UNSPECIFIED is never sent. */
    HOLD_EVENT_UNSPECIFIED = 0,
    /** HOLD_EVENT_ACQUIRED - HOLD_EVENT_ACQUIRED: the lock is held; `lease` is set. */
    HOLD_EVENT_ACQUIRED = 1,
    /**
     * HOLD_EVENT_EXTENDED - HOLD_EVENT_EXTENDED: the daemon renewed the lock; `lease.validity` is
     * the new validity.
     */
    HOLD_EVENT_EXTENDED = 2,
    /**
     * HOLD_EVENT_LOST - HOLD_EVENT_LOST: the lock can no longer be guaranteed (an extension
     * failed, or could not be made before the validity ran out). Stop working
     * under it now. The stream ends after this.
     */
    HOLD_EVENT_LOST = 3,
    /**
     * HOLD_EVENT_RELEASED - HOLD_EVENT_RELEASED: the daemon released the lock (the client asked,
     * max_hold was used up, or the daemon is shutting down); `held_to_end`
     * says whether it was still held to the end. The stream ends after this.
     */
    HOLD_EVENT_RELEASED = 4,
    /**
     * HOLD_EVENT_NOT_ACQUIRED - HOLD_EVENT_NOT_ACQUIRED: the wait ran out while someone else held the
     * lock. The stream ends after this.
     */
    HOLD_EVENT_NOT_ACQUIRED = 5,
    UNRECOGNIZED = -1
}
/** WatchEvent is what a Watch saw change. */
export declare enum WatchEvent {
    /** WATCH_EVENT_UNSPECIFIED - WATCH_EVENT_UNSPECIFIED is never sent. */
    WATCH_EVENT_UNSPECIFIED = 0,
    /** WATCH_EVENT_CURRENT - WATCH_EVENT_CURRENT: the state when the stream began (the first message). */
    WATCH_EVENT_CURRENT = 1,
    /** WATCH_EVENT_ACQUIRED - WATCH_EVENT_ACQUIRED: a holder took it; `holder` is set. */
    WATCH_EVENT_ACQUIRED = 2,
    /**
     * WATCH_EVENT_RELEASED - WATCH_EVENT_RELEASED: the holder in `holder` let it go (or it was taken
     * over before its TTL ran out).
     */
    WATCH_EVENT_RELEASED = 3,
    /** WATCH_EVENT_EXPIRED - WATCH_EVENT_EXPIRED: the holder in `holder` let its TTL run out. */
    WATCH_EVENT_EXPIRED = 4,
    /**
     * WATCH_EVENT_FORCE_RELEASED - WATCH_EVENT_FORCE_RELEASED: an operator took it away through this daemon
     * (Admin/ForceRelease); `holder` was the holder.
     */
    WATCH_EVENT_FORCE_RELEASED = 5,
    /** WATCH_EVENT_CHANGED - WATCH_EVENT_CHANGED: readers or permits came or went. */
    WATCH_EVENT_CHANGED = 6,
    UNRECOGNIZED = -1
}
/** AcquireManyRequest asks for several resources at once. */
export interface AcquireManyRequest {
    /**
     * resources: 1 to 16 names, each as AcquireRequest.resource. The daemon
     * sorts them and drops repeats.
     */
    resources: string[];
    /**
     * ttl, wait and owner are as in AcquireRequest; the wait retries the
     * whole set (sets do not queue in the daemon).
     */
    ttl?: Duration | undefined;
    wait?: Duration | undefined;
    owner: string;
}
/** AcquireManyResponse tells whether the whole set was taken. */
export interface AcquireManyResponse {
    /** acquired is true when every member is held. */
    acquired: boolean;
    /**
     * leases: one per member, sorted by resource, all with one value and
     * validity, each with its member's fencing token (strictly increasing per
     * resource, like any lock's).
     */
    leases: Lease[];
    /** reason, attempts and nodes are as in AcquireResponse. */
    reason: FailureReason;
    attempts: number;
    nodes: NodeOutcome[];
}
/** ExtendManyRequest extends locks that hold `value`. */
export interface ExtendManyRequest {
    /** resources: 1 to 16 names; value and ttl as in ExtendRequest. */
    resources: string[];
    value: string;
    ttl?: Duration | undefined;
}
/** ExtendManyResponse says which locks were extended. */
export interface ExtendManyResponse {
    /** extended is true when every one was. */
    extended: boolean;
    /** members: per resource, in the order asked, whether it was extended. */
    members: boolean[];
    /** validity is the shortest of the extended ones', counted from the send. */
    validity?: Duration | undefined;
}
/** ReleaseManyRequest releases locks that hold `value`. */
export interface ReleaseManyRequest {
    /** resources: 1 to 16 names; value as in ReleaseRequest. */
    resources: string[];
    value: string;
}
/** ReleaseManyResponse says which locks were held to the end. */
export interface ReleaseManyResponse {
    /** released is true when every one was held to the end. */
    released: boolean;
    /** members: per resource, in the order asked, as ReleaseResponse.released. */
    members: boolean[];
}
/** AcquireRequest asks for the lock on one resource. */
export interface AcquireRequest {
    /**
     * resource is the name of the thing to lock: 1 to 256 bytes of printable
     * UTF-8 (no control characters). Names are case-sensitive.
     */
    resource: string;
    /**
     * ttl is how long the lock lives on the Redis masters if it is neither
     * extended nor released. Must lie within the daemon's [min_ttl, max_ttl]
     * (by default 250ms to 60s). Unset means the daemon's default_ttl (10s).
     */
    ttl?: Duration | undefined;
    /**
     * wait is how long the daemon keeps retrying while the lock is held by
     * someone else. Unset or zero means a single attempt. At most the daemon's
     * max_wait (by default 60s). A gRPC deadline shorter than `wait` ends the
     * wait early with DEADLINE_EXCEEDED.
     */
    wait?: Duration | undefined;
    /**
     * owner is a free-form label for logs and introspection (a pod name, a
     * job id): at most 256 bytes of printable UTF-8. It is never part of the
     * lock's identity.
     */
    owner: string;
    /**
     * mode is how the lock is held: exclusive (the default) or shared with
     * other shared holders (a read-write lock's readers).
     */
    mode: LockMode;
    /**
     * permits makes the resource a semaphore: 0 or 1 (unset) is a lock; N
     * from 2 to the daemon's lock.max_permits (by default 64) takes one of N
     * permits. A permit is exclusive (mode must stay LOCK_MODE_EXCLUSIVE). Every
     * holder must ask for the same N: while any permit is out the masters
     * remember it, and another N is FAILED_PRECONDITION. Each permit is a lock
     * on one of N slots (Lease.slot) with fencing tokens of its own, strictly
     * increasing per slot. Waiting permits retry in Redis (no FIFO queue).
     */
    permits: number;
    /**
     * reentrancy_key (at most 128 bytes; empty: none), a job or trace id of
     * the caller's choosing: while this daemon holds the lock for an
     * acquisition with the same key, another acquisition with the key gets it
     * at once with the SAME value and the SAME fencing token, and counts up;
     * each Release counts down, and the lock is released at zero. Anyone who
     * knows the key shares the lock: use a key only your own work knows. The
     * key is never logged. Per daemon: acquisitions through other daemons
     * wait as for any holder. The same key asking another mode or number of
     * permits is FAILED_PRECONDITION.
     */
    reentrancyKey: string;
    /**
     * lock_delay, when set, keeps the lock on the masters this much longer
     * than its validity, so that a holder that dies without releasing leaves
     * the resource to nobody for that long after its lease ran out: for
     * resources that cannot check fencing tokens. The delay rides in the
     * lease's value, so every Extend keeps it; a Release frees the lock at
     * once. At most the daemon's lock.max_lock_delay (by default 60s); unset
     * or 0: none. A reentered lock keeps the delay it was first taken with.
     */
    lockDelay?: Duration | undefined;
}
/** Lease is a granted lock. */
export interface Lease {
    /** resource is the locked resource, as requested. */
    resource: string;
    /**
     * value is the secret that proves ownership: pass it to Extend and
     * Release. 40 lowercase hexadecimal characters (20 random bytes from the
     * operating system's CSPRNG), after an `r` for a shared lock; unique per
     * acquisition. Do not log it.
     */
    value: string;
    /**
     * fencing_token strictly increases per resource: a lease granted after
     * another lease of the same resource was returned carries a larger token,
     * across any number of daemons sharing the masters, and no two leases of a
     * resource share a token. Send it with every write to the protected
     * storage and have the storage reject tokens lower than one it has seen.
     */
    fencingToken: bigint;
    /**
     * validity is how long the lock is guaranteed to be held, counted from the
     * moment the client SENT the request (see the client rule above). It is
     * the TTL minus the time the acquisition took minus a clock-drift margin.
     */
    validity?: Duration | undefined;
    /** mode is how the lock is held, as requested. */
    mode: LockMode;
    /**
     * permits is the semaphore's number of permits (0 for a lock), and slot
     * the one this lease holds (0 to permits - 1): its fencing token is the
     * slot's.
     */
    permits: number;
    slot: number;
}
/** AcquireResponse tells whether the lock was taken. */
export interface AcquireResponse {
    /**
     * acquired is true when `lease` holds a granted lock; false when the lock
     * stayed with someone else for the whole wait.
     */
    acquired: boolean;
    /** lease is the granted lock; set only when `acquired` is true. */
    lease?: Lease | undefined;
    /**
     * reason says why the last attempt failed; set only when `acquired` is
     * false.
     */
    reason: FailureReason;
    /**
     * attempts is how many attempts the daemon made; set only when
     * `acquired` is false.
     */
    attempts: number;
    /**
     * nodes is what each master said in the last attempt, in index order;
     * set only when `acquired` is false.
     */
    nodes: NodeOutcome[];
    /**
     * validity_left is set with FAILURE_REASON_VALIDITY_USED_UP: the validity
     * the rounds left (below the daemon's lock.min_validity, possibly zero).
     */
    validityLeft?: Duration | undefined;
}
/** ExtendRequest resets the TTL of a held lock. */
export interface ExtendRequest {
    /** resource is the locked resource, as given to Acquire. */
    resource: string;
    /** value is the lease's value, as returned by Acquire. */
    value: string;
    /**
     * ttl is the new time to live, counted from now; within [min_ttl, max_ttl].
     * Unset means the daemon's default_ttl.
     */
    ttl?: Duration | undefined;
}
/** ExtendResponse tells whether the lock was extended. */
export interface ExtendResponse {
    /**
     * extended is true when a majority of the masters still held the lock with
     * this value and reset its TTL, and validity is left. False means the lock
     * is lost (expired or taken over): stop working under it.
     */
    extended: boolean;
    /**
     * validity is the new guaranteed hold time, counted from the moment the
     * client sent the Extend request; set only when `extended` is true. The
     * fencing token does not change.
     */
    validity?: Duration | undefined;
}
/** ReleaseRequest gives a lock back. */
export interface ReleaseRequest {
    /** resource is the locked resource, as given to Acquire. */
    resource: string;
    /** value is the lease's value, as returned by Acquire. */
    value: string;
}
/** ReleaseResponse reports what the release found. */
export interface ReleaseResponse {
    /**
     * released is true when a majority of the masters still held the lock with
     * this value and deleted it: the caller's critical section stayed protected
     * to the end. False means the lock had already expired or been taken over
     * on too many masters (the delete still went to every master).
     */
    released: boolean;
}
/** HoldRequest is a message from the client in a Hold session. */
export interface HoldRequest {
    request?: //
    /**
     * start opens the session; it must be the first message (sent within
     * 10 s of opening the stream), and only once.
     */
    {
        $case: "start";
        value: HoldStart;
    } | //
    /** release gives the lock back now (half-closing the stream does the same). */
    {
        $case: "release";
        value: HoldRelease;
    } | undefined;
}
/** HoldStart asks for the lock a session holds. */
export interface HoldStart {
    /**
     * resource, ttl, wait and owner are as in AcquireRequest. The TTL is what
     * each extension renews; the daemon extends at about a third of it.
     */
    resource: string;
    ttl?: Duration | undefined;
    wait?: Duration | undefined;
    owner: string;
    /**
     * max_hold is the longest the daemon keeps the lock, counted from
     * ACQUIRED: when it is used up the daemon releases and answers RELEASED.
     * At most, and when unset, the daemon's lock.max_hold (by default 1h).
     * The TTL of a session must be at least 8 x the daemon's node_timeout
     * (400ms by default), so that extensions fit before LOST would be due.
     */
    maxHold?: Duration | undefined;
    /**
     * mode, permits and reentrancy_key are as in AcquireRequest (the session
     * counts as one hold, given back when it ends).
     */
    mode: LockMode;
    permits: number;
    reentrancyKey: string;
    /**
     * lock_delay, when set, keeps the lock for this long after the session
     * ends without a release (the stream broke, LOST, the client died) instead
     * of releasing it at once, so that the next holder starts only after it:
     * for resources that cannot check fencing tokens. A release the client
     * asks for frees it at once. At most the daemon's lock.max_lock_delay (by
     * default 60s); unset or 0: released at once.
     */
    lockDelay?: Duration | undefined;
}
/** HoldRelease ends a session's lock. */
export interface HoldRelease {
}
/** HoldResponse is a message from the daemon in a Hold session. */
export interface HoldResponse {
    /** event is what happened. */
    event: HoldEvent;
    /**
     * lease is the held lock (ACQUIRED, EXTENDED). The fencing token never
     * changes within a session. Count `validity` from the moment you RECEIVE
     * this message: the daemon has already subtracted the time its rounds
     * took and the drift margin, and it sends LOST ahead of the end.
     */
    lease?: Lease | undefined;
    /** reason says why, for LOST, RELEASED and NOT_ACQUIRED. */
    reason: string;
    /**
     * held_to_end is set with RELEASED: true when a majority still held the
     * lock when it was released.
     */
    heldToEnd: boolean;
    /**
     * nodes is set with NOT_ACQUIRED: what each master said in the last
     * attempt, in index order.
     */
    nodes: NodeOutcome[];
}
/** PipelineRequest is one call in a Pipeline stream. */
export interface PipelineRequest {
    /**
     * id is the client's name for this call, echoed in its reply. Any value;
     * keep it unique among the calls in flight to tell the replies apart.
     */
    id: bigint;
    /** call is the call; exactly one must be set. */
    call?: {
        $case: "acquire";
        value: AcquireRequest;
    } | {
        $case: "extend";
        value: ExtendRequest;
    } | {
        $case: "release";
        value: ReleaseRequest;
    } | {
        $case: "acquireMany";
        value: AcquireManyRequest;
    } | {
        $case: "extendMany";
        value: ExtendManyRequest;
    } | {
        $case: "releaseMany";
        value: ReleaseManyRequest;
    } | undefined;
}
/** PipelineResponse answers one call of a Pipeline stream. */
export interface PipelineResponse {
    /** id is the id of the call answered. */
    id: bigint;
    /** result is the call's reply, of the call's own kind, or its error. */
    result?: {
        $case: "acquire";
        value: AcquireResponse;
    } | {
        $case: "extend";
        value: ExtendResponse;
    } | {
        $case: "release";
        value: ReleaseResponse;
    } | {
        $case: "error";
        value: CallError;
    } | {
        $case: "acquireMany";
        value: AcquireManyResponse;
    } | {
        $case: "extendMany";
        value: ExtendManyResponse;
    } | {
        $case: "releaseMany";
        value: ReleaseManyResponse;
    } | undefined;
}
/**
 * CallError is a Pipeline call's error: what the unary method would have
 * returned as its gRPC status.
 */
export interface CallError {
    /**
     * code is the gRPC status code (3 INVALID_ARGUMENT, 7 PERMISSION_DENIED,
     * 8 RESOURCE_EXHAUSTED, 14 UNAVAILABLE, ...), as in the header comment.
     */
    code: number;
    /**
     * message says what went wrong; for INVALID_ARGUMENT it names the field
     * and the allowed range.
     */
    message: string;
    /**
     * nodes is set with UNAVAILABLE from an acquisition: what each master
     * said, in index order (the unary status carries the same in its
     * google.rpc.ErrorInfo).
     */
    nodes: NodeOutcome[];
    /** needed is set with `nodes`: how many masters make a quorum. */
    needed: number;
}
/** InspectRequest names a resource to look at. */
export interface InspectRequest {
    /** resource is as in AcquireRequest. */
    resource: string;
}
/** InspectResponse is a quorum view of one resource. */
export interface InspectResponse {
    /** held is true when a majority of the masters hold the same lock value. */
    held: boolean;
    /**
     * agreeing is how many masters hold the most common lock value (0 when
     * none holds any).
     */
    agreeing: number;
    /** quorum is how many masters make a majority. */
    quorum: number;
    /** nodes is what each master shows, in index order. */
    nodes: NodeView[];
    /**
     * holder is who holds the lock, as a majority of the masters recorded it
     * beside the lock; unset when no majority holds it.
     */
    holder?: Holder | undefined;
    /**
     * waiting is how many requests wait for the resource in this daemon (the
     * daemon answering; other daemons keep their own queues).
     */
    waiting: number;
    /** waiter_owners are their `owner` labels, first in line first. */
    waiterOwners: string[];
    /**
     * readers is how many shared holders have the lock, as the quorum-th
     * master counts them (0 when no majority shows it shared). `held` is then
     * true and `holder` unset.
     */
    readers: number;
    /**
     * permits is the number of permits a majority of the masters remembers
     * for a semaphore of this name (0 when none is out), and permits_out how
     * many of its slots a majority holds.
     */
    permits: number;
    permitsOut: number;
    /**
     * set_members: when this daemon granted the lock as a member of a set
     * (AcquireMany), the set's resources, sorted (other daemons do not know
     * them).
     */
    setMembers: string[];
}
/** Holder is who holds a lock. Never the lock value. */
export interface Holder {
    /** owner is the `owner` the acquisition named (may be empty). */
    owner: string;
    /** tenant is the tenant it was taken for (empty without authentication). */
    tenant: string;
    /**
     * daemon names the daemon that granted it: its host (pod) name, '/', and
     * a random suffix per start.
     */
    daemon: string;
    /** since is when it was granted, on the masters' clocks. */
    since?: Timestamp | undefined;
    /**
     * fencing_token is the token the agreeing masters' records give (their
     * largest counter, with the highest index of a master that recorded it):
     * the lease's own token, or above it when a master that answered after
     * the quorum recorded a larger counter or the same one.
     */
    fencingToken: bigint;
    /** ttl is how long a majority of the masters still hold it. */
    ttl?: Duration | undefined;
}
/** NodeView is what one master shows for a resource. */
export interface NodeView {
    /** index is the master's position in the daemon's redis.nodes list. */
    index: number;
    /** address is host:port (never credentials). */
    address: string;
    /** reachable is false when the master did not answer. */
    reachable: boolean;
    /**
     * state is the master's standing: "usable", "quarantined",
     * "preflight_failed" or "unverified".
     */
    state: string;
    /** held is true when the master holds a lock key for the resource. */
    held: boolean;
    /** with_majority is true when its lock value is the most common one. */
    withMajority: boolean;
    /** ttl is how long its lock key has left; unset when not held. */
    ttl?: Duration | undefined;
    /** fence_counter is the master's fence counter (0 when it has none). */
    fenceCounter: bigint;
}
/** WatchRequest names a resource to follow. */
export interface WatchRequest {
    /** resource is as in AcquireRequest. */
    resource: string;
}
/** WatchResponse is one change (or the first state) of a watched resource. */
export interface WatchResponse {
    /** event is what changed. */
    event: WatchEvent;
    /** held says whether a majority holds it now. */
    held: boolean;
    /**
     * holder is who holds it now (CURRENT, ACQUIRED), or who held it (RELEASED,
     * EXPIRED, FORCE_RELEASED), as Inspect reports it.
     */
    holder?: Holder | undefined;
    /** readers, permits and permits_out are as in InspectResponse, now. */
    readers: number;
    permits: number;
    permitsOut: number;
}
export declare const AcquireManyRequest: MessageFns<AcquireManyRequest>;
export declare const AcquireManyResponse: MessageFns<AcquireManyResponse>;
export declare const ExtendManyRequest: MessageFns<ExtendManyRequest>;
export declare const ExtendManyResponse: MessageFns<ExtendManyResponse>;
export declare const ReleaseManyRequest: MessageFns<ReleaseManyRequest>;
export declare const ReleaseManyResponse: MessageFns<ReleaseManyResponse>;
export declare const AcquireRequest: MessageFns<AcquireRequest>;
export declare const Lease: MessageFns<Lease>;
export declare const AcquireResponse: MessageFns<AcquireResponse>;
export declare const ExtendRequest: MessageFns<ExtendRequest>;
export declare const ExtendResponse: MessageFns<ExtendResponse>;
export declare const ReleaseRequest: MessageFns<ReleaseRequest>;
export declare const ReleaseResponse: MessageFns<ReleaseResponse>;
export declare const HoldRequest: MessageFns<HoldRequest>;
export declare const HoldStart: MessageFns<HoldStart>;
export declare const HoldRelease: MessageFns<HoldRelease>;
export declare const HoldResponse: MessageFns<HoldResponse>;
export declare const PipelineRequest: MessageFns<PipelineRequest>;
export declare const PipelineResponse: MessageFns<PipelineResponse>;
export declare const CallError: MessageFns<CallError>;
export declare const InspectRequest: MessageFns<InspectRequest>;
export declare const InspectResponse: MessageFns<InspectResponse>;
export declare const Holder: MessageFns<Holder>;
export declare const NodeView: MessageFns<NodeView>;
export declare const WatchRequest: MessageFns<WatchRequest>;
export declare const WatchResponse: MessageFns<WatchResponse>;
/**
 * Lock is the lock service. Every method is safe to call from any number of
 * clients and daemons that share the same Redis masters.
 */
export type LockService = typeof LockService;
export declare const LockService: {
    /** Acquire takes the lock on a resource, waiting up to `wait` for it. */
    readonly acquire: {
        readonly path: "/redlockd.v1.Lock/Acquire";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: AcquireRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => AcquireRequest;
        readonly responseSerialize: (value: AcquireResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => AcquireResponse;
    };
    /** Extend resets the time to live of a lock the caller holds. */
    readonly extend: {
        readonly path: "/redlockd.v1.Lock/Extend";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ExtendRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ExtendRequest;
        readonly responseSerialize: (value: ExtendResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ExtendResponse;
    };
    /** Release gives a lock back. */
    readonly release: {
        readonly path: "/redlockd.v1.Lock/Release";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ReleaseRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ReleaseRequest;
        readonly responseSerialize: (value: ReleaseResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ReleaseResponse;
    };
    /**
     * Hold is a lock session. The client sends one HoldRequest with `start`;
     * the daemon acquires (waiting as asked) and answers ACQUIRED, then
     * extends the lock by itself at about a third of the TTL, answering
     * EXTENDED each time. It answers LOST and ends the stream the moment an
     * extension fails or the validity is about to run out. When the client
     * half-closes, sends `release`, cancels or disconnects, the daemon releases
     * at once (answering RELEASED when the stream is still there); also when
     * `max_hold` is used up, and when the daemon shuts down.
     */
    readonly hold: {
        readonly path: "/redlockd.v1.Lock/Hold";
        readonly requestStream: true;
        readonly responseStream: true;
        readonly requestSerialize: (value: HoldRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => HoldRequest;
        readonly responseSerialize: (value: HoldResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => HoldResponse;
    };
    /**
     * Pipeline carries any number of Acquire, Extend and Release calls (and
     * their *Many forms) over
     * one stream, each answered as soon as it is done (not in order), with
     * the `id` the client gave it. A call does exactly what the method of the
     * same name does and answers the same; an error is a CallError instead of
     * a gRPC status, and the stream goes on. It costs a client and the daemon
     * a fraction of a unary call per lock operation: use it from a process
     * that takes many locks. The calls in flight run to the end whether or not
     * the client reads its replies; at most the daemon's
     * server.max_requests_per_connection calls are in flight or answered but
     * unread per stream, and the daemon reads no further call until the client
     * has read a reply. After the client
     * half-closes, the calls in flight are answered and the stream ends. If
     * the client cancels or disconnects, the calls in flight stop (an
     * acquisition granted meanwhile is released), as a unary call's would.
     * When the daemon shuts down it answers the calls in flight and ends the
     * stream with UNAVAILABLE. The stream's own gRPC deadline does not bound
     * any call; each acquisition's `wait` does.
     */
    readonly pipeline: {
        readonly path: "/redlockd.v1.Lock/Pipeline";
        readonly requestStream: true;
        readonly responseStream: true;
        readonly requestSerialize: (value: PipelineRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => PipelineRequest;
        readonly responseSerialize: (value: PipelineResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => PipelineResponse;
    };
    /**
     * Inspect shows what the masters hold for a resource, who holds it and
     * who waits for it in this daemon. It never returns lock values.
     */
    readonly inspect: {
        readonly path: "/redlockd.v1.Lock/Inspect";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: InspectRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => InspectRequest;
        readonly responseSerialize: (value: InspectResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => InspectResponse;
    };
    /**
     * Watch streams who holds a resource: the state now first (CURRENT), then
     * each change as it is seen: ACQUIRED, RELEASED, EXPIRED, FORCE_RELEASED,
     * and CHANGED for readers or permits coming and going. A state is read
     * again whenever a change is heard of and at least every
     * lock.watch_period (1 s by default); changes in between are seen only
     * through their outcome. It is a view, not a lock.
     */
    readonly watch: {
        readonly path: "/redlockd.v1.Lock/Watch";
        readonly requestStream: false;
        readonly responseStream: true;
        readonly requestSerialize: (value: WatchRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => WatchRequest;
        readonly responseSerialize: (value: WatchResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => WatchResponse;
    };
    /**
     * AcquireMany takes up to 16 resources at once, all or none: each master
     * takes the whole set or nothing in one step, the grant needs a quorum
     * for the whole set, and waiting never holds part of it (so two callers
     * with overlapping sets cannot deadlock). One value for the set, a
     * fencing token per member. Each member is then a lock like any other:
     * Extend and Release act on one member with the set's value;
     * ExtendMany and ReleaseMany on several.
     */
    readonly acquireMany: {
        readonly path: "/redlockd.v1.Lock/AcquireMany";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: AcquireManyRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => AcquireManyRequest;
        readonly responseSerialize: (value: AcquireManyResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => AcquireManyResponse;
    };
    /** ExtendMany extends several locks that hold one value (a set's members). */
    readonly extendMany: {
        readonly path: "/redlockd.v1.Lock/ExtendMany";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ExtendManyRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ExtendManyRequest;
        readonly responseSerialize: (value: ExtendManyResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ExtendManyResponse;
    };
    /** ReleaseMany releases several locks that hold one value. */
    readonly releaseMany: {
        readonly path: "/redlockd.v1.Lock/ReleaseMany";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ReleaseManyRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ReleaseManyRequest;
        readonly responseSerialize: (value: ReleaseManyResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ReleaseManyResponse;
    };
};
export interface LockServer extends UntypedServiceImplementation {
    /** Acquire takes the lock on a resource, waiting up to `wait` for it. */
    acquire: handleUnaryCall<AcquireRequest, AcquireResponse>;
    /** Extend resets the time to live of a lock the caller holds. */
    extend: handleUnaryCall<ExtendRequest, ExtendResponse>;
    /** Release gives a lock back. */
    release: handleUnaryCall<ReleaseRequest, ReleaseResponse>;
    /**
     * Hold is a lock session. The client sends one HoldRequest with `start`;
     * the daemon acquires (waiting as asked) and answers ACQUIRED, then
     * extends the lock by itself at about a third of the TTL, answering
     * EXTENDED each time. It answers LOST and ends the stream the moment an
     * extension fails or the validity is about to run out. When the client
     * half-closes, sends `release`, cancels or disconnects, the daemon releases
     * at once (answering RELEASED when the stream is still there); also when
     * `max_hold` is used up, and when the daemon shuts down.
     */
    hold: handleBidiStreamingCall<HoldRequest, HoldResponse>;
    /**
     * Pipeline carries any number of Acquire, Extend and Release calls (and
     * their *Many forms) over
     * one stream, each answered as soon as it is done (not in order), with
     * the `id` the client gave it. A call does exactly what the method of the
     * same name does and answers the same; an error is a CallError instead of
     * a gRPC status, and the stream goes on. It costs a client and the daemon
     * a fraction of a unary call per lock operation: use it from a process
     * that takes many locks. The calls in flight run to the end whether or not
     * the client reads its replies; at most the daemon's
     * server.max_requests_per_connection calls are in flight or answered but
     * unread per stream, and the daemon reads no further call until the client
     * has read a reply. After the client
     * half-closes, the calls in flight are answered and the stream ends. If
     * the client cancels or disconnects, the calls in flight stop (an
     * acquisition granted meanwhile is released), as a unary call's would.
     * When the daemon shuts down it answers the calls in flight and ends the
     * stream with UNAVAILABLE. The stream's own gRPC deadline does not bound
     * any call; each acquisition's `wait` does.
     */
    pipeline: handleBidiStreamingCall<PipelineRequest, PipelineResponse>;
    /**
     * Inspect shows what the masters hold for a resource, who holds it and
     * who waits for it in this daemon. It never returns lock values.
     */
    inspect: handleUnaryCall<InspectRequest, InspectResponse>;
    /**
     * Watch streams who holds a resource: the state now first (CURRENT), then
     * each change as it is seen: ACQUIRED, RELEASED, EXPIRED, FORCE_RELEASED,
     * and CHANGED for readers or permits coming and going. A state is read
     * again whenever a change is heard of and at least every
     * lock.watch_period (1 s by default); changes in between are seen only
     * through their outcome. It is a view, not a lock.
     */
    watch: handleServerStreamingCall<WatchRequest, WatchResponse>;
    /**
     * AcquireMany takes up to 16 resources at once, all or none: each master
     * takes the whole set or nothing in one step, the grant needs a quorum
     * for the whole set, and waiting never holds part of it (so two callers
     * with overlapping sets cannot deadlock). One value for the set, a
     * fencing token per member. Each member is then a lock like any other:
     * Extend and Release act on one member with the set's value;
     * ExtendMany and ReleaseMany on several.
     */
    acquireMany: handleUnaryCall<AcquireManyRequest, AcquireManyResponse>;
    /** ExtendMany extends several locks that hold one value (a set's members). */
    extendMany: handleUnaryCall<ExtendManyRequest, ExtendManyResponse>;
    /** ReleaseMany releases several locks that hold one value. */
    releaseMany: handleUnaryCall<ReleaseManyRequest, ReleaseManyResponse>;
}
export interface LockClient extends Client {
    /** Acquire takes the lock on a resource, waiting up to `wait` for it. */
    acquire(request: AcquireRequest, callback: (error: ServiceError | null, response: AcquireResponse) => void): ClientUnaryCall;
    acquire(request: AcquireRequest, metadata: Metadata, callback: (error: ServiceError | null, response: AcquireResponse) => void): ClientUnaryCall;
    acquire(request: AcquireRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: AcquireResponse) => void): ClientUnaryCall;
    /** Extend resets the time to live of a lock the caller holds. */
    extend(request: ExtendRequest, callback: (error: ServiceError | null, response: ExtendResponse) => void): ClientUnaryCall;
    extend(request: ExtendRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ExtendResponse) => void): ClientUnaryCall;
    extend(request: ExtendRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ExtendResponse) => void): ClientUnaryCall;
    /** Release gives a lock back. */
    release(request: ReleaseRequest, callback: (error: ServiceError | null, response: ReleaseResponse) => void): ClientUnaryCall;
    release(request: ReleaseRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ReleaseResponse) => void): ClientUnaryCall;
    release(request: ReleaseRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ReleaseResponse) => void): ClientUnaryCall;
    /**
     * Hold is a lock session. The client sends one HoldRequest with `start`;
     * the daemon acquires (waiting as asked) and answers ACQUIRED, then
     * extends the lock by itself at about a third of the TTL, answering
     * EXTENDED each time. It answers LOST and ends the stream the moment an
     * extension fails or the validity is about to run out. When the client
     * half-closes, sends `release`, cancels or disconnects, the daemon releases
     * at once (answering RELEASED when the stream is still there); also when
     * `max_hold` is used up, and when the daemon shuts down.
     */
    hold(): ClientDuplexStream<HoldRequest, HoldResponse>;
    hold(options: Partial<CallOptions>): ClientDuplexStream<HoldRequest, HoldResponse>;
    hold(metadata: Metadata, options?: Partial<CallOptions>): ClientDuplexStream<HoldRequest, HoldResponse>;
    /**
     * Pipeline carries any number of Acquire, Extend and Release calls (and
     * their *Many forms) over
     * one stream, each answered as soon as it is done (not in order), with
     * the `id` the client gave it. A call does exactly what the method of the
     * same name does and answers the same; an error is a CallError instead of
     * a gRPC status, and the stream goes on. It costs a client and the daemon
     * a fraction of a unary call per lock operation: use it from a process
     * that takes many locks. The calls in flight run to the end whether or not
     * the client reads its replies; at most the daemon's
     * server.max_requests_per_connection calls are in flight or answered but
     * unread per stream, and the daemon reads no further call until the client
     * has read a reply. After the client
     * half-closes, the calls in flight are answered and the stream ends. If
     * the client cancels or disconnects, the calls in flight stop (an
     * acquisition granted meanwhile is released), as a unary call's would.
     * When the daemon shuts down it answers the calls in flight and ends the
     * stream with UNAVAILABLE. The stream's own gRPC deadline does not bound
     * any call; each acquisition's `wait` does.
     */
    pipeline(): ClientDuplexStream<PipelineRequest, PipelineResponse>;
    pipeline(options: Partial<CallOptions>): ClientDuplexStream<PipelineRequest, PipelineResponse>;
    pipeline(metadata: Metadata, options?: Partial<CallOptions>): ClientDuplexStream<PipelineRequest, PipelineResponse>;
    /**
     * Inspect shows what the masters hold for a resource, who holds it and
     * who waits for it in this daemon. It never returns lock values.
     */
    inspect(request: InspectRequest, callback: (error: ServiceError | null, response: InspectResponse) => void): ClientUnaryCall;
    inspect(request: InspectRequest, metadata: Metadata, callback: (error: ServiceError | null, response: InspectResponse) => void): ClientUnaryCall;
    inspect(request: InspectRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: InspectResponse) => void): ClientUnaryCall;
    /**
     * Watch streams who holds a resource: the state now first (CURRENT), then
     * each change as it is seen: ACQUIRED, RELEASED, EXPIRED, FORCE_RELEASED,
     * and CHANGED for readers or permits coming and going. A state is read
     * again whenever a change is heard of and at least every
     * lock.watch_period (1 s by default); changes in between are seen only
     * through their outcome. It is a view, not a lock.
     */
    watch(request: WatchRequest, options?: Partial<CallOptions>): ClientReadableStream<WatchResponse>;
    watch(request: WatchRequest, metadata?: Metadata, options?: Partial<CallOptions>): ClientReadableStream<WatchResponse>;
    /**
     * AcquireMany takes up to 16 resources at once, all or none: each master
     * takes the whole set or nothing in one step, the grant needs a quorum
     * for the whole set, and waiting never holds part of it (so two callers
     * with overlapping sets cannot deadlock). One value for the set, a
     * fencing token per member. Each member is then a lock like any other:
     * Extend and Release act on one member with the set's value;
     * ExtendMany and ReleaseMany on several.
     */
    acquireMany(request: AcquireManyRequest, callback: (error: ServiceError | null, response: AcquireManyResponse) => void): ClientUnaryCall;
    acquireMany(request: AcquireManyRequest, metadata: Metadata, callback: (error: ServiceError | null, response: AcquireManyResponse) => void): ClientUnaryCall;
    acquireMany(request: AcquireManyRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: AcquireManyResponse) => void): ClientUnaryCall;
    /** ExtendMany extends several locks that hold one value (a set's members). */
    extendMany(request: ExtendManyRequest, callback: (error: ServiceError | null, response: ExtendManyResponse) => void): ClientUnaryCall;
    extendMany(request: ExtendManyRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ExtendManyResponse) => void): ClientUnaryCall;
    extendMany(request: ExtendManyRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ExtendManyResponse) => void): ClientUnaryCall;
    /** ReleaseMany releases several locks that hold one value. */
    releaseMany(request: ReleaseManyRequest, callback: (error: ServiceError | null, response: ReleaseManyResponse) => void): ClientUnaryCall;
    releaseMany(request: ReleaseManyRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ReleaseManyResponse) => void): ClientUnaryCall;
    releaseMany(request: ReleaseManyRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ReleaseManyResponse) => void): ClientUnaryCall;
}
export declare const LockClient: {
    new (address: string, credentials: ChannelCredentials, options?: Partial<ClientOptions>): LockClient;
    service: typeof LockService;
    serviceName: string;
};
interface MessageFns<T> {
    encode(message: T, writer?: BinaryWriter): BinaryWriter;
    decode(input: BinaryReader | Uint8Array, length?: number): T;
}
export {};
