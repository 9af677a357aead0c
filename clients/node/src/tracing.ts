// The caller's trace context on every call (docs/tracing.md#clients): when
// the application uses OpenTelemetry, each call carries the W3C traceparent
// (and tracestate) of the context it was made in, through the propagator
// the application registered, so the daemon's span for it joins the
// application's trace. `@opentelemetry/api` is an optional peer dependency:
// without it there are no interceptors at all, and with it but no SDK
// registered its propagator adds nothing.

import { InterceptingCall, type Interceptor, type Metadata } from '@grpc/grpc-js';

type OpenTelemetry = typeof import('@opentelemetry/api');

function load(): OpenTelemetry | undefined {
  try {
    return require('@opentelemetry/api') as OpenTelemetry;
  } catch {
    return undefined;
  }
}

const otel = load();

const setter = { set: (metadata: Metadata, key: string, value: string) => metadata.set(key, value) };

/** The interceptors that add the trace context: none without OpenTelemetry. */
export function traceContext(): Interceptor[] {
  if (otel === undefined) {
    return [];
  }
  const api = otel;
  return [
    (options, nextCall) => {
      // The caller's context: the call is made synchronously inside it.
      const active = api.context.active();
      return new InterceptingCall(nextCall(options), {
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
