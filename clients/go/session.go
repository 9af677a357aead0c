package redlockd

// Hold: a lock session (etcd's concurrency.Session idiom). The daemon
// extends the lock while the stream lives and releases it the moment the
// stream ends, so a process that dies (even by kill -9) frees its lock at
// once.

import (
	"context"
	"io"
	"sync"
	"time"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// releaseConfirmation bounds how long Release waits for RELEASED.
const releaseConfirmation = 10 * time.Second

// Hold opens a Hold session on resource and returns once the lock is held;
// the daemon then extends it at about a third of the TTL for as long as
// the session lives. Release ends it; so does cancelling ctx (ctx bounds
// the whole session, not only the wait), closing the client, or the
// process dying. The lease's Context is cancelled the moment the lock is
// lost.
//
// # Errors
//
// ErrNotAcquired (errors.Is) when Wait (default 5 s) ran out while someone
// else held the lock; ErrInvalidArgument for a bad option (the daemon
// checks the ranges only it knows); ErrUnavailable without a quorum, after
// the wait was retried with jitter until it ran out.
func (c *Client) Hold(ctx context.Context, resource string, opts ...LockOption) (*Lease, error) {
	s, err := settingsOf(resource, 5*time.Second, opts)
	if err != nil {
		return nil, err
	}
	retry := newRetry(s.wait)
	for {
		l, err := c.open(ctx, resource, s, retry.left())
		if err != nil {
			if err = retry.after(ctx, err); err == nil {
				continue
			}
			return nil, err
		}
		return l, nil
	}
}

// open makes one attempt: a stream, its `start`, and the first answer.
func (c *Client) open(ctx context.Context, resource string, s lockSettings, wait time.Duration) (*Lease, error) {
	streamCtx, cancel := context.WithCancel(c.Outgoing(ctx))
	start := &pb.HoldStart{Resource: resource, Owner: s.owner, Ttl: durationpb.New(s.ttl), Mode: s.mode(),
		Permits: uint32(s.permits), ReentrancyKey: s.key}
	if wait > 0 {
		start.Wait = durationpb.New(wait)
	}
	if s.maxHoldSet {
		start.MaxHold = durationpb.New(s.maxHold)
	}
	if s.lockDelay > 0 {
		start.LockDelay = durationpb.New(s.lockDelay)
	}
	first, stream, err := func() (*pb.HoldResponse, pb.Lock_HoldClient, error) {
		stream, err := c.stub.Hold(streamCtx)
		if err != nil {
			return nil, nil, err
		}
		if err := stream.Send(&pb.HoldRequest{Request: &pb.HoldRequest_Start{Start: start}}); err != nil && err != io.EOF {
			return nil, nil, err
		}
		// On io.EOF from Send, Recv says why the stream ended.
		first, err := stream.Recv()
		return first, stream, err
	}()
	if err != nil {
		cancel()
		return nil, fromStatus(err)
	}
	received := time.Now() // a session's validity counts from its message
	switch first.Event {
	case pb.HoldEvent_HOLD_EVENT_ACQUIRED:
	case pb.HoldEvent_HOLD_EVENT_NOT_ACQUIRED:
		cancel()
		return nil, notAcquired(first.Reason, first.Nodes)
	default:
		cancel()
		return nil, &Error{Kind: ErrLockLost, Message: "the session ended before the lock was held: " + first.Reason}
	}
	l := newLease(c, first.Lease, received)
	l.session = &session{lease: l, stream: stream, cancel: cancel, done: make(chan struct{})}
	go l.session.follow()
	return l, nil
}

// session is the client's half of a Hold stream.
type session struct {
	lease   *Lease
	stream  pb.Lock_HoldClient
	cancel  context.CancelFunc
	done    chan struct{} // closed when the stream has ended
	closing sync.Once

	mu        sync.Mutex
	asked     bool // the client asked for the release
	heldToEnd bool // RELEASED's held_to_end
}

// follow reads the session's events until the stream ends.
func (s *session) follow() {
	defer close(s.done)
	for {
		event, err := s.stream.Recv()
		if err != nil {
			reason := "the daemon ended the session without a word"
			if err != io.EOF {
				reason = "the session broke: " + fromStatus(err).Error()
			}
			s.lose(reason)
			return
		}
		switch event.Event {
		case pb.HoldEvent_HOLD_EVENT_EXTENDED:
			s.lease.setValidity(time.Now(), event.Lease.GetValidity().AsDuration())
		case pb.HoldEvent_HOLD_EVENT_LOST:
			s.lose(event.Reason)
			return
		case pb.HoldEvent_HOLD_EVENT_RELEASED:
			s.mu.Lock()
			s.heldToEnd = event.HeldToEnd
			asked := s.asked
			s.mu.Unlock()
			if !asked {
				// max_hold used up, or the daemon shutting down: for the
				// work under the lock, a loss.
				s.lose("the daemon released the lock: " + event.Reason)
			} else {
				s.lease.cancel(context.Canceled)
			}
			return
		}
	}
}

func (s *session) lose(reason string) {
	s.lease.cancel(&Error{Kind: ErrLockLost, Message: reason})
}

func (s *session) release(ctx context.Context) (bool, error) {
	s.mu.Lock()
	s.asked = true
	s.mu.Unlock()
	s.closing.Do(func() {
		_ = s.stream.Send(&pb.HoldRequest{Request: &pb.HoldRequest_Release{Release: &pb.HoldRelease{}}})
		_ = s.stream.CloseSend()
	})
	timer := time.NewTimer(releaseConfirmation)
	defer timer.Stop()
	var gaveUp error
	select {
	case <-s.done:
	case <-ctx.Done():
		gaveUp = ctx.Err()
	case <-timer.C:
		gaveUp = &Error{Kind: ErrLockLost, Message: "the daemon did not confirm the release within 10 s"}
	}
	s.cancel() // ends the stream: the daemon releases if it has not yet
	if lost := s.lease.lostCause(); lost != nil {
		return false, lost
	}
	if gaveUp != nil {
		s.lease.cancel(context.Canceled)
		return false, gaveUp
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heldToEnd, nil
}
