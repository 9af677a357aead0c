"use strict";
// The one session core of a Hold session's lock and a campaign's
// leadership: a stream the daemon keeps alive, whose `signal` aborts the
// moment what it holds is lost — when the daemon says LOST, when it ends the
// stream on its own, when the stream breaks, or, with no word from the
// daemon, LOST_MARGIN_MS before the last validity runs out (the client's own
// deadline, counted from when each message arrived on performance.now()'s
// monotonic clock, and fired by the client's own timer). Giving it back
// (release, resign), the caller's abort and Client.close() end it here too;
// HeldLock and Leadership only say what their stream's messages mean
// (docs/design.md#sessions, docs/design.md#elections).
Object.defineProperty(exports, "__esModule", { value: true });
exports.Session = exports.LOST_MARGIN_MS = void 0;
exports.openStream = openStream;
require("./polyfill");
const node_perf_hooks_1 = require("node:perf_hooks");
const errors_1 = require("./errors");
/** How long release() / resign() wait for the daemon's answer before cancelling the stream. */
const CONFIRM_MS = 10_000;
/**
 * How long before `validUntil` a silent daemon's session is said lost: 100
 * ms, or a quarter of the validity when that is less. It covers a message's
 * way from the daemon and a late timer on a busy host, so the holder is told
 * before the validity ends; it is below the daemon's own lead (LOST at 3 x
 * node_timeout, 150 ms by default, before the end: docs/design.md#sessions),
 * so the daemon's LOST, which says why, normally comes first.
 */
