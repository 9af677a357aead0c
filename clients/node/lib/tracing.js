"use strict";
// The caller's trace context on every call (docs/tracing.md#clients): when
// the application uses OpenTelemetry, each call carries the W3C traceparent
// (and tracestate) of the context it was made in, through the propagator
// the application registered, so the daemon's span for it joins the
// application's trace. `@opentelemetry/api` is an optional peer dependency:
// without it there are no interceptors at all, and with it but no SDK
// registered its propagator adds nothing.
Object.defineProperty(exports, "__esModule", { value: true });
exports.traceContext = traceContext;
const grpc_js_1 = require("@grpc/grpc-js");
function load() {
    try {
        return require('@opentelemetry/api');
    }
    catch {
        return undefined;
    }
}
const otel = load();
const setter = { set: (metadata, key, value) => metadata.set(key, value) };
/** The interceptors that add the trace context: none without OpenTelemetry. */
function traceContext() {
    if (otel === undefined) {
        return [];
    }
    const api = otel;
    return [
        (options, nextCall) => {
            // The caller's context: the call is made synchronously inside it.
            const active = api.context.active();
            return new grpc_js_1.InterceptingCall(nextCall(options), {
                start(metadata, listener, next) {
                    // A copy: the client passes one Metadata object to all its calls.
                    const traced = metadata.clone();
                    api.propagation.inject(active, traced, setter);
                    next(traced, listener);
                },
            });
        },
    ];
}
