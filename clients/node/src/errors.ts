// What a call can fail with, one class per gRPC status code the daemon
// uses. Contention is not an error: acquire() resolves to null.

import { Metadata, status } from '@grpc/grpc-js';
import { ErrorInfo, Status } from './gen/google/rpc/status';

/** Any failure of this client; `code` is the gRPC status code, when there was one. */
export class RedlockdError extends Error {
  /** The gRPC status code, when the daemon (or grpc-js) answered with one. */
  readonly code: number | undefined;

  constructor(message: string, code?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A request field is out of range: the message names the field and the allowed range. */
export class InvalidArgumentError extends RedlockdError {
  constructor(message: string) {
    super(message, status.INVALID_ARGUMENT);
  }
}

/**
 * Fewer than a quorum of the Redis masters could take part (or the daemon
 * itself could not be reached). `nodes` is what each master said, in index
 * order ("granted", "held by another owner", "timed out", "errored",
 * "quarantined", "unusable"), decoded from the status's google.rpc.ErrorInfo.
 */
export class UnavailableError extends RedlockdError {
  /** What each master said, in index order; empty when the daemon did not say. */
  readonly nodes: string[];
  /** How many masters make a quorum, when the daemon said. */
  readonly needed: number | undefined;

  constructor(message: string, nodes: string[] = [], needed?: number) {
    super(message, status.UNAVAILABLE);
    this.nodes = nodes;
    this.needed = needed;
  }
}

/** hold()/using(): the wait ran out while someone else held the lock. */
export class NotAcquiredError extends RedlockdError {
  /** Why the last attempt failed, e.g. "FAILURE_REASON_TAKEN". */
  readonly reason: string;
  /** What each master said in the last attempt, in index order ("taken", "granted", ...). */
  readonly nodes: string[];

  constructor(resource: string, reason: string, nodes: string[]) {
    super(`the lock on ${JSON.stringify(resource)} stayed with someone else for the whole wait (${reason})`);
    this.reason = reason;
    this.nodes = nodes;
  }
}

/**
 * The lock was lost while it was held, or was not held to the end when it
 * was released: work done under it may have overlapped another holder's.
 */
export class LockLostError extends RedlockdError {}

/**
 * A leadership was lost (LOST, the stream broke, or its own deadline
 * passed with no word from the daemon), or did not last until it was
 * resigned: whatever was done as leader may have overlapped the next
 * leader's. A LockLostError: the election's lock was lost.
 */
export class LeadershipLostError extends LockLostError {}

/** The daemon wants a valid `authorization: Bearer <token>`. */
export class UnauthenticatedError extends RedlockdError {}
/** The token's tenant may not lock this resource (outside its prefixes). */
export class PermissionDeniedError extends RedlockdError {}
/** A waiter or session limit of the daemon was hit. */
export class ResourceExhaustedError extends RedlockdError {}
/**
 * The lock is held as another kind than asked: permits of a semaphore with
 * another number of permits are out, or the reentrancy key holds the lock in
 * another mode or number of permits. For proclaim() and resign() by term:
 * the term no longer leads (the message names the current one).
 */
export class FailedPreconditionError extends RedlockdError {}
/** The call's gRPC deadline passed before the lock could be taken. */
export class DeadlineExceededError extends RedlockdError {}

const BY_CODE: Partial<Record<number, new (message: string, code?: number) => RedlockdError>> = {
  [status.UNAUTHENTICATED]: UnauthenticatedError,
  [status.PERMISSION_DENIED]: PermissionDeniedError,
  [status.RESOURCE_EXHAUSTED]: ResourceExhaustedError,
  [status.DEADLINE_EXCEEDED]: DeadlineExceededError,
  [status.FAILED_PRECONDITION]: FailedPreconditionError,
};

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

/** What each master said and the quorum, from a status's google.rpc.ErrorInfo. */
export function masterOutcomes(metadata: Metadata | undefined): { nodes: string[]; needed?: number } {
  const nodes: string[] = [];
  let needed: number | undefined;
  const raw = metadata?.get('grpc-status-details-bin') ?? [];
  for (const bytes of raw) {
    if (typeof bytes === 'string') continue;
    for (const detail of Status.decode(bytes).details) {
      if (detail.typeUrl !== ERROR_INFO) continue;
      for (const [key, value] of Object.entries(ErrorInfo.decode(detail.value).metadata)) {
        if (key === 'needed') needed = Number(value);
        else if (key.startsWith('node.')) nodes[Number(key.slice('node.'.length))] = value;
      }
    }
  }
  return { nodes, needed };
}

/** The typed error of a failed gRPC call (grpc-js's ServiceError, or anything else). */
export function fromStatus(error: unknown): RedlockdError {
  if (error instanceof RedlockdError) return error;
  const e = error as { code?: unknown; details?: unknown; message?: unknown; metadata?: Metadata };
  const code = typeof e?.code === 'number' ? e.code : undefined;
  const message = String(e?.details || e?.message || error);
  if (code === status.INVALID_ARGUMENT) return new InvalidArgumentError(message);
  if (code === status.UNAVAILABLE) {
    const { nodes, needed } = masterOutcomes(e.metadata);
    return new UnavailableError(message, nodes, needed);
  }
  const Kind = code === undefined ? undefined : BY_CODE[code];
  return Kind ? new Kind(message, code) : new RedlockdError(message, code, { cause: error });
}
