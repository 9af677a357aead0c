package redlockd

// Leadership: what a won campaign gives (campaign.go), and its life on the
// stream: extensions, proclaims, the loss, the resignation.

import (
	"context"
	"fmt"
	"io"
	"time"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
)

// Election is the election led, as given to Campaign.
func (l *Leadership) Election() string { return l.election }

// Candidate is this candidate, as given to Campaign.
func (l *Leadership) Candidate() string { return l.candidate }

// Term is the leadership's term: the election lock's fencing token,
// strictly increasing per election and exact over the whole uint64 range.
// Send it with every write to the resource the leader manages, and have
// the resource refuse a term lower than one it has seen.
func (l *Leadership) Term() uint64 { return l.term }

// Value is the value published now: Campaign's, or the last proclaimed.
func (l *Leadership) Value() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.value...)
}

// ValidUntil is until when the leadership is guaranteed: the last ELECTED
// or EXTENDED's valid_for, counted from when it arrived. It carries Go's
// monotonic clock reading: compare it with time.Now().
func (l *Leadership) ValidUntil() time.Time { return l.until() }

// Remaining is how long the leadership is still guaranteed (0 once it is
// not).
func (l *Leadership) Remaining() time.Duration { return l.remaining() }

// Context is cancelled the moment the leadership can no longer be
// guaranteed: LOST, the daemon ending it (max_hold, a Resign by term, a
// shutdown), the stream breaking, or, with no extension, 100 ms (at most a
// quarter of the validity) before ValidUntil — the client's own deadline,
// on its own timer (Err then wraps ErrLockLost); and
// at Resign (Err is context.Canceled). Hand it to the leader's work.
func (l *Leadership) Context() context.Context { return l.ctx }

// Err is why Context was cancelled: an error wrapping ErrLockLost when the
// leadership was lost, context.Canceled when it was resigned; nil while
// leading.
func (l *Leadership) Err() error { return l.err() }

// String shows the election, the candidate and the term.
func (l *Leadership) String() string {
	return fmt.Sprintf("Leadership{election: %q, candidate: %q, term: %d}", l.election, l.candidate, l.term)
}

// follow takes the stream's messages until it ends.
func (l *Leadership) follow(messages <-chan delivered) {
	defer close(l.done)
	for got := range messages {
		if got.err != nil {
			reason := "the daemon ended the campaign without a word"
			if got.err != io.EOF {
				reason = "the campaign broke: " + fromStatus(got.err).Error()
			}
			l.lose(reason)
			return
		}
		switch got.msg.Event {
		case pb.CampaignEvent_CAMPAIGN_EVENT_EXTENDED:
			l.setValidity(got.at, got.msg.ValidFor.AsDuration())
		case pb.CampaignEvent_CAMPAIGN_EVENT_PROCLAIMED:
			l.mu.Lock()
			l.value = got.msg.Value
			if len(l.proclaims) > 0 {
				close(l.proclaims[0])
				l.proclaims = l.proclaims[1:]
			}
			l.mu.Unlock()
		case pb.CampaignEvent_CAMPAIGN_EVENT_LOST:
			l.lose("lost: " + got.msg.Reason)
			return
		case pb.CampaignEvent_CAMPAIGN_EVENT_RESIGNED:
			l.mu.Lock()
			l.resigned = true
			asked := l.resigning
			l.mu.Unlock()
			if asked {
				l.cancel(context.Canceled)
			} else {
				l.lose("the daemon ended the leadership: " + got.msg.Reason)
			}
			return
		}
	}
	l.lose("the campaign was cancelled: its context ended") // (or Resign gave up waiting)
}

// lose ends Context with ErrLockLost, and wakes the proclaims waiting.
func (l *Leadership) lose(reason string) {
	l.cancel(&Error{Kind: ErrLockLost, Message: reason})
	l.mu.Lock()
	for _, waiting := range l.proclaims {
		close(waiting)
	}
	l.proclaims = nil
	l.mu.Unlock()
}

// Proclaim publishes value (at most 4096 bytes) as the leader's, through
// the campaign's stream, and returns once the daemon has recorded it.
//
// # Errors
//
// ErrInvalidArgument for a value too long (before anything is sent); an
// error wrapping ErrLockLost when the leadership is lost first; ctx's
// error if it ends first.
func (l *Leadership) Proclaim(ctx context.Context, value []byte) error {
	if len(value) > maxElectionValueBytes {
		return invalid("value", "is %d bytes long; at most %d are allowed", len(value), maxElectionValueBytes)
	}
	told := make(chan struct{})
	l.sending.Lock()
	l.mu.Lock()
	switch {
	case l.cause != nil:
		l.mu.Unlock()
		l.sending.Unlock()
		return l.stopped()
	case l.resigning:
		l.mu.Unlock()
		l.sending.Unlock()
		return &Error{Kind: ErrLockLost, Message: "the leadership is resigning: nothing more can be proclaimed"}
	}
	l.proclaims = append(l.proclaims, told) // in the order of the sends
	l.mu.Unlock()
	sent := l.stream.Send(&pb.CampaignRequest{Request: &pb.CampaignRequest_Proclaim{Proclaim: &pb.CampaignProclaim{Value: value}}})
	l.sending.Unlock()
	if sent != nil && sent != io.EOF {
		return fromStatus(sent)
	}
	timer := time.NewTimer(resignConfirmation)
	defer timer.Stop()
	select {
	case <-told:
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return &Error{Kind: ErrLockLost, Message: fmt.Sprintf("the daemon did not confirm the proclaim within %v", resignConfirmation)}
	}
	if lost := l.lostCause(); lost != nil {
		return lost
	}
	return nil
}

// stopped is why nothing more can be done: the loss, or the resignation.
func (l *Leadership) stopped() error {
	if lost := l.lostCause(); lost != nil {
		return lost
	}
	return &Error{Kind: ErrLockLost, Message: "the leadership was resigned"}
}

// Resign ends the leadership and waits for the daemon to confirm it:
// the election's lock is released at once (whatever LockDelay says), and
// the next candidate in line is elected. Resigning twice is harmless.
//
// # Errors
//
// An error wrapping ErrLockLost when the leadership was lost before
// (Context said so); ctx's error if it ends before the daemon confirms (the
// stream is then cancelled: the daemon resigns for a client that went away,
// after LockDelay if one was asked for).
func (l *Leadership) Resign(ctx context.Context) error {
	l.mu.Lock()
	l.resigning = true
	l.mu.Unlock()
	if lost := l.lostCause(); lost != nil {
		l.cancelStream()
		return lost
	}
	l.closing.Do(func() {
		l.sending.Lock()
		defer l.sending.Unlock()
		_ = l.stream.Send(&pb.CampaignRequest{Request: &pb.CampaignRequest_Resign{Resign: &pb.CampaignResign{}}})
		_ = l.stream.CloseSend()
	})
	timer := time.NewTimer(resignConfirmation)
	defer timer.Stop()
	var gaveUp error
	select {
	case <-l.done:
	case <-ctx.Done():
		gaveUp = ctx.Err()
	case <-timer.C:
		gaveUp = &Error{Kind: ErrLockLost, Message: fmt.Sprintf("the daemon did not confirm the resignation within %v", resignConfirmation)}
	}
	l.cancelStream()
	if lost := l.lostCause(); lost != nil {
		return lost
	}
	if gaveUp != nil {
		l.cancel(context.Canceled)
		return gaveUp
	}
	return nil
}
