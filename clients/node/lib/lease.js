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
    #released = false;
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
     * is lost (expired or taken over) or this lease was released: stop
     * working under it. A released lease asks the daemon nothing (its value
     * may be another acquisition's too, with a reentrancy key).
     */
    async extend(ttl = this.#ttl) {
        if (ttl !== undefined)
            (0, validate_1.millis)('ttl', ttl);
        if (this.#released)
            return false;
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
     * it may have overlapped another holder's). Once released (also by
     * releaseMany()), it resolves false and asks the daemon nothing: with a
     * reentrancy key, a second release never counts down another
     * acquisition's hold.
     */
    async release() {
        if (this.#released)
            return false;
        this.#released = true;
        return (await this.#calls.release({ resource: this.resource, value: this.#value })).released;
    }
    /**
     * @internal Client.extendMany(): one ExtendMany for leases of one set (1
     * to 16, one value), to `ttl` ms (default: the TTL the first was acquired
     * or last extended with). Each extended lease's validUntil moves on (the
     * reply's validity is the shortest of the extended ones').
     */
    static async extendMany(calls, leases, ttl) {
        const value = Lease.#oneSet(leases, 'extendMany');
        const newTtl = ttl ?? leases[0].#ttl;
        if (newTtl !== undefined)
            (0, validate_1.millis)('ttl', newTtl);
        const sentAt = node_perf_hooks_1.performance.now();
        const reply = await calls.extendMany({
            resources: leases.map((lease) => lease.resource),
            value,
            ttl: newTtl === undefined ? undefined : (0, validate_1.toDuration)(newTtl),
        });
        leases.forEach((lease, i) => {
            if (reply.members[i]) {
                lease.validUntil = sentAt + (0, validate_1.fromDuration)(reply.validity);
                lease.#ttl = newTtl;
            }
            else {
                lease.validUntil = Math.min(lease.validUntil, node_perf_hooks_1.performance.now());
            }
        });
        return reply.extended;
    }
    /**
     * @internal Client.releaseMany(): one ReleaseMany for leases of one set
     * (1 to 16, one value). Each lease counts as released from then on.
     */
    static async releaseMany(calls, leases) {
        const value = Lease.#oneSet(leases, 'releaseMany');
        for (const lease of leases)
            lease.#released = true;
        return (await calls.releaseMany({ resources: leases.map((lease) => lease.resource), value })).released;
    }
    /** The one value of 1 to 16 leases of one set; InvalidArgumentError naming `leases` otherwise. */
    static #oneSet(leases, method) {
        if (!Array.isArray(leases) || !leases.every((lease) => lease instanceof Lease)) {
            throw new errors_1.InvalidArgumentError('invalid leases: must be an array of Leases (from acquireMany)');
        }
        if (leases.length < 1 || leases.length > validate_1.MAX_SET) {
            throw new errors_1.InvalidArgumentError(`invalid leases: ${leases.length} leases; 1 to ${validate_1.MAX_SET} are allowed`);
        }
        const value = leases[0].#value;
        if (leases.some((lease) => lease.#value !== value)) {
            throw new errors_1.InvalidArgumentError(`invalid leases: they hold more than one value: ${method} takes leases of one acquireMany`);
        }
        return value;
    }
    /**
     * `await using`: releases, and throws LockLostError when the lock was not
     * held to the end; nothing when release() was called already (which
     * answered for itself).
     */
    async [Symbol.asyncDispose]() {
        if (this.#released)
            return;
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
