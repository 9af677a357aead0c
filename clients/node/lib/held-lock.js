"use strict";
// The lock of a Hold session: the daemon extends it while the stream lives
// and says LOST the moment it can no longer guarantee it; `signal` aborts
// then (etcd's Session.Done(), node-redlock's `using` signal).
Object.defineProperty(exports, "__esModule", { value: true });
exports.HeldLock = void 0;
exports.openSession = openSession;
require("./polyfill");
const node_perf_hooks_1 = require("node:perf_hooks");
const node_util_1 = require("node:util");
const errors_1 = require("./errors");
const lock_1 = require("./gen/redlockd/v1/lock");
const validate_1 = require("./validate");
/** How long release() waits for the daemon's RELEASED before cancelling the stream. */
const RELEASE_CONFIRM_MS = 10_000;
const outcome = (n) => String(lock_1.NodeOutcome[n] ?? n).replace(/^NODE_OUTCOME_/, '').toLowerCase();
/**
 * Sends `start` on a new Hold stream and resolves once the lock is held.
 * Rejects with NotAcquiredError when the wait runs out, a typed error when
 * the daemon refuses, and the signal's reason when `signal` aborts first.
 */
function openSession(call, start, signal) {
    return new Promise((resolve, reject) => {
        let lock;
        let settled = false;
        const fail = (error) => {
            if (settled)
                return;
            settled = true;
            signal?.removeEventListener('abort', onAbort);
            call.end();
            call.cancel();
            reject(error);
        };
        const onAbort = () => (lock ? lock._abandon(signal?.reason) : fail(signal?.reason));
        if (signal?.aborted)
            return fail(signal.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        call.on('data', (reply) => {
            const receivedAt = node_perf_hooks_1.performance.now();
            if (lock)
                return lock._event(reply, receivedAt);
            if (reply.event === lock_1.HoldEvent.HOLD_EVENT_ACQUIRED && reply.lease) {
                settled = true;
                const { resource, fencingToken, validity, mode, permits, slot } = reply.lease;
                const shared = mode === lock_1.LockMode.LOCK_MODE_SHARED;
                lock = new HeldLock(call, resource, fencingToken, receivedAt + (0, validate_1.fromDuration)(validity), shared, permits, slot);
                lock._whenEnded(() => signal?.removeEventListener('abort', onAbort));
                resolve(lock);
            }
            else if (reply.event === lock_1.HoldEvent.HOLD_EVENT_NOT_ACQUIRED) {
                fail(new errors_1.NotAcquiredError(start.resource, reply.reason, reply.nodes.map(outcome)));
            }
            else {
                fail(new errors_1.RedlockdError(`the session ended before the lock was held: ${reply.reason || reply.event}`));
            }
        });
        // 'error' ends a stream with a non-OK status, 'end' one with OK (after
        // its last message).
        call.on('error', (error) => (lock ? lock._ended(`the session failed: ${(0, errors_1.fromStatus)(error).message}`) : fail((0, errors_1.fromStatus)(error))));
        call.on('end', () => (lock ? lock._ended('the daemon ended the session') : fail(new errors_1.RedlockdError('the daemon ended the session before answering'))));
        call.write({ request: { $case: 'start', value: start } });
    });
}
/** A lock a Hold session holds. Made by Client.hold(). */
class HeldLock {
    /** The locked resource, as requested. */
    resource;
    /** The session's fencing token (it never changes within a session): a bigint, exact above 2^53. */
    fencingToken;
    /** True for a shared lock (a reader, taken with `{ shared: true }`); false for an exclusive one. */
    shared;
    /** For a permit of a semaphore (`{ permits: N }`, N >= 2): N; 0 for a lock. */
    permits;
    /** For a permit: the slot it holds, 0 to permits - 1 (its fencing token is the slot's); 0 for a lock. */
    slot;
    /**
     * A performance.now() deadline (ms) that moves on with every extension
     * the daemon makes. The daemon says LOST ahead of it; should it fall
     * silent, `signal` aborts at this deadline all the same.
     */
    validUntil;
    /**
     * Aborted, with a LockLostError as its reason, the moment the lock is
     * lost; with the caller's reason when the `signal` given to hold() aborts
     * (which releases the lock).
     */
    signal;
    #call;
    #lost = new AbortController();
    #watchdog;
    #asked = false;
    #heldToEnd;
    #ended = false;
    #onEnd = [];
    #released;
    /** @internal */
    constructor(call, resource, fencingToken, validUntil, shared = false, permits = 0, slot = 0) {
        this.#call = call;
        this.resource = resource;
        this.fencingToken = fencingToken;
        this.shared = shared;
        this.permits = permits;
        this.slot = slot;
        this.validUntil = validUntil;
        this.signal = this.#lost.signal;
        this.#arm();
    }
    /** Whether the lock was lost. */
    get lost() {
        return this.signal.aborted;
    }
    /** Milliseconds of guaranteed hold left (0 once lost). */
    get remaining() {
        return this.lost ? 0 : Math.max(0, this.validUntil - node_perf_hooks_1.performance.now());
    }
    #arm() {
        clearTimeout(this.#watchdog);
        const left = this.validUntil - node_perf_hooks_1.performance.now();
        this.#watchdog = setTimeout(() => this.#lose('the validity ran out with no extension from the daemon'), left);
        this.#watchdog.unref();
    }
    #lose(reason) {
        if (!this.lost) {
            this.#lost.abort(new errors_1.LockLostError(`the lock on ${JSON.stringify(this.resource)} was lost: ${reason}`));
        }
        // Our half too, and for good: the daemon releases when the stream goes.
        this.#finish();
        this.#call.cancel();
    }
    #finish() {
        clearTimeout(this.#watchdog);
        if (!this.#ended) {
            this.#ended = true;
            this.#call.end();
            for (const callback of this.#onEnd.splice(0))
                callback();
        }
    }
    /** @internal Runs `callback` once the session has ended. */
    _whenEnded(callback) {
        if (this.#ended)
            callback();
        else
            this.#onEnd.push(callback);
    }
    /** @internal A message of the session after ACQUIRED. */
    _event(reply, receivedAt) {
        switch (reply.event) {
            case lock_1.HoldEvent.HOLD_EVENT_EXTENDED:
                this.validUntil = receivedAt + (0, validate_1.fromDuration)(reply.lease?.validity);
                this.#arm();
                break;
            case lock_1.HoldEvent.HOLD_EVENT_LOST:
                this.#heldToEnd = false;
                this.#lose(reply.reason);
                break;
            case lock_1.HoldEvent.HOLD_EVENT_RELEASED:
                this.#heldToEnd = reply.heldToEnd;
                // Released without being asked (max_hold used up, the daemon shutting
                // down): for the holder that is a loss.
                if (!this.#asked || !reply.heldToEnd)
                    this.#lose(`released by the daemon: ${reply.reason}`);
                this.#finish();
                break;
            default:
                break;
        }
    }
    /** @internal The caller's signal aborted: whatever works under the lock must stop, and it is released. */
    _abandon(reason) {
        if (!this.lost)
            this.#lost.abort(reason);
        this.release().catch(() => { });
    }
    /** @internal The stream ended (with or without an error). */
    _ended(reason) {
        if (this.#heldToEnd === undefined) {
            this.#heldToEnd = false;
            this.#lose(reason);
        }
        this.#finish();
    }
    /**
     * Gives the lock back and waits for the daemon's word. Resolves true when
     * it was held to the end, false when it was lost first (then `signal` has
     * aborted). Calling it again returns the first answer.
     */
    release() {
        this.#released ??= this.#release();
        return this.#released;
    }
    async #release() {
        if (!this.#ended) {
            this.#asked = true;
            this.#call.write({ request: { $case: 'release', value: {} } });
            this.#call.end();
            let timer;
            const confirmed = await new Promise((resolve) => {
                this._whenEnded(() => resolve(true));
                timer = setTimeout(resolve, RELEASE_CONFIRM_MS, false);
            });
            clearTimeout(timer);
            if (!confirmed) {
                this.#call.cancel(); // the daemon releases when the stream is cancelled
                throw new errors_1.RedlockdError(`the daemon did not confirm the release of ${JSON.stringify(this.resource)} within ${RELEASE_CONFIRM_MS} ms`);
            }
        }
        return this.#heldToEnd === true && !this.lost;
    }
    /** `await using`: releases, and throws LockLostError when the lock was lost. */
    async [Symbol.asyncDispose]() {
        if (!(await this.release())) {
            throw this.signal.reason ?? new errors_1.LockLostError(`the lock on ${JSON.stringify(this.resource)} was not held to the end`);
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
            lost: this.lost,
        };
    }
    [node_util_1.inspect.custom]() {
        const permit = this.permits >= 2 ? `, permits: ${this.permits}, slot: ${this.slot}` : '';
        return `HeldLock { resource: ${JSON.stringify(this.resource)}, fencingToken: ${this.fencingToken}n, shared: ${this.shared}${permit}, lost: ${this.lost} }`;
    }
}
exports.HeldLock = HeldLock;
