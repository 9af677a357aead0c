"use strict";
// A lock taken with Client.acquire(): the caller extends and releases it.
Object.defineProperty(exports, "__esModule", { value: true });
exports.Lease = void 0;
require("./polyfill");
const node_perf_hooks_1 = require("node:perf_hooks");
const node_util_1 = require("node:util");
const errors_1 = require("./errors");
const lock_1 = require("./gen/redlockd/v1/lock");
const validate_1 = require("./validate");
/**
 * A granted lock. Its value (the secret that proves ownership) is kept in a
 * private field: never printed, never in JSON.
 */
class Lease {
    /** The locked resource, as requested. */
    resource;
    /** Strictly increases per resource (per slot for a permit): send it with every write. A bigint, exact above 2^53. */
    fencingToken;
    /** True for a shared lock (a reader, taken with `{ shared: true }`); false for an exclusive one. */
    shared;
    /** For a permit of a semaphore (`{ permits: N }`, N >= 2): N; 0 for a lock. */
    permits;
    /** For a permit: the slot it holds, 0 to permits - 1 (its fencing token is the slot's); 0 for a lock. */
    slot;
    /**
     * A performance.now() deadline (ms): the lock is guaranteed until then,
     * counted from when the Acquire (or the last Extend) was SENT.
     */
    validUntil;
    #value;
    #calls;
    #ttl;
    #released;
    /** @internal Made by Client.acquire(). */
    constructor(calls, lease, sentAt, ttl) {
        this.#calls = calls;
        this.#value = lease.value;
        this.#ttl = ttl;
        this.resource = lease.resource;
        this.fencingToken = lease.fencingToken;
        this.shared = lease.mode === lock_1.LockMode.LOCK_MODE_SHARED;
        this.permits = lease.permits;
        this.slot = lease.slot;
        this.validUntil = sentAt + (0, validate_1.fromDuration)(lease.validity);
    }
    /** Milliseconds of guaranteed hold left (0 once past validUntil). */
    get remaining() {
        return Math.max(0, this.validUntil - node_perf_hooks_1.performance.now());
    }
    /**
     * Resets the lock's time to live to `ttl` ms (default: the TTL it was
     * acquired with) and moves validUntil on. Resolves false when the lock
     * is lost (expired or taken over): stop working under it.
     */
    async extend(ttl = this.#ttl) {
        if (ttl !== undefined)
            (0, validate_1.millis)('ttl', ttl);
        if (this.#released)
            throw new errors_1.RedlockdError(`the lease on ${JSON.stringify(this.resource)} was released`);
        const sentAt = node_perf_hooks_1.performance.now();
        const reply = await this.#calls.extend({
            resource: this.resource,
            value: this.#value,
            ttl: ttl === undefined ? undefined : (0, validate_1.toDuration)(ttl),
        });
        if (reply.extended) {
            this.validUntil = sentAt + (0, validate_1.fromDuration)(reply.validity);
            this.#ttl = ttl;
        }
        else {
            this.validUntil = Math.min(this.validUntil, node_perf_hooks_1.performance.now());
        }
        return reply.extended;
    }
    /**
     * Gives the lock back. Resolves true when it was still held to the end,
     * false when it had expired or been taken over meanwhile (work done under
     * it may have overlapped another holder's). Calling it again returns the
     * first answer.
     */
    release() {
        this.#released ??= this.#calls.release({ resource: this.resource, value: this.#value }).then((r) => r.released);
        return this.#released;
    }
    /**
     * @internal Client.releaseMany(): one ReleaseMany for leases of one set
     * (1 to 16, one value). Once it is answered, each lease's release()
     * answers what it said of that lease (one released before keeps its
     * first answer).
     */
    static async releaseMany(calls, leases) {
        if (!Array.isArray(leases) || !leases.every((lease) => lease instanceof Lease)) {
            throw new errors_1.InvalidArgumentError('invalid leases: must be an array of Leases (from acquireMany)');
        }
        if (leases.length < 1 || leases.length > validate_1.MAX_SET) {
            throw new errors_1.InvalidArgumentError(`invalid leases: ${leases.length} leases; 1 to ${validate_1.MAX_SET} are allowed`);
        }
        const value = leases[0].#value;
        if (leases.some((lease) => lease.#value !== value)) {
            throw new errors_1.InvalidArgumentError('invalid leases: they hold more than one value: releaseMany takes leases of one acquireMany');
        }
        const reply = await calls.releaseMany({ resources: leases.map((lease) => lease.resource), value });
        leases.forEach((lease, i) => {
            lease.#released ??= Promise.resolve(reply.members[i] ?? false);
        });
        return reply.released;
    }
    /** `await using`: releases, and throws LockLostError when the lock was not held to the end. */
    async [Symbol.asyncDispose]() {
        if (!(await this.release())) {
            throw new errors_1.LockLostError(`the lock on ${JSON.stringify(this.resource)} was not held to the end: it had expired or been taken over`);
        }
    }
    toJSON() {
        return {
            resource: this.resource,
            fencingToken: this.fencingToken.toString(),
            shared: this.shared,
            permits: this.permits,
            slot: this.slot,
            validUntil: this.validUntil,
        };
    }
    [node_util_1.inspect.custom]() {
        const permit = this.permits >= 2 ? `, permits: ${this.permits}, slot: ${this.slot}` : '';
        return `Lease { resource: ${JSON.stringify(this.resource)}, fencingToken: ${this.fencingToken}n, shared: ${this.shared}${permit} }`;
    }
}
exports.Lease = Lease;
