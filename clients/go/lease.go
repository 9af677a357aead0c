package redlockd

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Lease is a held lock: taken with Acquire (extended and released by
// hand) or held by a Hold session (extended by the daemon).
type Lease struct {
	client   *Client
	resource string
	value    string
	token    uint64

	mu         sync.Mutex
	validUntil time.Time
	released   bool

	ctx   context.Context
	stop  context.CancelFunc
	cause error

	// Hold sessions only.
	session *session
}

func newLease(c *Client, lease *pb.Lease, validUntil time.Time) *Lease {
	// An acquired lease's context ends when its validity runs out.
	ctx, stop := context.WithCancel(context.Background())
	return &Lease{client: c, resource: lease.Resource, value: lease.Value, token: lease.FencingToken, validUntil: validUntil, ctx: ctx, stop: stop}
}

// Resource is the locked resource.
func (l *Lease) Resource() string { return l.resource }

// FencingToken strictly increases per resource: send it with every write.
func (l *Lease) FencingToken() uint64 { return l.token }

// ValidUntil is until when the lock is guaranteed, counted from the
// moment the request was sent (a Hold session's moves on with every
// extension). It carries Go's monotonic clock reading.
func (l *Lease) ValidUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.validUntil
}

// Context is cancelled the moment a Hold session's lock is lost (Err then
// wraps ErrLockLost), and when the lease is released.
func (l *Lease) Context() context.Context { return l.ctx }

// Err is why Context was cancelled: an error wrapping ErrLockLost when the
// lock was lost, context.Canceled when it was released; nil while held.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cause
}

func (l *Lease) cancel(cause error) {
	l.mu.Lock()
	if l.cause == nil {
		l.cause = cause
	}
	l.mu.Unlock()
	l.stop()
}

// String never shows the lock's secret value.
func (l *Lease) String() string {
	return fmt.Sprintf("Lease{resource: %q, fencing_token: %d}", l.resource, l.token)
}

// Extend resets an acquired lock's TTL; false when it is lost.
func (l *Lease) Extend(ctx context.Context, ttl time.Duration) (bool, error) {
	if l.session != nil {
		return false, invalid("extend", "a Hold session's lock is extended by the daemon")
	}
	sent := time.Now()
	reply, err := l.client.stub.Extend(l.client.Outgoing(ctx), &pb.ExtendRequest{Resource: l.resource, Value: l.value, Ttl: durationpb.New(ttl)})
	if err != nil {
		return false, fromStatus(err)
	}
	if reply.Extended {
		l.mu.Lock()
		l.validUntil = sent.Add(reply.Validity.AsDuration())
		l.mu.Unlock()
	}
	return reply.Extended, nil
}

// Release gives the lock back: true when it was still held to the end.
// For a Hold session, an error wrapping ErrLockLost when it was lost first.
func (l *Lease) Release(ctx context.Context) (bool, error) {
	if l.session != nil {
		return l.session.release(ctx)
	}
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return false, nil
	}
	l.released = true
	l.mu.Unlock()
	defer l.cancel(context.Canceled)
	reply, err := l.client.stub.Release(l.client.Outgoing(ctx), &pb.ReleaseRequest{Resource: l.resource, Value: l.value})
	if err != nil {
		return false, fromStatus(err)
	}
	return reply.Released, nil
}

// session is a Hold stream.
type session struct {
	lease   *Lease
	stream  pb.Lock_HoldClient
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	lost    string
	held    *bool
	closing sync.Once
}

// Hold opens a Hold session: it returns once the lock is held
// (ErrNotAcquired when the wait runs out); the daemon then extends it
// while the session lives. Release (or cancelling ctx) ends it.
func (c *Client) Hold(ctx context.Context, resource string, opts ...LockOption) (*Lease, error) {
	s, err := settingsOf(resource, 5*time.Second, opts)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(s.wait)
	for {
		l, err := c.open(ctx, resource, s, time.Until(deadline))
		if err != nil {
			if err = retryAfter(ctx, err, deadline); err == nil {
				continue
			}
			return nil, err
		}
		return l, nil
	}
}

func (c *Client) open(ctx context.Context, resource string, s lockSettings, wait time.Duration) (*Lease, error) {
	streamCtx, cancel := context.WithCancel(c.Outgoing(ctx))
	stream, err := c.stub.Hold(streamCtx)
	if err != nil {
		cancel()
		return nil, fromStatus(err)
	}
	start := &pb.HoldStart{Resource: resource, Owner: s.owner, Ttl: durationpb.New(s.ttl)}
	if wait > 0 {
		start.Wait = durationpb.New(wait)
	}
	if s.maxHold > 0 {
		start.MaxHold = durationpb.New(s.maxHold)
	}
	if err := stream.Send(&pb.HoldRequest{Request: &pb.HoldRequest_Start{Start: start}}); err != nil {
		cancel()
		return nil, fromStatus(err)
	}
	first, err := stream.Recv()
	if err != nil {
		cancel()
		return nil, fromStatus(err)
	}
	received := time.Now()
	switch first.Event {
	case pb.HoldEvent_HOLD_EVENT_ACQUIRED:
	case pb.HoldEvent_HOLD_EVENT_NOT_ACQUIRED:
		cancel()
		return nil, &Error{Kind: ErrNotAcquired, Message: first.Reason}
	default:
		cancel()
		return nil, &Error{Kind: ErrLockLost, Message: "the session ended before the lock was held: " + first.Reason}
	}
	l := newLease(c, first.Lease, received.Add(first.Lease.Validity.AsDuration()))
	l.session = &session{lease: l, stream: stream, cancel: cancel, done: make(chan struct{})}
	go l.session.follow()
	return l, nil
}

// follow reads the session's events until it ends.
func (s *session) follow() {
	defer close(s.done)
	for {
		event, err := s.stream.Recv()
		if err != nil {
			reason := "the daemon ended the session"
			if err != io.EOF {
				reason = "the session failed: " + fromStatus(err).Error()
			}
			s.lose(reason)
			return
		}
		switch event.Event {
		case pb.HoldEvent_HOLD_EVENT_EXTENDED:
			s.lease.mu.Lock()
			s.lease.validUntil = time.Now().Add(event.Lease.GetValidity().AsDuration())
			s.lease.mu.Unlock()
		case pb.HoldEvent_HOLD_EVENT_LOST:
			s.lose(event.Reason)
			return
		case pb.HoldEvent_HOLD_EVENT_RELEASED:
			held := event.HeldToEnd
			s.mu.Lock()
			s.held = &held
			s.mu.Unlock()
			s.lease.cancel(context.Canceled)
			return
		}
	}
}

func (s *session) lose(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil || s.lost != "" {
		return
	}
	s.lost = reason
	s.lease.cancel(&Error{Kind: ErrLockLost, Message: reason})
}

func (s *session) release(ctx context.Context) (bool, error) {
	s.closing.Do(func() {
		_ = s.stream.Send(&pb.HoldRequest{Request: &pb.HoldRequest_Release{Release: &pb.HoldRelease{}}})
		_ = s.stream.CloseSend()
	})
	select {
	case <-s.done:
	case <-ctx.Done():
		s.cancel()
		return false, ctx.Err()
	case <-time.After(10 * time.Second):
		s.cancel()
		return false, fmt.Errorf("redlockd: the daemon did not confirm the release within 10 s")
	}
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost != "" {
		return false, &Error{Kind: ErrLockLost, Message: s.lost}
	}
	return s.held != nil && *s.held, nil
}
