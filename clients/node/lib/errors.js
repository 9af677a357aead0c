"use strict";
// What a call can fail with, one class per gRPC status code the daemon
// uses. Contention is not an error: acquire() resolves to null.
Object.defineProperty(exports, "__esModule", { value: true });
exports.DeadlineExceededError = exports.FailedPreconditionError = exports.ResourceExhaustedError = exports.PermissionDeniedError = exports.UnauthenticatedError = exports.LeadershipLostError = exports.LockLostError = exports.NotAcquiredError = exports.UnavailableError = exports.InvalidArgumentError = exports.RedlockdError = void 0;
exports.masterOutcomes = masterOutcomes;
exports.fromStatus = fromStatus;
const grpc_js_1 = require("@grpc/grpc-js");
const status_1 = require("./gen/google/rpc/status");
/** Any failure of this client; `code` is the gRPC status code, when there was one. */
class RedlockdError extends Error {
    /** The gRPC status code, when the daemon (or grpc-js) answered with one. */
    code;
    constructor(message, code, options) {
        super(message, options);
        this.name = new.target.name;
        this.code = code;
    }
}
exports.RedlockdError = RedlockdError;
/** A request field is out of range: the message names the field and the allowed range. */
class InvalidArgumentError extends RedlockdError {
    constructor(message) {
        super(message, grpc_js_1.status.INVALID_ARGUMENT);
    }
}
exports.InvalidArgumentError = InvalidArgumentError;
/**
 * Fewer than a quorum of the Redis masters could take part (or the daemon
 * itself could not be reached). `nodes` is what each master said, in index
 * order ("granted", "held by another owner", "timed out", "errored",
 * "quarantined", "unusable"), decoded from the status's google.rpc.ErrorInfo.
 */
class UnavailableError extends RedlockdError {
    /** What each master said, in index order; empty when the daemon did not say. */
    nodes;
    /** How many masters make a quorum, when the daemon said. */
    needed;
    constructor(message, nodes = [], needed) {
        super(message, grpc_js_1.status.UNAVAILABLE);
        this.nodes = nodes;
        this.needed = needed;
    }
}
exports.UnavailableError = UnavailableError;
/** hold()/using(): the wait ran out while someone else held the lock. */
class NotAcquiredError extends RedlockdError {
    /** Why the last attempt failed, e.g. "FAILURE_REASON_TAKEN". */
    reason;
    /** What each master said in the last attempt, in index order ("taken", "granted", ...). */
    nodes;
    constructor(resource, reason, nodes) {
        super(`the lock on ${JSON.stringify(resource)} stayed with someone else for the whole wait (${reason})`);
        this.reason = reason;
        this.nodes = nodes;
    }
}
exports.NotAcquiredError = NotAcquiredError;
/**
 * The lock was lost while it was held, or was not held to the end when it
 * was released: work done under it may have overlapped another holder's.
 */
class LockLostError extends RedlockdError {
}
exports.LockLostError = LockLostError;
/**
 * A leadership was lost (LOST, the stream broke, or its own deadline
 * passed with no word from the daemon), or did not last until it was
 * resigned: whatever was done as leader may have overlapped the next
 * leader's. A LockLostError: the election's lock was lost.
 */
class LeadershipLostError extends LockLostError {
}
exports.LeadershipLostError = LeadershipLostError;
/** The daemon wants a valid `authorization: Bearer <token>`. */
class UnauthenticatedError extends RedlockdError {
}
exports.UnauthenticatedError = UnauthenticatedError;
/** The token's tenant may not lock this resource (outside its prefixes). */
class PermissionDeniedError extends RedlockdError {
}
exports.PermissionDeniedError = PermissionDeniedError;
/** A waiter or session limit of the daemon was hit. */
class ResourceExhaustedError extends RedlockdError {
}
exports.ResourceExhaustedError = ResourceExhaustedError;
/**
 * The lock is held as another kind than asked: permits of a semaphore with
 * another number of permits are out, or the reentrancy key holds the lock in
 * another mode or number of permits. For proclaim() and resign() by term:
 * the term no longer leads (the message names the current one).
 */
class FailedPreconditionError extends RedlockdError {
}
exports.FailedPreconditionError = FailedPreconditionError;
/** The call's gRPC deadline passed before the lock could be taken. */
class DeadlineExceededError extends RedlockdError {
}
exports.DeadlineExceededError = DeadlineExceededError;
const BY_CODE = {
    [grpc_js_1.status.UNAUTHENTICATED]: UnauthenticatedError,
    [grpc_js_1.status.PERMISSION_DENIED]: PermissionDeniedError,
    [grpc_js_1.status.RESOURCE_EXHAUSTED]: ResourceExhaustedError,
    [grpc_js_1.status.DEADLINE_EXCEEDED]: DeadlineExceededError,
    [grpc_js_1.status.FAILED_PRECONDITION]: FailedPreconditionError,
};
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
/** What each master said and the quorum, from a status's google.rpc.ErrorInfo. */
function masterOutcomes(metadata) {
    const nodes = [];
    let needed;
    const raw = metadata?.get('grpc-status-details-bin') ?? [];
    for (const bytes of raw) {
        if (typeof bytes === 'string')
            continue;
        for (const detail of status_1.Status.decode(bytes).details) {
            if (detail.typeUrl !== ERROR_INFO)
                continue;
            for (const [key, value] of Object.entries(status_1.ErrorInfo.decode(detail.value).metadata)) {
                if (key === 'needed')
                    needed = Number(value);
                else if (key.startsWith('node.'))
                    nodes[Number(key.slice('node.'.length))] = value;
            }
        }
    }
    return { nodes, needed };
}
/** The typed error of a failed gRPC call (grpc-js's ServiceError, or anything else). */
function fromStatus(error) {
    if (error instanceof RedlockdError)
        return error;
    const e = error;
    const code = typeof e?.code === 'number' ? e.code : undefined;
    const message = String(e?.details || e?.message || error);
    if (code === grpc_js_1.status.INVALID_ARGUMENT)
        return new InvalidArgumentError(message);
    if (code === grpc_js_1.status.UNAVAILABLE) {
        const { nodes, needed } = masterOutcomes(e.metadata);
        return new UnavailableError(message, nodes, needed);
    }
    const Kind = code === undefined ? undefined : BY_CODE[code];
    return Kind ? new Kind(message, code) : new RedlockdError(message, code, { cause: error });
}
