// Package k8slock is a client-go resourcelock.Interface backed by a
// redlockd lock, so that client-go's leaderelection.RunOrDie, and a
// controller-runtime Manager (LeaderElectionResourceLockInterface), elect
// their leader through redlockd instead of a Kubernetes Lease.
//
// client-go's LeaderElector keeps its own LeaderElectionRecord: it reads it
// (Get), writes it optimistically (Create, Update) and judges a holder's
// expiry by its own clock. A Lock turns every write into a redlockd call,
// so that a write succeeds only while this identity really holds the lock:
//
//   - Create and Update by a candidate that holds nothing Acquire the lock
//     (one attempt, TTL = the record's LeaseDurationSeconds, Owner = the
//     identity); by the holder they Extend it by that TTL; a record with
//     no holder (client-go's release) Releases it.
//   - Get reads the holder from the masters (Inspect): its owner label
//     (the identity), when it was granted, how long it is still held, and
//     its term. Nobody holds it: a record with no holder, and client-go
//     tries at once, while a holder's record never looks expired to
//     another candidate.
//
// The lock lives exactly as long as client-go renews it, like a Lease:
// LeaseDuration after the leader's last renewal (kill -9 included), it is
// free. Leading's context ends before then, by the lease's own clock. The
// leader's client-go stops leading at most RetryPeriod + RenewDeadline
// after its last renewal, so with LeaseDuration > RenewDeadline +
// RetryPeriod (controller-runtime's 15 s, 10 s, 2 s) no candidate can take
// the lock while the old leader's client-go still leads. What timing cannot rule out (a leader paused longer than the
// lease, a lock deleted behind the daemon's back) the term guards: the
// lock's fencing token, strictly increasing per resource (Term, Leading).
package k8slock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	redlockd "github.com/redlockd/redlockd/clients/go"
	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Lock is a resourcelock.Interface on one redlockd resource for one
// identity. Give each process (each candidate) a Lock of its own, with an
// identity unique among the candidates, as client-go requires.
type Lock struct {
	client   *redlockd.Client
	resource string
	identity string
	events   func(string)

	calls sync.Mutex // one Get, Create or Update at a time

	mu        sync.Mutex // guards what follows
	lease     *redlockd.Lease
	record    rl.LeaderElectionRecord // as last written while the lease is held
	lostAt    time.Time               // when a lease was last lost (not released)
	lostUntil time.Time               // no acquisition before this, after a loss
}

// Option configures a Lock.
type Option func(*Lock)

// OnEvent has client-go's events ("became leader", "stopped leading")
// passed to record (a log, an EventRecorder); by default they are dropped.
func OnEvent(record func(event string)) Option { return func(l *Lock) { l.events = record } }

// New is a Lock on resource (the redlockd resource: 1 to 256 bytes of
// printable UTF-8) for identity (the candidate's name, unique among the
// candidates, 1 to 256 bytes of printable UTF-8: it is the lock's owner
// label, and the HolderIdentity client-go sees). c is used for every call;
// close it after the elector has stopped.
func New(c *redlockd.Client, resource, identity string, opts ...Option) (*Lock, error) {
	if c == nil {
		return nil, errors.New("k8slock: the redlockd client is nil")
	}
	if err := printable("resource", resource); err != nil {
		return nil, err
	}
	if err := printable("identity", identity); err != nil {
		return nil, err
	}
	l := &Lock{client: c, resource: resource, identity: identity}
	for _, opt := range opts {
		opt(l)
	}
	return l, nil
}

func printable(field, value string) error {
	switch {
	case len(value) < 1 || len(value) > 256:
		return fmt.Errorf("k8slock: the %s is %d bytes long; it must be 1 to 256 bytes of printable UTF-8", field, len(value))
	case !utf8.ValidString(value):
		return fmt.Errorf("k8slock: the %s is not valid UTF-8", field)
	}
	for _, r := range value {
		if unicode.IsControl(r) {
			return fmt.Errorf("k8slock: the %s %q holds a control character; it must be printable UTF-8", field, value)
		}
	}
	return nil
}

// Identity is the candidate's identity, as given to New.
func (l *Lock) Identity() string { return l.identity }

// Describe names the lock in client-go's logs: "redlockd/" and the resource.
func (l *Lock) Describe() string { return "redlockd/" + l.resource }

// RecordEvent passes client-go's event to the OnEvent option's function.
func (l *Lock) RecordEvent(event string) {
	if l.events != nil {
		l.events(event)
	}
}

