import './polyfill';
import { inspect } from 'node:util';
import { type ExtendManyRequest, type ExtendManyResponse, type ExtendRequest, type ExtendResponse, type ReleaseManyRequest, type ReleaseManyResponse, type ReleaseRequest, type ReleaseResponse } from './gen/redlockd/v1/lock';
/** The unary calls a Lease makes, on its client's connection. */
export interface LeaseCalls {
    extend(request: ExtendRequest): Promise<ExtendResponse>;
    release(request: ReleaseRequest): Promise<ReleaseResponse>;
    extendMany(request: ExtendManyRequest): Promise<ExtendManyResponse>;
    releaseMany(request: ReleaseManyRequest): Promise<ReleaseManyResponse>;
}
/**
 * A granted lock. Its value (the secret that proves ownership) is kept in a
 * private field: never printed, never in JSON.
 */
export declare class Lease implements AsyncDisposable {
    #private;
    /** The locked resource, as requested. */
    readonly resource: string;
    /** Strictly increases per resource (per slot for a permit): send it with every write. A bigint, exact above 2^53. */
    readonly fencingToken: bigint;
    /** True for a shared lock (a reader, taken with `{ shared: true }`); false for an exclusive one. */
    readonly shared: boolean;
    /** For a permit of a semaphore (`{ permits: N }`, N >= 2): N; 0 for a lock. */
    readonly permits: number;
    /** For a permit: the slot it holds, 0 to permits - 1 (its fencing token is the slot's); 0 for a lock. */
    readonly slot: number;
    /**
     * A performance.now() deadline (ms): the lock is guaranteed until then,
     * counted from when the Acquire (or the last Extend) was SENT.
     */
    validUntil: number;
    /** Milliseconds of guaranteed hold left (0 once past validUntil). */
    get remaining(): number;
    /**
     * Resets the lock's time to live to `ttl` ms (default: the TTL it was
     * acquired with) and moves validUntil on. Resolves false when the lock
     * is lost (expired or taken over) or this lease was released: stop
     * working under it. A released lease asks the daemon nothing (its value
     * may be another acquisition's too, with a reentrancy key).
     */
    extend(ttl?: number | undefined): Promise<boolean>;
    /**
     * Gives the lock back. Resolves true when it was still held to the end,
     * false when it had expired or been taken over meanwhile (work done under
     * it may have overlapped another holder's). Once released (also by
     * releaseMany()), it resolves false and asks the daemon nothing: with a
     * reentrancy key, a second release never counts down another
     * acquisition's hold.
     */
    release(): Promise<boolean>;
    /**
     * `await using`: releases, and throws LockLostError when the lock was not
     * held to the end; nothing when release() was called already (which
     * answered for itself).
     */
    [Symbol.asyncDispose](): Promise<void>;
    toJSON(): {
        resource: string;
        fencingToken: string;
        shared: boolean;
        permits: number;
        slot: number;
        validUntil: number;
    };
    [inspect.custom](): string;
}
