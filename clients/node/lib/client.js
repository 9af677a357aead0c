"use strict";
// The client: a connection to one redlockd. Durations are milliseconds (as
// node-redlock); fencing tokens are bigints; validity is counted from the
// moment a request was SENT (the proto's client rule).
Object.defineProperty(exports, "__esModule", { value: true });
exports.Client = void 0;
const node_perf_hooks_1 = require("node:perf_hooks");
const connection_1 = require("./connection");
const errors_1 = require("./errors");
const lock_1 = require("./gen/redlockd/v1/lock");
const held_lock_1 = require("./held-lock");
const lease_1 = require("./lease");
const retry_1 = require("./retry");
const validate_1 = require("./validate");
/** Extra time a unary call may take beyond its wait before its gRPC deadline. */
const CALL_SLACK_MS = 30_000;
/** A connection to one redlockd (or a load balancer in front of several). */
class Client {
    #stub;
    #metadata;
    #calls;
    /**
     * Unset options come from REDLOCKD_ADDR (default 127.0.0.1:7420),
     * REDLOCKD_TOKEN and REDLOCKD_CA / REDLOCKD_CERT / REDLOCKD_KEY, as
     * redlockctl reads them. Connects lazily, on the first call.
     */
    constructor(options = {}) {
        const { address, credentials, metadata } = (0, connection_1.connection)(options);
        this.#stub = new lock_1.LockClient(address, credentials);
        this.#metadata = metadata;
        this.#calls = {
            extend: (request) => this.#unary('extend', request, 0),
            release: (request) => this.#unary('release', request, 0),
            releaseMany: (request) => this.#unary('releaseMany', request, 0),
        };
    }
    /** Closes the connection; pending calls fail. */
    close() {
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
            const stub = this.#stub;
            const call = stub[method].call(this.#stub, request, this.#metadata, { deadline }, (error, reply) => {
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
        const { ttl = 10_000, wait = 0, owner = '', shared, permits, reentrancyKey, signal } = options;
        (0, validate_1.resource)(resource);
        (0, validate_1.owner)(owner);
        const kind = (0, validate_1.kind)(shared, permits, reentrancyKey);
        (0, validate_1.millis)('ttl', ttl);
        const deadline = node_perf_hooks_1.performance.now() + (0, validate_1.millis)('wait', wait);
        return (0, retry_1.untilDeadline)(deadline, signal, async (waitLeft) => {
            const sentAt = node_perf_hooks_1.performance.now();
            const reply = await this.#unary('acquire', { resource, owner, ...kind, ttl: (0, validate_1.toDuration)(ttl), wait: waitLeft > 0 ? (0, validate_1.toDuration)(waitLeft) : undefined }, waitLeft, signal);
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
        const { ttl = 10_000, wait = 5_000, owner = '', maxHold, shared, permits, reentrancyKey, signal } = options;
        (0, validate_1.resource)(resource);
        (0, validate_1.owner)(owner);
        const kind = (0, validate_1.kind)(shared, permits, reentrancyKey);
        (0, validate_1.millis)('ttl', ttl);
        if (maxHold !== undefined)
            (0, validate_1.millis)('max_hold', maxHold);
        const deadline = node_perf_hooks_1.performance.now() + (0, validate_1.millis)('wait', wait);
        return (0, retry_1.untilDeadline)(deadline, signal, (waitLeft) => (0, held_lock_1.openSession)(this.#stub.hold(this.#metadata), {
            resource,
            owner,
            ...kind,
            ttl: (0, validate_1.toDuration)(ttl),
            wait: waitLeft > 0 ? (0, validate_1.toDuration)(waitLeft) : undefined,
            maxHold: maxHold === undefined ? undefined : (0, validate_1.toDuration)(maxHold),
        }, signal));
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
}
exports.Client = Client;
