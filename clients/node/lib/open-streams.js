"use strict";
// The streams a Client has open — Hold sessions, campaigns, observe and
// watch — so that Client.close() ends every one of them: a held lock or a
// leadership is lost (its `signal` aborts, the daemon lets go as the
// stream goes), a pending hold() or campaign() rejects, and an observe()
// or watch() iterator ends.
Object.defineProperty(exports, "__esModule", { value: true });
exports.OpenStreams = void 0;
const errors_1 = require("./errors");
/** What close() says to the sessions it ends. */
const CLOSED = 'the client was closed';
/** The open streams of one Client. */
class OpenStreams {
    #closing = new AbortController();
    #sessions = new Set();
    /** Aborted by close(): follow() ends its iteration when it aborts. */
    get closing() {
        return this.#closing.signal;
    }
    /**
     * `opening` (a session opening on `call`), tracked: close() cancels the
     * call while it opens, and ends the session once open. Rejects at once
     * after close().
     */
    async session(call, opening) {
        const cancel = () => call.cancel();
        if (this.closing.aborted) {
            call.cancel();
            opening.catch(() => { });
            throw new errors_1.RedlockdError(CLOSED);
        }
        this.closing.addEventListener('abort', cancel, { once: true });
        try {
            const session = await opening;
            if (this.closing.aborted)
                session._close(CLOSED); // opened as close() ran
            this.#sessions.add(session);
            session._whenEnded(() => this.#sessions.delete(session));
            return session;
        }
        finally {
            this.closing.removeEventListener('abort', cancel);
        }
    }
    /** Ends every open session, then every other stream (calls still opening, observe, watch). */
    close() {
        for (const session of [...this.#sessions])
            session._close(CLOSED);
        this.#closing.abort(new errors_1.RedlockdError(CLOSED));
    }
}
exports.OpenStreams = OpenStreams;
