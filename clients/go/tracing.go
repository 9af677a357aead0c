package redlockd

// The caller's trace context on every call (docs/tracing.md#clients): each
// call carries the W3C traceparent (and tracestate) of the span in its
// context, through OpenTelemetry's propagation API and the propagator the
// application installed (otel.SetTextMapPropagator). An application without
// OpenTelemetry has the API's no-op propagator: nothing is added. This is
// the API module only, never the SDK or an exporter.

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// traceContext is the dial options that add the trace context to each call.
func traceContext() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
			cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(withTraceContext(ctx), method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn,
			method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(withTraceContext(ctx), desc, cc, method, opts...)
		}),
	}
}

// withTraceContext is ctx with the trace context in its outgoing metadata,
// or ctx itself when the propagator has nothing to say.
func withTraceContext(ctx context.Context) context.Context {
	carrier := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if len(carrier) == 0 {
		return ctx
	}
	pairs := make([]string, 0, 2*len(carrier))
	for key, value := range carrier {
		pairs = append(pairs, key, value)
	}
	return metadata.AppendToOutgoingContext(ctx, pairs...)
}
