import { type ClientOptions } from './connection';
import { type LeaderState, type WatchChange } from './follow';
import { type InspectResponse } from './gen/redlockd/v1/lock';
import { type HeldLock } from './held-lock';
import { type Leadership } from './leadership';
import { Lease } from './lease';
/** Options of Client.acquire(). */
export interface AcquireOptions {
    /** Time to live on the masters, ms (default 10000; the daemon allows 250 to 60000 by default). */
    ttl?: number;
    /** How long to keep trying while someone else holds the lock, ms (default 0: one attempt). */
    wait?: number;
    /** A label for logs and Inspect (a pod name, a job id); never part of the lock's identity. */
    owner?: string;
    /**
     * Take a shared lock (a reader of a read-write lock): readers hold it
     * together; an exclusive lock (the default, a writer) excludes them all.
     * Readers may share a fencing token; a writer's is larger than every
     * earlier reader's.
     */
    shared?: boolean;
    /**
     * One of `permits` permits of a semaphore (2 to the daemon's
     * lock.max_permits, 64 by default; 0 or 1, the default, is a lock): at
     * most that many holders at once. Every holder must ask for the same
     * number (another one rejects with FailedPreconditionError while permits
     * are out). `lease.slot` says which permit; fencing tokens increase per
     * slot. Never shared.
     */
    permits?: number;
    /**
     * A job or trace id (at most 128 bytes) only your own work knows: while
     * the daemon holds the lock for an acquisition with this key, another
     * acquisition with it gets the same lock (the same fencing token) at once
     * and counts up; each release counts one down, and the lock is released
     * at zero. A Hold session is one hold. Per daemon; never logged.
     */
    reentrancyKey?: string;
    /**
     * Keep a lease that is never released this long (ms, at most the
     * daemon's lock.max_lock_delay, 60 s) past its validity, through every
     * extend, so the next holder starts only after it: for resources that
     * cannot check fencing tokens. A release frees it at once.
     */
    lockDelay?: number;
    /** Aborting it gives up the wait; the promise rejects with its reason. */
    signal?: AbortSignal;
}
/** Options of Client.acquireMany(): a set's locks are exclusive, without permits, a reentrancy key or a lock delay. */
export type AcquireManyOptions = Pick<AcquireOptions, 'ttl' | 'wait' | 'owner' | 'signal'>;
/** Options of Client.hold() and Client.using(). */
export interface HoldOptions extends AcquireOptions {
    /** How long to wait for the lock, ms (default 5000). */
    wait?: number;
    /** The longest the daemon keeps the lock, ms from when it was granted (default: the daemon's max_hold, 1 h). */
    maxHold?: number;
    /**
     * Keep the lock this long (ms, at most the daemon's lock.max_lock_delay,
     * 60 s) after the session ends without a release (the stream broke, the
     * process died, LOST), so the next holder starts only after it: for
     * resources that cannot check fencing tokens. A release frees it at once.
     */
    lockDelay?: number;
    /** Aborting it gives up the wait; once the lock is held, it aborts `lock.signal` with its reason and releases. */
    signal?: AbortSignal;
}
/** Options of Client.campaign(). */
export interface CampaignOptions {
    /** This candidate's name, 1 to 256 bytes (default: the host name, a pod's name in Kubernetes). */
    candidate?: string;
    /** The value to publish once elected: a string (sent as UTF-8) or bytes, at most 4096 (default empty). */
    value?: string | Uint8Array;
    /** The term's time to live, ms (default 10000); the daemon extends it at about a third of it. */
    ttl?: number;
    /** The longest one term may last, ms (default: the daemon's max_hold); then it counts as lost. */
    maxHold?: number;
    /** As HoldOptions.lockDelay: keep the election's lock this long after a leader vanishes without resigning. */
    lockDelay?: number;
    /** Aborting it withdraws the candidacy; once elected, it aborts `leadership.signal` with its reason and resigns. */
    signal?: AbortSignal;
}
/** Options of Client.observe() and Client.watch(). */
export interface FollowOptions {
    /** Aborting it ends the iteration: the pending next() rejects with its reason. */
    signal?: AbortSignal;
}
/** A connection to one redlockd (or a load balancer in front of several). */
export declare class Client {
    #private;
    /**
     * Unset options come from REDLOCKD_ADDR (default 127.0.0.1:7420),
     * REDLOCKD_TOKEN and REDLOCKD_CA / REDLOCKD_CERT / REDLOCKD_KEY, as
     * redlockctl reads them. Connects lazily, on the first call.
     */
    constructor(options?: ClientOptions);
    /**
     * Closes the connection; pending calls fail. Every open stream ends: a
     * held lock or a leadership is lost (its `signal` aborts, and the daemon
     * lets go as the stream goes), a pending hold() or campaign() rejects,
     * and observe() and watch() iterations end.
     */
    close(): void;
    /**
     * Takes the lock on `resource`, trying for up to `wait` ms. Resolves to
     * null when someone else kept it all along: contention is a value, not an
     * error. A wait cut short by UNAVAILABLE is retried (jittered) until it
     * runs out, then rejects with UnavailableError.
     */
    acquire(resource: string, options?: AcquireOptions): Promise<Lease | null>;
    /**
     * Takes the locks on several resources at once, all or none, trying for
     * up to `wait` ms. `resources`: 1 to 16 names (repeats are dropped).
     * Resolves to one Lease per resource, sorted by resource, or to null when
     * any of them stayed with someone else all along: then none is held, and
     * none was held while waiting (two callers with overlapping sets cannot
     * deadlock). The leases share one value and validity, each with its own
     * fencing token (strictly increasing per resource, like any lock's); each
     * is an ordinary Lease, extended and released on its own, or released
     * together with releaseMany(). A wait cut short by UNAVAILABLE is retried
     * as acquire()'s is.
     */
    acquireMany(resources: readonly string[], options?: AcquireManyOptions): Promise<Lease[] | null>;
    /**
     * Extends leases of one set (what acquireMany() resolved to, or some of
     * them) in one call: resets their time to live to `ttl` ms (default: the
     * TTL the set was taken with) and moves each extended lease's validUntil
     * on. Resolves true when every one was extended; false when any had
     * expired, been taken over or been released: stop working under the set.
     */
    extendMany(leases: readonly Lease[], ttl?: number): Promise<boolean>;
    /**
     * Gives back leases of one set (what acquireMany() resolved to, or some
     * of them) in one call. Resolves true when every one was still held to
     * the end; false when any had expired, been taken over or been released
     * already. Each lease's release() then answers for that lease.
     */
    releaseMany(leases: readonly Lease[]): Promise<boolean>;
    /**
     * Opens a Hold session: resolves once the lock is held; the daemon then
     * extends it for as long as the session lives. Rejects with
     * NotAcquiredError when the wait (default 5000 ms) runs out. `lock.signal`
     * aborts with a LockLostError the moment the lock is lost.
     *
     *     await using lock = await client.hold('orders/42', { ttl: 10_000, wait: 5_000 });
     */
    hold(resource: string, options?: HoldOptions): Promise<HeldLock>;
    /**
     * node-redlock's `using`: runs `routine(signal, lock)` while a Hold
     * session holds the lock, then releases it. `signal` aborts the moment the
     * lock is lost, and then this rejects with LockLostError even if the
     * routine succeeded. If the routine throws, the lock is released and its
     * error is rethrown.
     */
    using<T>(resource: string, options: HoldOptions, routine: (signal: AbortSignal, lock: HeldLock) => Promise<T>): Promise<T>;
    /** What the masters hold for `resource` (never lock values). */
    inspect(resource: string): Promise<InspectResponse>;
    /**
     * Follows who holds `resource`: the state now first (`current`), then
     * each change as the daemon sees it. A view, not a lock.
     *
     *     for await (const change of client.watch('orders/42')) console.log(change.event, change.holder?.fencingToken);
     */
    watch(resource: string, options?: FollowOptions): AsyncGenerator<WatchChange, void, undefined>;
    /**
     * Campaigns in `election` (docs/design.md#elections): waits in line
     * behind the other candidates, here and on other daemons, and resolves
     * once this one leads. `leadership.signal` aborts with a
     * LeadershipLostError the moment the leadership is lost, or when its last
     * validity runs out with no word from the daemon: stop leading then, and
     * send `leadership.term` with every write.
     *
     *     await using leadership = await client.campaign('jobs', { candidate: 'pod-a', value: 'pod-a:8080' });
     */
    campaign(election: string, options?: CampaignOptions): Promise<Leadership>;
    /** Who leads `election` now, as a majority of the masters agree. */
    leader(election: string): Promise<LeaderState>;
    /**
     * Follows `election`: the state now first, then every change (a new
     * leader, a new value, no leader); terms never go back. A view, not a
     * lock. Throws UnavailableError when no majority can say the first state.
     *
     *     for await (const state of client.observe('jobs')) console.log(state.candidate, state.term);
     */
    observe(election: string, options?: FollowOptions): AsyncGenerator<LeaderState, void, undefined>;
    /**
     * Publishes `value` for the leader of `term`, from anywhere. Rejects with
     * FailedPreconditionError, naming the current term, when `term` no longer
     * leads (nothing changes then).
     */
    proclaim(election: string, term: bigint, value: string | Uint8Array): Promise<void>;
    /**
     * Ends the leadership of `term`, from anywhere: its lock is released at
     * once. Rejects with FailedPreconditionError, naming the current term,
     * when `term` no longer leads.
     */
    resign(election: string, term: bigint): Promise<void>;
    /** The candidates THIS daemon queues for `election`, first in line first (a leader is no longer queued). */
    participants(election: string): Promise<string[]>;
}
