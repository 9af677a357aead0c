import { inspect } from 'node:util';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { type HoldRequest, type HoldResponse, type HoldStart } from './gen/redlockd/v1/lock';
import { Session } from './session';
/** A Hold stream. */
export type HoldStream = ClientDuplexStream<HoldRequest, HoldResponse>;
/**
 * Sends `start` on a new Hold stream and resolves once the lock is held.
 * Rejects with NotAcquiredError when the wait runs out, a typed error when
 * the daemon refuses, and the signal's reason when `signal` aborts first.
 */
export declare function openSession(call: HoldStream, start: HoldStart, signal?: AbortSignal): Promise<HeldLock>;
/** A lock a Hold session holds. Made by Client.hold(). */
export declare class HeldLock extends Session<HoldRequest, HoldResponse> implements AsyncDisposable {
    /** The locked resource, as requested. */
    readonly resource: string;
    /** The session's fencing token (it never changes within a session): a bigint, exact above 2^53. */
    readonly fencingToken: bigint;
    /** True for a shared lock (a reader, taken with `{ shared: true }`); false for an exclusive one. */
    readonly shared: boolean;
    /** For a permit of a semaphore (`{ permits: N }`, N >= 2): N; 0 for a lock. */
    readonly permits: number;
    /** For a permit: the slot it holds, 0 to permits - 1 (its fencing token is the slot's); 0 for a lock. */
    readonly slot: number;
    /**
     * Aborted, with a LockLostError as its reason, the moment the lock is
     * lost; with the caller's reason when the `signal` given to hold() aborts
     * (which releases the lock).
     */
    readonly signal: AbortSignal;
    /**
     * Gives the lock back and waits for the daemon's word. Resolves true when
     * it was held to the end, false when it was lost first (then `signal` has
     * aborted). Calling it again returns the first answer.
     */
    release(): Promise<boolean>;
    /** `await using`: releases, and throws LockLostError when the lock was lost. */
    [Symbol.asyncDispose](): Promise<void>;
    toJSON(): {
        resource: string;
        fencingToken: string;
        shared: boolean;
        permits: number;
        slot: number;
        validUntil: number;
        lost: boolean;
    };
    [inspect.custom](): string;
}
