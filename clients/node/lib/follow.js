"use strict";
// Observe and watch (docs/design.md#observe-and-watch): a server stream as
// an async iterator. The call opens on the first next(); leaving the loop
// (break, return, a throw) or aborting `signal` cancels it. These are
// views, not locks: by the time a state arrives it may have changed; only
// a term or a fencing token, checked by the resource, makes a write safe.
Object.defineProperty(exports, "__esModule", { value: true });
exports.leaderState = leaderState;
exports.watchChange = watchChange;
exports.follow = follow;
const errors_1 = require("./errors");
const lock_1 = require("./gen/redlockd/v1/lock");
const date = (t) => t === undefined ? undefined : new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6));
/** A LeaderResponse as a LeaderState. */
function leaderState(reply) {
    const { elected, candidate, value, term, since } = reply;
    return { elected, candidate, value, term, since: date(since) };
}
/** A WatchResponse as a WatchChange. */
function watchChange(reply) {
    const name = String(lock_1.WatchEvent[reply.event] ?? reply.event).replace(/^WATCH_EVENT_/, '').toLowerCase();
    const { held, holder, readers, permits, permitsOut } = reply;
    return { event: name, held, holder, readers, permits, permitsOut };
}
/**
 * The messages of the stream `open()` starts, each through `map`; ends
 * when the daemon ends the stream (it shuts down) or `closing` aborts (the
 * client was closed), throws its typed error when it fails, and the
 * signal's reason once `signal` aborts.
 */
async function* follow(open, map, signal, closing) {
    signal?.throwIfAborted();
    if (closing.aborted)
        return;
    const call = open();
    // The cancellation's late 'error' must find a listener once the loop is left.
    call.on('error', () => { });
    const onAbort = () => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    closing.addEventListener('abort', onAbort, { once: true });
    try {
        for await (const reply of call)
            yield map(reply);
    }
    catch (error) {
        signal?.throwIfAborted();
        if (closing.aborted)
            return;
        throw (0, errors_1.fromStatus)(error);
    }
    finally {
        signal?.removeEventListener('abort', onAbort);
        closing.removeEventListener('abort', onAbort);
        call.cancel();
    }
}