// Term is the term of the lease this identity holds now: the redlockd
// lock's fencing token, strictly increasing per resource, exact over the
// whole uint64 range; 0 when it holds none. A leadership keeps one term
// from OnStartedLeading until it ends: after a loss this identity takes
// the lock again only a lease duration later, by when client-go has
// stopped leading. Send the term with every write the leader makes, and
// have the resource refuse a term lower than one it has seen.
func (l *Lock) Term() uint64 {
	if lease := l.held(); lease != nil {
		return lease.FencingToken()
	}
	return 0
}

// Leading is what a leader runs under: ctx, ended also the moment the
// lease this identity holds ends (lost, released, or 100 ms before its
// validity runs out with no renewal: earlier than client-go, which
// stops only when RenewDeadline has passed without a renewal), and the
// term of that lease. Call it in OnStartedLeading, or in a
// controller-runtime leader-election Runnable, with the context given
// there. context.Cause of the returned context says why it ended (an error
// wrapping redlockd.ErrLockLost at a loss). When this identity holds no
// lease, the context is already ended and the term is 0.
func (l *Lock) Leading(ctx context.Context) (context.Context, uint64) {
	leading, stop := context.WithCancelCause(ctx)
	lease := l.held()
	if lease == nil {
		stop(fmt.Errorf("k8slock: %s holds no lease on %s", l.identity, l.Describe()))
		return leading, 0
	}
	unhook := context.AfterFunc(lease.Context(), func() {
		cause := lease.Err()
		if cause == nil || errors.Is(cause, context.Canceled) {
			cause = fmt.Errorf("k8slock: the lease on %s (term %d) was released", l.Describe(), lease.FencingToken())
		}
		stop(cause)
	})
	context.AfterFunc(leading, func() { unhook() })
	return leading, lease.FencingToken()
}

// Release gives the lock back if this identity holds it, and reports
// whether it was held to the end. Call it after RunOrDie has returned
// (after OnStoppedLeading) to hand the lock over at once on a clean exit;
// without it the lock stays taken until its TTL runs out. (client-go's
// ReleaseOnCancel releases too, through Update, but before
// OnStoppedLeading: after ctx has ended.)
func (l *Lock) Release(ctx context.Context) (bool, error) {
	l.calls.Lock()
	defer l.calls.Unlock()
	return l.release(ctx)
}

func (l *Lock) release(ctx context.Context) (bool, error) {
	l.mu.Lock()
	lease := l.lease
	l.lease, l.record = nil, rl.LeaderElectionRecord{}
	l.mu.Unlock()
	if lease == nil {
		return false, nil
	}
	held, err := lease.Release(ctx)
	if err != nil {
		return held, fmt.Errorf("k8slock: releasing %s (term %d): %w", l.Describe(), lease.FencingToken(), err)
	}
	return held, nil
}

// held is the lease held now, nil when none is (or it has ended).
func (l *Lock) held() *redlockd.Lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lease == nil || l.lease.Err() != nil {
		return nil
	}
	return l.lease
}

// Get reads who holds the lock from the masters. This identity's lease:
// the record it last wrote. Another holder: its owner label as
// HolderIdentity (a lease of this identity that this Lock does not hold
// is marked so), AcquireTime when it was granted (the masters' clocks),
// RenewTime now and LeaseDurationSeconds how long it is still held (at
// least 1), so that client-go never sees it expire while it is held;
// LeaderTransitions is the fencing token the masters' records give
// (Inspect's: the holder's term, or above it; clamped to the int range).
// Nobody holds it: a record with no holder.
func (l *Lock) Get(ctx context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	l.calls.Lock()
	defer l.calls.Unlock()
	view, err := l.client.Inspect(ctx, l.resource)
	if err != nil {
		return nil, nil, fmt.Errorf("k8slock: reading who holds %s: %w", l.Describe(), err)
	}
	holder := view.GetHolder()
	var record rl.LeaderElectionRecord
	switch {
	case !view.Held || holder == nil:
		// Nobody holds it (or no majority agrees on who does).
	case holder.Owner == l.identity && l.held() != nil:
		l.mu.Lock()
		record = l.record
		l.mu.Unlock()
	case holder.Owner == l.identity:
		// A lease of this identity that this Lock does not hold (an
		// Acquire whose reply never came, or another process given the
		// same identity): not this candidate's leadership.
		record = othersRecord(holder, holder.Owner+" (a lease this Lock does not hold)")
	default:
		record = othersRecord(holder, holder.Owner)
	}
	raw, err := json.Marshal(record)
	if err != nil {
		return nil, nil, err
	}
	return &record, raw, nil
}

