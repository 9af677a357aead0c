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
// `await using`, compiled by tsc (test.sh) for Node 20, which lacks the
// syntax: leaving the block releases the lock, also when it throws.
const node_test_1 = require("node:test");
const strict_1 = require("node:assert/strict");
const __1 = require("..");
(0, node_test_1.default)('await using releases the lock at the end of the block and when the block throws', async () => {
    const client = new __1.Client();
    const name = `examples/node-using-${process.pid}`;
    {
        const env_1 = { stack: [], error: void 0, hasError: false };
        try {
            const lock = __addDisposableResource(env_1, await client.hold(name, { ttl: 30_000 }), true);
            strict_1.default.ok(lock.fencingToken > 0n);
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
    // TTL 30 s: only the dispose freed it this soon.
    const again = await client.acquire(name, { ttl: 10_000, wait: 5_000 });
    strict_1.default.ok(again, 'the lock outlived its block');
    await again.release();
    await strict_1.default.rejects((async () => {
        const env_2 = { stack: [], error: void 0, hasError: false };
        try {
            const lock = __addDisposableResource(env_2, await client.hold(name, { ttl: 30_000 }), true);
            void lock;
            throw new Error('the work failed');
        }
        catch (e_2) {
            env_2.error = e_2;
            env_2.hasError = true;
        }
        finally {
            const result_2 = __disposeResources(env_2);
            if (result_2)
                await result_2;
        }
    })(), /the work failed/);
    const after = await client.acquire(name, { ttl: 10_000, wait: 5_000 });
    strict_1.default.ok(after, 'a block that threw kept its lock');
    await after.release();
    client.close();
});
