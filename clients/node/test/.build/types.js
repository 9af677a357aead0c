"use strict";
var __addDisposableResource = (this && this.__addDisposableResource) || function (env, value, async) {
    if (value !== null && value !== void 0) {
        if (typeof value !== "object" && typeof value !== "function") throw new TypeError("Object expected.");
        var dispose, inner;
        if (async) {
            if (!Symbol.asyncDispose) throw new TypeError("Symbol.asyncDispose is not defined.");
            dispose = value[Symbol.asyncDispose];
        }
        if (dispose === void 0) {
            if (!Symbol.dispose) throw new TypeError("Symbol.dispose is not defined.");
            dispose = value[Symbol.dispose];
            if (async) inner = dispose;
        }
        if (typeof dispose !== "function") throw new TypeError("Object not disposable.");
        if (inner) dispose = function() { try { inner.call(this); } catch (e) { return Promise.reject(e); } };
        env.stack.push({ value: value, dispose: dispose, async: async });
    }
    else if (async) {
        env.stack.push({ async: true });
    }
    return value;
};
var __disposeResources = (this && this.__disposeResources) || (function (SuppressedError) {
    return function (env) {
        function fail(e) {
            env.error = env.hasError ? new SuppressedError(e, env.error, "An error was suppressed during disposal.") : e;
            env.hasError = true;
        }
        var r, s = 0;
        function next() {
            while (r = env.stack.pop()) {
                try {
                    if (!r.async && s === 1) return s = 0, env.stack.push(r), Promise.resolve().then(next);
                    if (r.dispose) {
                        var result = r.dispose.call(r.value);
                        if (r.async) return s |= 2, Promise.resolve(result).then(next, function(e) { fail(e); return next(); });
                    }
                    else s |= 1;
                }
                catch (e) {
                    fail(e);
                }
            }
            if (s === 1) return env.hasError ? Promise.reject(env.error) : Promise.resolve();
            if (env.hasError) throw env.error;
        }
        return next();
    };
})(typeof SuppressedError === "function" ? SuppressedError : function (error, suppressed, message) {
    var e = new Error(message);
    return e.name = "SuppressedError", e.error = error, e.suppressed = suppressed, e;
});
Object.defineProperty(exports, "__esModule", { value: true });
// Compiled with `tsc --noEmit` by test.sh: the published types take the
// documented shapes, `await using` included.
const __1 = require("..");
async function shapes(client) {
    const env_1 = { stack: [], error: void 0, hasError: false };
    try {
        const lease = await client.acquire('r', { ttl: 10_000, wait: 0 });
        if (lease)
            await lease.release();
        const lock = __addDisposableResource(env_1, await client.hold('r', { ttl: 10_000, wait: 5_000, signal: AbortSignal.timeout(1000) }), true);
        const token = lock.fencingToken;
        const until = lock.validUntil;
        lock.signal.addEventListener('abort', () => {
            const reason = lock.signal.reason;
            void reason.message;
        });
        await client.using('r', { ttl: 10_000 }, async (signal, held) => {
            void signal.aborted;
            void held.fencingToken;
        });
        try {
            await client.acquire('r');
        }
        catch (e) {
            if (e instanceof __1.UnavailableError)
                void e.nodes[0];
        }
        return token + BigInt(Math.round(until));
    }
    catch (e_1) {
        env_1.error = e_1;
        env_1.hasError = true;
    }
    finally {
        const result_1 = __disposeResources(env_1);
        if (result_1)
            await result_1;
    }
}
void shapes;