// othersRecord is the record of a lock another candidate, identity, holds.
func othersRecord(holder *pb.Holder, identity string) rl.LeaderElectionRecord {
	if identity == "" {
		identity = "(a holder without an owner label)"
	}
	left := holder.GetTtl().AsDuration()
	return rl.LeaderElectionRecord{
		HolderIdentity:       identity,
		LeaseDurationSeconds: max(1, int(math.Ceil(left.Seconds()))),
		AcquireTime:          metav1.NewTime(holder.GetSince().AsTime()),
		RenewTime:            metav1.NewTime(time.Now()),
		LeaderTransitions:    termAsInt(holder.FencingToken),
	}
}

func termAsInt(term uint64) int { return int(min(term, math.MaxInt)) }

// Create takes the lock for this identity, as Update does.
func (l *Lock) Create(ctx context.Context, record rl.LeaderElectionRecord) error {
	return l.Update(ctx, record)
}

// Update writes record, through redlockd: the holder's renewal Extends the
// lease by the record's LeaseDurationSeconds; a candidate holding nothing
// Acquires the lock (one attempt) with that TTL; a record with no holder
// (client-go's release) Releases it. It fails when this identity does not
// hold the lock afterwards: someone else holds it, the lease was lost (and
// then, for a lease duration, it is not taken again: the leadership that
// lost it must end first), or the daemon could not be reached.
func (l *Lock) Update(ctx context.Context, record rl.LeaderElectionRecord) error {
	l.calls.Lock()
	defer l.calls.Unlock()
	if record.HolderIdentity == "" {
		_, err := l.release(ctx)
		return err
	}
	if record.HolderIdentity != l.identity {
		return fmt.Errorf("k8slock: %s may not write a record held by %q", l.identity, record.HolderIdentity)
	}
	if record.LeaseDurationSeconds < 1 {
		return fmt.Errorf("k8slock: the lease duration is %d s; client-go's LeaseDuration must be at least 1 s (it counts whole seconds)", record.LeaseDurationSeconds)
	}
	ttl := time.Duration(record.LeaseDurationSeconds) * time.Second
	l.mu.Lock()
	lease, lostAt, lostUntil := l.lease, l.lostAt, l.lostUntil
	l.mu.Unlock()
	if lease != nil {
		return l.renew(ctx, lease, record, ttl)
	}
	if wait := time.Until(lostUntil); wait > 0 {
		return fmt.Errorf("k8slock: %s lost its lease on %s at %s; it takes the lock again only in %v, once its leadership has ended",
			l.identity, l.Describe(), lostAt.Format(time.RFC3339Nano), wait.Round(time.Millisecond))
	}
	lease, err := l.client.Acquire(ctx, l.resource, redlockd.TTL(ttl), redlockd.Owner(l.identity))
	if err != nil {
		return fmt.Errorf("k8slock: %s taking %s: %w", l.identity, l.Describe(), err)
	}
	record.LeaderTransitions = termAsInt(lease.FencingToken())
	l.mu.Lock()
	l.lease, l.record = lease, record
	l.mu.Unlock()
	return nil
}

// renew extends the lease held; a lease that is lost is dropped, and no
// lease is taken again for ttl.
func (l *Lock) renew(ctx context.Context, lease *redlockd.Lease, record rl.LeaderElectionRecord, ttl time.Duration) error {
	extended, err := lease.Extend(ctx, ttl)
	if extended {
		record.LeaderTransitions = termAsInt(lease.FencingToken())
		l.mu.Lock()
		l.record = record
		l.mu.Unlock()
		return nil
	}
	if lease.Err() == nil {
		// Not lost (the daemon could not be reached, ctx ended): the
		// lease may still be held; client-go tries again.
		return fmt.Errorf("k8slock: %s renewing %s (term %d): %w", l.identity, l.Describe(), lease.FencingToken(), err)
	}
	now := time.Now()
	l.mu.Lock()
	l.lease, l.record = nil, rl.LeaderElectionRecord{}
	l.lostAt, l.lostUntil = now, now.Add(ttl)
	l.mu.Unlock()
	return fmt.Errorf("k8slock: %s lost %s (term %d): %w", l.identity, l.Describe(), lease.FencingToken(), lease.Err())
}

var _ rl.Interface = (*Lock)(nil)