exports.LOST_MARGIN_MS = 100;
/** What a Session holds a stream for: a lock (HeldLock) or a leadership (Leadership). */
class Session {
    /**
     * A performance.now() deadline (ms) that moves on with every extension
     * the daemon makes. The daemon says LOST ahead of it; should it fall
     * silent, `signal` aborts LOST_MARGIN_MS (at most a quarter of the
     * validity) before this deadline all the same.
     */
    validUntil;
    /** Aborted, with the reason, the moment what the stream holds is lost. */
    signal;
    #call;
    #giveBack;
    #lost = new AbortController();
    #watchdog;
    #ended = false;
    #onEnd = [];
    /** Whether it was held until the daemon ended it on request: undefined while it lasts. */
    #heldToEnd;
    /** Whether release() / resign() was called while the session lasted. */
    #asked = false;
    #givenBack;
    /** @internal */
    constructor(call, validUntil, giveBack) {
        this.#call = call;
        this.#giveBack = giveBack;
        this.validUntil = validUntil;
        this.signal = this.#lost.signal;
        this.#arm();
    }
    /** Whether it was lost. */
    get lost() {
        return this.signal.aborted;
    }
    /** Milliseconds of guaranteed hold left (0 once lost). */
    get remaining() {
        return this.lost ? 0 : Math.max(0, this.validUntil - node_perf_hooks_1.performance.now());
    }
    /** @internal The daemon extended it: valid until `validUntil`. */
    extendTo(validUntil) {
        this.validUntil = validUntil;
        this.#arm();
    }
    /** @internal The daemon said LOST, saying `reason`. */
    lostByDaemon(reason) {
        this.#heldToEnd = false;
        this.#lose(reason);
    }
    /**
     * @internal The daemon ended it (RELEASED, RESIGNED), `heldToEnd` or
     * not. Unasked (max_hold used up, the daemon shutting down, a Resign by
     * term), or not held to the end, it is a loss, saying `reason`.
     */
    endedByDaemon(heldToEnd, reason) {
        this.#heldToEnd = heldToEnd;
        if (!this.#asked || !heldToEnd)
            this.#lose(reason);
        this.#finish();
    }
    /** @internal The stream ended (with or without an error), saying `reason`: unless the daemon had ended it, a loss as LOST is. */
    _ended(reason) {
        if (this.#heldToEnd === undefined)
            this.lostByDaemon(reason);
        this.#finish();
    }
    /** @internal The caller's signal aborted: the work must stop (`signal` aborts with `reason`), and it is given back. */
    _abandon(reason) {
        this.#abort(reason);
        this.giveBack().catch(() => { });
    }
    /** Sets the watchdog: armed as a message arrives, when what is left is its validity. */
    #arm() {
        clearTimeout(this.#watchdog);
        const left = this.validUntil - node_perf_hooks_1.performance.now();
        const margin = Math.min(exports.LOST_MARGIN_MS, Math.max(0, left) / 4);
        // Node's timers count whole milliseconds and may fire up to one early:
        // that is inside the margin.
        this.#watchdog = setTimeout(() => this.#lose('the validity ran out with no extension from the daemon'), left - margin);
        this.#watchdog.unref();
    }
    /** Aborts `signal` with lostError(reason) (unless aborted already), and ends the stream for good. */
    #lose(reason) {
        this.#abort(this.lostError(reason));
        // Our half too, and for good: the daemon lets go when the stream goes.
        this.#finish();
        this.#call.cancel();
    }
    /** @internal Client.close(): lost, saying `reason`, unless over already; the stream is cancelled. */
    _close(reason) {
        if (!this.#ended)
            this.#lose(reason);
    }
    /** Aborts `signal` with `reason`, unless aborted already. */
    #abort(reason) {
        if (!this.lost)
            this.#lost.abort(reason);
    }
    /** The session is over: no more watching, our half closed, the end callbacks run. */
    #finish() {
        clearTimeout(this.#watchdog);
        if (!this.#ended) {
            this.#ended = true;
            this.#call.end();
            for (const callback of this.#onEnd.splice(0))
                callback();
        }
    }
    /** @internal Whether the session is over, or being given back. */
    get ending() {
        return this.#ended || this.#asked;
    }
    /** @internal Runs `callback` once the session has ended. */
    _whenEnded(callback) {
        if (this.#ended)
            callback();
        else
            this.#onEnd.push(callback);
    }
    /** @internal Sends `request` on the stream. */
    send(request) {
        this.#call.write(request);
    }
    /**
     * @internal release() / resign(): gives it back and waits for the
     * daemon's word. Resolves true when it was held to the end, false when it
     * was lost first (then `signal` has aborted). Calling it again returns the
     * first answer.
     */
    giveBack() {
        this.#givenBack ??= this.#endWith(this.#giveBack);
        return this.#givenBack;
    }
    /**
     * @internal `await using`: gives it back, and throws `signal`'s reason
     * (else `notHeld()`) when it was not held to the end.
     */
    async dispose(notHeld) {
        if (!(await this.giveBack()))
            throw this.signal.reason ?? notHeld();
    }
    /**
     * Sends `last`, half-closes, and waits for the daemon to end the
     * session; cancels it (the daemon lets go at once) and rejects naming
     * `what` if it does not within 10 s. Resolves whether it was held to the end.
     */
    async #endWith({ last, what }) {
        if (!this.#ended) {
            this.#asked = true;
            this.#call.write(last);
            this.#call.end();
            let timer;
            const confirmed = await new Promise((resolve) => {
                this._whenEnded(() => resolve(true));
                timer = setTimeout(resolve, CONFIRM_MS, false);
            });
            clearTimeout(timer);
            if (!confirmed) {
                this.#call.cancel();
                throw new errors_1.RedlockdError(`the daemon did not confirm ${what} within ${CONFIRM_MS} ms`);
            }
        }
        return this.#heldToEnd === true && !this.lost;
    }
}
exports.Session = Session;
/**
 * Sends `start` on a new stream and resolves with the session `first`
 * makes of the daemon's first message, or rejects with the error it
 * returns instead; rejects with a typed error when the daemon refuses, and
 * with the signal's reason when `signal` aborts first. Once open, aborting
 * `signal` abandons the session. `noun` names the stream in messages.
 */
function openStream(call, start, noun, signal, first) {
    return new Promise((resolve, reject) => {
        let session;
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
        const onAbort = () => (session ? session._abandon(signal?.reason) : fail(signal?.reason));
        if (signal?.aborted)
            return fail(signal.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        call.on('data', (reply) => {
            const receivedAt = node_perf_hooks_1.performance.now();
            if (session)
                return session._event(reply, receivedAt);
            const made = first(reply, receivedAt);
            if (made instanceof Error)
                return fail(made);
            settled = true;
            session = made;
            session._whenEnded(() => signal?.removeEventListener('abort', onAbort));
            resolve(session);
        });
        // 'error' ends a stream with a non-OK status, 'end' one with OK (after
        // its last message).
        call.on('error', (error) => (session ? session._ended(`the ${noun} failed: ${(0, errors_1.fromStatus)(error).message}`) : fail((0, errors_1.fromStatus)(error))));
        call.on('end', () => session ? session._ended(`the daemon ended the ${noun}`) : fail(new errors_1.RedlockdError(`the daemon ended the ${noun} before answering`)));
        call.write(start);
    });
}
