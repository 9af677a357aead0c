package redlockd_test

// The caller's trace context on each call (docs/tracing.md#clients): with
// the W3C propagator installed and a span in the context, Acquire sends its
// traceparent; without a span, or with the API's default (no-op)
// propagator, nothing. The calls go over real gRPC to a server started here
// that keeps what each call's metadata said.

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

type recording struct {
	pb.UnimplementedLockServer
	mu   sync.Mutex
	seen []metadata.MD
}

func (r *recording) Acquire(ctx context.Context, _ *pb.AcquireRequest) (*pb.AcquireResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	r.mu.Lock()
	r.seen = append(r.seen, md)
	r.mu.Unlock()
	return &pb.AcquireResponse{Acquired: false, Reason: pb.FailureReason_FAILURE_REASON_TAKEN}, nil
}

func (r *recording) traceparents() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, md := range r.seen {
		out = append(out, firstOf(md.Get("traceparent")))
	}
	return out
}

func firstOf(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[0]
}

func TestClientSendsTheTraceContextOfItsCallersSpan(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server, rec := grpc.NewServer(), &recording{}
	pb.RegisterLockServer(server, rec)
	go func() { _ = server.Serve(listener) }()
	defer server.Stop()
	c, err := redlockd.Dial(context.Background(), listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	span := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled})
	traced := trace.ContextWithSpanContext(context.Background(), span)
	acquire := func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := c.Acquire(ctx, "traced/go"); !errors.Is(err, redlockd.ErrNotAcquired) {
			t.Fatalf("acquire: %v", err)
		}
	}
	// The API's default propagator: nothing, span or not.
	acquire(traced)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	defer otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	acquire(traced)
	acquire(context.Background())
	want := []string{"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""}
	got := rec.traceparents()
	if len(got) != len(want) {
		t.Fatalf("calls seen: %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("call %d: traceparent %q, want %q (all: %q)", i, got[i], want[i], got)
		}
	}
}
