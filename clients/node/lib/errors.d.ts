import { Metadata } from '@grpc/grpc-js';
/** Any failure of this client; `code` is the gRPC status code, when there was one. */
export declare class RedlockdError extends Error {
    /** The gRPC status code, when the daemon (or grpc-js) answered with one. */
    readonly code: number | undefined;
    constructor(message: string, code?: number, options?: {
        cause?: unknown;
    });
}
/** A request field is out of range: the message names the field and the allowed range. */
export declare class InvalidArgumentError extends RedlockdError {
    constructor(message: string);
}
/**
 * Fewer than a quorum of the Redis masters could take part (or the daemon
 * itself could not be reached). `nodes` is what each master said, in index
 * order ("granted", "held by another owner", "timed out", "errored",
 * "quarantined", "unusable"), decoded from the status's google.rpc.ErrorInfo.
 */
export declare class UnavailableError extends RedlockdError {
    /** What each master said, in index order; empty when the daemon did not say. */
    readonly nodes: string[];
    /** How many masters make a quorum, when the daemon said. */
    readonly needed: number | undefined;
    constructor(message: string, nodes?: string[], needed?: number);
}
/** hold()/using(): the wait ran out while someone else held the lock. */
export declare class NotAcquiredError extends RedlockdError {
    /** Why the last attempt failed, e.g. "FAILURE_REASON_TAKEN". */
    readonly reason: string;
    /** What each master said in the last attempt, in index order ("taken", "granted", ...). */
    readonly nodes: string[];
    constructor(resource: string, reason: string, nodes: string[]);
}
/**
 * The lock was lost while it was held, or was not held to the end when it
 * was released: work done under it may have overlapped another holder's.
 */
export declare class LockLostError extends RedlockdError {
}
/**
 * A leadership was lost (LOST, the stream broke, or its own deadline
 * passed with no word from the daemon), or did not last until it was
 * resigned: whatever was done as leader may have overlapped the next
 * leader's. A LockLostError: the election's lock was lost.
 */
export declare class LeadershipLostError extends LockLostError {
}
/** The daemon wants a valid `authorization: Bearer <token>`. */
export declare class UnauthenticatedError extends RedlockdError {
}
/** The token's tenant may not lock this resource (outside its prefixes). */
export declare class PermissionDeniedError extends RedlockdError {
}
/** A waiter or session limit of the daemon was hit. */
export declare class ResourceExhaustedError extends RedlockdError {
}
/**
 * The lock is held as another kind than asked: permits of a semaphore with
 * another number of permits are out, or the reentrancy key holds the lock in
 * another mode or number of permits. For proclaim() and resign() by term:
 * the term no longer leads (the message names the current one).
 */
export declare class FailedPreconditionError extends RedlockdError {
}
/** The call's gRPC deadline passed before the lock could be taken. */
export declare class DeadlineExceededError extends RedlockdError {
}
/** What each master said and the quorum, from a status's google.rpc.ErrorInfo. */
export declare function masterOutcomes(metadata: Metadata | undefined): {
    nodes: string[];
    needed?: number;
};
/** The typed error of a failed gRPC call (grpc-js's ServiceError, or anything else). */
export declare function fromStatus(error: unknown): RedlockdError;
