"use strict";
// The lock of a Hold session: the daemon extends it while the stream lives
// and says LOST the moment it can no longer guarantee it; `signal` aborts
// then (etcd's Session.Done(), node-redlock's `using` signal).
Object.defineProperty(exports, "__esModule", { value: true });
exports.HeldLock = void 0;
exports.openSession = openSession;
const node_util_1 = require("node:util");
const errors_1 = require("./errors");
const lock_1 = require("./gen/redlockd/v1/lock");
const session_1 = require("./session");
const validate_1 = require("./validate");
const outcome = (n) => String(lock_1.NodeOutcome[n] ?? n).replace(/^NODE_OUTCOME_/, '').toLowerCase();
/**
 * Sends `start` on a new Hold stream and resolves once the lock is held.
 * Rejects with NotAcquiredError when the wait runs out, a typed error when
 * the daemon refuses, and the signal's reason when `signal` aborts first.
 */
function openSession(call, start, signal) {
    const first = { request: { $case: 'start', value: start } };
    return (0, session_1.openStream)(call, first, 'session', signal, (reply, receivedAt) => {
        if (reply.event === lock_1.HoldEvent.HOLD_EVENT_ACQUIRED && reply.lease) {
            const { resource, fencingToken, validity, mode, permits, slot } = reply.lease;
            const shared = mode === lock_1.LockMode.LOCK_MODE_SHARED;
            return new HeldLock(call, resource, fencingToken, receivedAt + (0, validate_1.fromDuration)(validity), shared, permits, slot);
        }
        if (reply.event === lock_1.HoldEvent.HOLD_EVENT_NOT_ACQUIRED) {
            return new errors_1.NotAcquiredError(start.resource, reply.reason, reply.nodes.map(outcome));
        }
        return new errors_1.RedlockdError(`the session ended before the lock was held: ${reply.reason || reply.event}`);
    });
}
/** A lock a Hold session holds. Made by Client.hold(). */
class HeldLock extends session_1.Session {
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
    /** @internal */
    constructor(call, resource, fencingToken, validUntil, shared = false, permits = 0, slot = 0) {
        super(call, validUntil, { last: { request: { $case: 'release', value: {} } }, what: `the release of ${JSON.stringify(resource)}` });
        this.resource = resource;
        this.fencingToken = fencingToken;
        this.shared = shared;
        this.permits = permits;
        this.slot = slot;
    }
    /** @internal */
    lostError(reason) {
        return new errors_1.LockLostError(`the lock on ${JSON.stringify(this.resource)} was lost: ${reason}`);
    }
    /** @internal A message of the session after ACQUIRED. */
    _event(reply, receivedAt) {
        switch (reply.event) {
            case lock_1.HoldEvent.HOLD_EVENT_EXTENDED:
                return this.extendTo(receivedAt + (0, validate_1.fromDuration)(reply.lease?.validity));
            case lock_1.HoldEvent.HOLD_EVENT_LOST:
                return this.lostByDaemon(reply.reason);
            case lock_1.HoldEvent.HOLD_EVENT_RELEASED:
                return this.endedByDaemon(reply.heldToEnd, `released by the daemon: ${reply.reason}`);
            default:
                return;
        }
    }
    /**
     * Gives the lock back and waits for the daemon's word. Resolves true when
     * it was held to the end, false when it was lost first (then `signal` has
     * aborted). Calling it again returns the first answer.
     */
    release() {
        return this.giveBack();
    }
    /** `await using`: releases, and throws LockLostError when the lock was lost. */
    async [Symbol.asyncDispose]() {
        return this.dispose(() => new errors_1.LockLostError(`the lock on ${JSON.stringify(this.resource)} was not held to the end`));
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
