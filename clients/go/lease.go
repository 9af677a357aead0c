package redlockd

// Lease: a held lock, its fencing token, its validity (counted from the
// moment the request was sent) and a context that ends when it is lost.

import (
	"context"
	"fmt"
	"time"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Lease is a held lock: taken with Acquire (extended and released by
// hand) or held by a Hold session (extended by the daemon). Its lock value,
// the secret that proves ownership, is never printed.
type Lease struct {
	client   *Client
	resource string
	value    string
	token    uint64
	shared   bool
	permits  int
	slot     int

	lifetime      // mu also guards released
	released bool // Release (or ReleaseMany) was called

	session *session // Hold sessions only
}

// newLease is a lease valid for lease.validity from `from`: the moment its
// request was sent (Acquire) or its message received (Hold).
func newLease(c *Client, lease *pb.Lease, from time.Time) *Lease {
	l := &Lease{client: c, resource: lease.Resource, value: lease.Value, token: lease.FencingToken,
		shared: lease.Mode == pb.LockMode_LOCK_MODE_SHARED, permits: int(lease.Permits), slot: int(lease.Slot)}
	l.begin(from, lease.GetValidity().AsDuration(), "the lease's validity ran out")
	return l
}

// Resource is the locked resource.
func (l *Lease) Resource() string { return l.resource }

// FencingToken strictly increases per resource (per slot for a permit of a
// semaphore): send it with every write
// to the protected storage, and have the storage refuse a token lower than
// one it has seen. Exact over the whole uint64 range.
func (l *Lease) FencingToken() uint64 { return l.token }

// Shared is true for a shared lock (a reader, taken with Shared()), false
// for an exclusive one.
func (l *Lease) Shared() bool { return l.shared }

// Permits is the semaphore's number of permits for a permit (taken with
// Permits(n), n >= 2); 0 for a lock.
func (l *Lease) Permits() int { return l.permits }

// Slot is which of the semaphore's slots a permit holds, 0 to Permits()-1
// (0 for a lock). Fencing tokens increase per slot: compare a permit's token
// only with earlier tokens of the same slot.
func (l *Lease) Slot() int { return l.slot }

// ValidUntil is until when the lock is guaranteed: the send time of the
// request plus the daemon's validity (a Hold session's moves on with every
// extension, counted from its message). It carries Go's monotonic clock
// reading, so compare it with time.Now(), never with a wall clock.
func (l *Lease) ValidUntil() time.Time { return l.until() }

// Remaining is how long the lock is still guaranteed (0 once it is not).
func (l *Lease) Remaining() time.Duration { return l.remaining() }

// Context is cancelled the moment the lock is lost: a Hold session's LOST,
// the daemon ending the session on its own, the stream breaking, or, on the
// client's own timer, 100 ms (at most a quarter of the validity) before
// ValidUntil when no extension came (Err then wraps ErrLockLost); and when the lease is
// released (Err is context.Canceled). Hand it to the work done under the
// lock.
func (l *Lease) Context() context.Context { return l.ctx }

// Err is why Context was cancelled: an error wrapping ErrLockLost when the
// lock was lost, context.Canceled when it was released; nil while held.
func (l *Lease) Err() error { return l.err() }

// String shows the resource, the token, whether the lock is shared and a
// permit's slot, never the lock's value.
func (l *Lease) String() string {
	switch {
	case l.shared:
		return fmt.Sprintf("Lease{resource: %q, fencing_token: %d, shared}", l.resource, l.token)
	case l.permits >= 2:
		return fmt.Sprintf("Lease{resource: %q, fencing_token: %d, slot: %d of %d permits}", l.resource, l.token, l.slot, l.permits)
	}
	return fmt.Sprintf("Lease{resource: %q, fencing_token: %d}", l.resource, l.token)
}

// GoString hides the value from %#v too.
func (l *Lease) GoString() string { return l.String() }

// Extend resets an acquired lock's TTL (counted from now) and its validity
// (counted from the moment this request is sent).
//
// # Errors
//
// false with nil when the lock is lost (expired or taken over: stop
// working under it; Context is then cancelled) or was released. ErrLockLost when the
// validity had already run out, ErrInvalidArgument for a Hold session's
// lock (the daemon extends it) or a bad ttl; the daemon's errors.
func (l *Lease) Extend(ctx context.Context, ttl time.Duration) (bool, error) {
	if l.session != nil {
		return false, invalid("ttl", "a Hold session's lock is extended by the daemon; Extend is for Acquire's leases")
	}
	if ttl < 0 {
		p := durationpb.New(ttl)
		return false, invalid("ttl", "%ds %dns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)", p.Seconds, p.Nanos)
	}
	l.mu.Lock()
	released := l.released
	l.mu.Unlock()
	if released {
		return false, nil // nothing is held to extend
	}
	if err := l.Err(); err != nil {
		return false, err
	}
	sent := time.Now()
	reply, err := l.client.stub.Extend(l.client.Outgoing(ctx), &pb.ExtendRequest{Resource: l.resource, Value: l.value, Ttl: durationpb.New(ttl)})
	if err != nil {
		return false, fromStatus(err)
	}
	if !reply.Extended {
		l.cancel(&Error{Kind: ErrLockLost, Message: "the lock expired or was taken over"})
		return false, nil
	}
	l.setValidity(sent, reply.Validity.AsDuration())
	return true, nil
}

// Release gives the lock back and reports whether it was still held to
// the end: false means the critical section was not protected all along.
// Releasing twice is harmless.
//
// # Errors
//
// For a Hold session, an error wrapping ErrLockLost when the lock was lost
// before (Context said so); the daemon's errors; ctx's error if it ends
// before the daemon confirms (the daemon releases anyway).
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

// ExtendMany extends leases of one set (what AcquireMany returned, or some
// of them) to ttl in one call, counted from the moment it is sent, and
// reports whether every one was extended. A lease that was not (expired,
// taken over or released) is lost: its Context is cancelled and its Err
// wraps ErrLockLost; the others' validity is the shortest of the extended
// ones'.
//
// # Errors
//
// ErrInvalidArgument, before anything is sent, as ReleaseMany's, and for
// a negative ttl; the daemon's errors (a ttl out of its range among them);
// ctx's error if it ends before the daemon answers.
func (c *Client) ExtendMany(ctx context.Context, leases []*Lease, ttl time.Duration) (bool, error) {
	resources, err := setOf(leases, "ExtendMany")
	if err != nil {
		return false, err
	}
	if ttl < 0 {
		p := durationpb.New(ttl)
		return false, invalid("ttl", "%ds %dns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)", p.Seconds, p.Nanos)
	}
	sent := time.Now()
	reply, err := c.stub.ExtendMany(c.Outgoing(ctx), &pb.ExtendManyRequest{Resources: resources, Value: leases[0].value, Ttl: durationpb.New(ttl)})
	if err != nil {
		return false, fromStatus(err)
	}
	for i, l := range leases {
		if i < len(reply.Members) && reply.Members[i] {
			l.setValidity(sent, reply.Validity.AsDuration())
		} else {
			l.cancel(&Error{Kind: ErrLockLost, Message: "the lock expired, was taken over or was released"})
		}
	}
	return reply.Extended, nil
}

// setOf is the resources of leases of one set, checked for call (ExtendMany
// or ReleaseMany) as the daemon would.
func setOf(leases []*Lease, call string) ([]string, error) {
	if len(leases) < 1 || len(leases) > MaxSet {
		return nil, invalid("leases", "%d leases; 1 to %d are allowed", len(leases), MaxSet)
	}
	resources := make([]string, len(leases))
	for i, l := range leases {
		switch {
		case l == nil:
			return nil, invalid("leases", "[%d] is nil", i)
		case l.session != nil:
			return nil, invalid("leases", "[%d] is a Hold session's lock; %s is for AcquireMany's leases", i, call)
		case l.value != leases[0].value:
			return nil, invalid("leases", "they hold more than one value: %s takes leases of one AcquireMany", call)
		}
		resources[i] = l.resource
	}
	return resources, nil
}

// ReleaseMany gives back leases of one set (what AcquireMany returned, or
// some of them) in one call and reports whether every one was still held
// to the end: false when any had expired, been taken over or been released
// already. Each lease is then released, as by its own Release.
//
// # Errors
//
// ErrInvalidArgument for no lease or more than MaxSet, a nil lease or a
// Hold session's, or leases of more than one value; the daemon's errors;
// ctx's error if it ends before the daemon confirms.
func (c *Client) ReleaseMany(ctx context.Context, leases []*Lease) (bool, error) {
	resources, err := setOf(leases, "ReleaseMany")
	if err != nil {
		return false, err
	}
	for _, l := range leases {
		l.mu.Lock()
		l.released = true
		l.mu.Unlock()
		defer l.cancel(context.Canceled)
	}
	reply, err := c.stub.ReleaseMany(c.Outgoing(ctx), &pb.ReleaseManyRequest{Resources: resources, Value: leases[0].value})
	if err != nil {
		return false, fromStatus(err)
	}
	return reply.Released, nil
}
