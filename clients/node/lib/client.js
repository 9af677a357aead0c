"use strict";
// The client: a connection to one redlockd. Durations are milliseconds (as
// node-redlock); fencing tokens are bigints; validity is counted from the
// moment a request was SENT (the proto's client rule).
Object.defineProperty(exports, "__esModule", { value: true });
exports.Client = void 0;
const node_os_1 = require("node:os");
const node_perf_hooks_1 = require("node:perf_hooks");
const connection_1 = require("./connection");
const errors_1 = require("./errors");
const follow_1 = require("./follow");
const election_1 = require("./gen/redlockd/v1/election");
const lock_1 = require("./gen/redlockd/v1/lock");
const held_lock_1 = require("./held-lock");
const open_streams_1 = require("./open-streams");
const leadership_1 = require("./leadership");
const lease_1 = require("./lease");
const retry_1 = require("./retry");
const tracing_1 = require("./tracing");
const validate_1 = require("./validate");
/** Extra time a unary call may take beyond its wait before its gRPC deadline. */
const CALL_SLACK_MS = 30_000;
const ELECTION_METHODS = new Set(['leader', 'proclaim', 'resign', 'participants']);
/** A connection to one redlockd (or a load balancer in front of several). */
class Client {
    #stub;
    #elections;
    #metadata;
    #calls;
    #streams = new open_streams_1.OpenStreams();
    /**
     * Unset options come from REDLOCKD_ADDR (default 127.0.0.1:7420),
     * REDLOCKD_TOKEN and REDLOCKD_CA / REDLOCKD_CERT / REDLOCKD_KEY, as
     * redlockctl reads them. Connects lazily, on the first call.
     */
    constructor(options = {}) {
        const { address, credentials, metadata } = (0, connection_1.connection)(options);
        const interceptors = (0, tracing_1.traceContext)(); // the caller's trace context, with OpenTelemetry
        this.#stub = new lock_1.LockClient(address, credentials, { interceptors });
        this.#elections = new election_1.ElectionClient(address, credentials, { channelOverride: this.#stub.getChannel(), interceptors });
        this.#metadata = metadata;
        this.#calls = {
            extend: (request) => this.#unary('extend', request, 0),
            release: (request) => this.#unary('release', request, 0),
            extendMany: (request) => this.#unary('extendMany', request, 0),
            releaseMany: (request) => this.#unary('releaseMany', request, 0),
        };
    }
    /**
     * Closes the connection; pending calls fail. Every open stream ends: a
     * held lock or a leadership is lost (its `signal` aborts, and the daemon
     * lets go as the stream goes), a pending hold() or campaign() rejects,
     * and observe() and watch() iterations end.
     */
    close() {
        this.#streams.close();
        this.#stub.close();
    }
    #unary(method, request, waitMs, signal) {
        return new Promise((resolve, reject) => {
            if (signal?.aborted)
                return reject(signal.reason);
            const deadline = new Date(Date.now() + waitMs + CALL_SLACK_MS);
            const onAbort = () => {
                call.cancel();
                reject(signal?.reason);
            };
            const service = ELECTION_METHODS.has(method) ? this.#elections : this.#stub;
            const stub = service;
            const call = stub[method].call(service, request, this.#metadata, { deadline }, (error, reply) => {
                signal?.removeEventListener('abort', onAbort);
                if (error)
                    reject((0, errors_1.fromStatus)(error));
                else
                    resolve(reply);
            });
            signal?.addEventListener('abort', onAbort, { once: true });
        });
    }
    /**
     * Takes the lock on `resource`, trying for up to `wait` ms. Resolves to
     * null when someone else kept it all along: contention is a value, not an
     * error. A wait cut short by UNAVAILABLE is retried (jittered) until it
     * runs out, then rejects with UnavailableError.
     */
    async acquire(resource, options = {}) {
        const { ttl = 10_000, wait = 0, owner = '', shared, permits, reentrancyKey, lockDelay, signal } = options;
        (0, validate_1.resource)(resource);
        (0, validate_1.owner)(owner);
        const kind = (0, validate_1.kind)(shared, permits, reentrancyKey);
        (0, validate_1.millis)('ttl', ttl);
        const delay = lockDelay === undefined ? undefined : (0, validate_1.toDuration)((0, validate_1.millis)('lock_delay', lockDelay));
        const deadline = node_perf_hooks_1.performance.now() + (0, validate_1.millis)('wait', wait);
        return (0, retry_1.untilDeadline)(deadline, signal, async (waitLeft) => {
            const sentAt = node_perf_hooks_1.performance.now();
            const reply = await this.#unary('acquire', { resource, owner, ...kind, ttl: (0, validate_1.toDuration)(ttl), wait: waitLeft > 0 ? (0, validate_1.toDuration)(waitLeft) : undefined, lockDelay: delay }, waitLeft, signal);
            return reply.acquired && reply.lease ? new lease_1.Lease(this.#calls, reply.lease, sentAt, ttl) : null;
        });
    }
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
    async acquireMany(resources, options = {}) {
        const { ttl = 10_000, wait = 0, owner = '', signal } = options;
        const names = (0, validate_1.resources)(resources);
        (0, validate_1.owner)(owner);
        for (const [option, field] of [['shared', 'mode'], ['permits', 'permits'], ['reentrancyKey', 'reentrancy_key']]) {
            if (options[option] !== undefined) {
                throw new errors_1.InvalidArgumentError(`invalid ${field}: a set's locks are exclusive, without permits or a reentrancy key`);
            }
        }
        (0, validate_1.millis)('ttl', ttl);
        const deadline = node_perf_hooks_1.performance.now() + (0, validate_1.millis)('wait', wait);
        return (0, retry_1.untilDeadline)(deadline, signal, async (waitLeft) => {
            const sentAt = node_perf_hooks_1.performance.now();
            const reply = await this.#unary('acquireMany', { resources: names, owner, ttl: (0, validate_1.toDuration)(ttl), wait: waitLeft > 0 ? (0, validate_1.toDuration)(waitLeft) : undefined }, waitLeft, signal);
            return reply.acquired ? reply.leases.map((lease) => new lease_1.Lease(this.#calls, lease, sentAt, ttl)) : null;
        });
    }
    /**
     * Extends leases of one set (what acquireMany() resolved to, or some of
     * them) in one call: resets their time to live to `ttl` ms (default: the
     * TTL the set was taken with) and moves each extended lease's validUntil
     * on. Resolves true when every one was extended; false when any had
     * expired, been taken over or been released: stop working under the set.
     */
    extendMany(leases, ttl) {
        return lease_1.Lease.extendMany(this.#calls, leases, ttl);
    }
    /**
     * Gives back leases of one set (what acquireMany() resolved to, or some
     * of them) in one call. Resolves true when every one was still held to
     * the end; false when any had expired, been taken over or been released
     * already. Each lease's release() then answers for that lease.
     */
    releaseMany(leases) {
        return lease_1.Lease.releaseMany(this.#calls, leases);
    }
    /**
     * Opens a Hold session: resolves once the lock is held; the daemon then
     * extends it for as long as the session lives. Rejects with
     * NotAcquiredError when the wait (default 5000 ms) runs out. `lock.signal`
     * aborts with a LockLostError the moment the lock is lost.
     *
     *     await using lock = await client.hold('orders/42', { ttl: 10_000, wait: 5_000 });
     */
    async hold(resource, options = {}) {
        const { ttl = 10_000, wait = 5_000, owner = '', maxHold, lockDelay, shared, permits, reentrancyKey, signal } = options;
        (0, validate_1.resource)(resource);
        (0, validate_1.owner)(owner);
        const kind = (0, validate_1.kind)(shared, permits, reentrancyKey);
        (0, validate_1.millis)('ttl', ttl);
        if (maxHold !== undefined)
            (0, validate_1.millis)('max_hold', maxHold);
        if (lockDelay !== undefined)
            (0, validate_1.millis)('lock_delay', lockDelay);
        const deadline = node_perf_hooks_1.performance.now() + (0, validate_1.millis)('wait', wait);
        return (0, retry_1.untilDeadline)(deadline, signal, (waitLeft) => {
            const call = this.#stub.hold(this.#metadata);
            const start = {
                resource,
                owner,
                ...kind,
                ttl: (0, validate_1.toDuration)(ttl),
                wait: waitLeft > 0 ? (0, validate_1.toDuration)(waitLeft) : undefined,
                maxHold: maxHold === undefined ? undefined : (0, validate_1.toDuration)(maxHold),
                lockDelay: lockDelay === undefined ? undefined : (0, validate_1.toDuration)(lockDelay),
            };
            return this.#streams.session(call, (0, held_lock_1.openSession)(call, start, signal));
        });
    }
    /**
     * node-redlock's `using`: runs `routine(signal, lock)` while a Hold
     * session holds the lock, then releases it. `signal` aborts the moment the
     * lock is lost, and then this rejects with LockLostError even if the
     * routine succeeded. If the routine throws, the lock is released and its
     * error is rethrown.
     */
    async using(resource, options, routine) {
        const lock = await this.hold(resource, options);
        let result;
        try {
            result = await routine(lock.signal, lock);
        }
        catch (error) {
            await lock.release().catch(() => { });
            throw error;
        }
        await lock[Symbol.asyncDispose]();
        return result;
    }
    /** What the masters hold for `resource` (never lock values). */
    async inspect(resource) {
        (0, validate_1.resource)(resource);
        return this.#unary('inspect', { resource }, 0);
    }
    /**
     * Follows who holds `resource`: the state now first (`current`), then
     * each change as the daemon sees it. A view, not a lock.
     *
     *     for await (const change of client.watch('orders/42')) console.log(change.event, change.holder?.fencingToken);
     */
    watch(resource, options = {}) {
        (0, validate_1.resource)(resource);
        return (0, follow_1.follow)(() => this.#stub.watch({ resource }, this.#metadata), follow_1.watchChange, options.signal, this.#streams.closing);
    }
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
    async campaign(election, options = {}) {
        const { candidate = (0, node_os_1.hostname)(), value = '', ttl = 10_000, maxHold, lockDelay, signal } = options;
        (0, validate_1.election)(election);
        (0, validate_1.candidate)(candidate);
        const bytes = (0, validate_1.electionValue)(value);
        (0, validate_1.millis)('ttl', ttl);
        if (maxHold !== undefined)
            (0, validate_1.millis)('max_hold', maxHold);
        if (lockDelay !== undefined)
            (0, validate_1.millis)('lock_delay', lockDelay);
        const start = {
            election,
            candidate,
            value: bytes,
            ttl: (0, validate_1.toDuration)(ttl),
            maxHold: maxHold === undefined ? undefined : (0, validate_1.toDuration)(maxHold),
            lockDelay: lockDelay === undefined ? undefined : (0, validate_1.toDuration)(lockDelay),
        };
        const call = this.#elections.campaign(this.#metadata);
        return this.#streams.session(call, (0, leadership_1.openCampaign)(call, start, signal));
    }
    /** Who leads `election` now, as a majority of the masters agree. */
    async leader(election) {
        (0, validate_1.election)(election);
        return (0, follow_1.leaderState)(await this.#unary('leader', { election }, 0));
    }
    /**
     * Follows `election`: the state now first, then every change (a new
     * leader, a new value, no leader); terms never go back. A view, not a
     * lock. Throws UnavailableError when no majority can say the first state.
     *
     *     for await (const state of client.observe('jobs')) console.log(state.candidate, state.term);
     */
    observe(election, options = {}) {
        (0, validate_1.election)(election);
        return (0, follow_1.follow)(() => this.#elections.observe({ election }, this.#metadata), follow_1.leaderState, options.signal, this.#streams.closing);
    }
    /**
     * Publishes `value` for the leader of `term`, from anywhere. Rejects with
     * FailedPreconditionError, naming the current term, when `term` no longer
     * leads (nothing changes then).
     */
    async proclaim(election, term, value) {
        (0, validate_1.election)(election);
        await this.#unary('proclaim', { election, term: (0, validate_1.term)(term), value: (0, validate_1.electionValue)(value) }, 0);
    }
    /**
     * Ends the leadership of `term`, from anywhere: its lock is released at
     * once. Rejects with FailedPreconditionError, naming the current term,
     * when `term` no longer leads.
     */
    async resign(election, term) {
        (0, validate_1.election)(election);
        await this.#unary('resign', { election, term: (0, validate_1.term)(term) }, 0);
    }
    /** The candidates THIS daemon queues for `election`, first in line first (a leader is no longer queued). */
    async participants(election) {
        (0, validate_1.election)(election);
        return (await this.#unary('participants', { election }, 0)).candidates;
    }
}
exports.Client = Client;
