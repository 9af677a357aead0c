package redlockd

// Acquire (a lock the caller keeps alive), AcquireMany (several at once),
// Do (a function run under a Hold session) and the retry of a wait that the
// daemon cut short.

import (
	"context"
	"math/rand"
	"time"

	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Acquire takes the lock on resource, trying for up to Wait (default: one
// attempt). The caller keeps it with Extend and gives it back with
// Release; its Context is cancelled when its validity runs out.
//
// # Errors
//
// ErrNotAcquired (errors.Is) when someone else kept the lock all along:
// contention, not a failure. ErrInvalidArgument for a bad option, before
// anything is sent when the client can tell. ErrFailedPrecondition when
// permits of another number are out (Permits), or the ReentrancyKey holds
// the lock as another kind. ErrUnavailable when no
// quorum could be reached: a wait the daemon cuts short with UNAVAILABLE
// is tried again, with jitter, until the wait runs out.
func (c *Client) Acquire(ctx context.Context, resource string, opts ...LockOption) (*Lease, error) {
	s, err := settingsOf(resource, 0, opts)
	if err != nil {
		return nil, err
	}
	retry := newRetry(s.wait)
	for {
		sent := time.Now() // the client rule: validity counts from here
		request := &pb.AcquireRequest{Resource: resource, Owner: s.owner, Ttl: durationpb.New(s.ttl), Mode: s.mode(),
			Permits: uint32(s.permits), ReentrancyKey: s.key}
		if left := retry.left(); left > 0 {
			request.Wait = durationpb.New(left)
		}
		if s.lockDelay > 0 {
			request.LockDelay = durationpb.New(s.lockDelay)
		}
		reply, err := c.stub.Acquire(c.Outgoing(ctx), request)
		if err != nil {
			if err = retry.after(ctx, fromStatus(err)); err == nil {
				continue
			}
			return nil, err
		}
		if !reply.Acquired {
			return nil, notAcquired(reply.Reason.String(), reply.Nodes)
		}
		return newLease(c, reply.Lease, sent), nil
	}
}

// AcquireMany takes the locks on several resources at once, all or none,
// trying for up to Wait (default: one attempt): 1 to MaxSet names, repeats
// dropped. It returns one Lease per resource, sorted by resource; they
// share one value and validity, and each has its own fencing token
// (strictly increasing per resource, like any lock's). Each is an ordinary
// Lease of Acquire's kind: Extend and Release it on its own, or give several
// back in one call with ReleaseMany. Waiting never holds part of the set, so
// two callers with overlapping sets cannot deadlock. TTL, Wait and Owner
// apply; a set's locks are exclusive.
//
// # Errors
//
// ErrNotAcquired (errors.Is) when any member stayed with someone else all
// along: then none is held. ErrInvalidArgument for bad resources or
// options (Shared, Permits or ReentrancyKey among them), before anything is
// sent when the client can tell. ErrUnavailable as Acquire's, retried the
// same way.
func (c *Client) AcquireMany(ctx context.Context, resources []string, opts ...LockOption) ([]*Lease, error) {
	s, err := setSettingsOf(resources, opts)
	if err != nil {
		return nil, err
	}
	retry := newRetry(s.wait)
	for {
		sent := time.Now() // the client rule: validity counts from here
		request := &pb.AcquireManyRequest{Resources: resources, Owner: s.owner, Ttl: durationpb.New(s.ttl)}
		if left := retry.left(); left > 0 {
			request.Wait = durationpb.New(left)
		}
		reply, err := c.stub.AcquireMany(c.Outgoing(ctx), request)
		if err != nil {
			if err = retry.after(ctx, fromStatus(err)); err == nil {
				continue
			}
			return nil, err
		}
		if !reply.Acquired {
			return nil, notAcquired(reply.Reason.String(), reply.Nodes)
		}
		leases := make([]*Lease, len(reply.Leases))
		for i, lease := range reply.Leases {
			leases[i] = newLease(c, lease, sent)
		}
		return leases, nil
	}
}

// Do runs fn while a Hold session holds the lock on resource, and releases
// it when fn returns or panics. fn's context is cancelled the moment the
// lock is lost.
//
// # Errors
//
// Hold's errors; else fn's error; else an error wrapping ErrLockLost when
// the lock was lost (or not held to the end) meanwhile, even though fn
// succeeded — a failed release is reported, never swallowed.
func (c *Client) Do(ctx context.Context, resource string, fn func(context.Context, *Lease) error, opts ...LockOption) (err error) {
	l, err := c.Hold(ctx, resource, opts...)
	if err != nil {
		return err
	}
	defer func() {
		held, released := l.Release(context.Background())
		if err != nil {
			return
		}
		if released != nil {
			err = released
		} else if !held {
			err = &Error{Kind: ErrLockLost, Message: "the lock was not held to the end of the session"}
		}
	}()
	return fn(l.Context(), l)
}

// retry paces the attempts of one wait: jittered pauses from 50 ms,
// doubling up to 1 s, while they fit before the wait runs out.
type retry struct {
	wait     time.Duration
	deadline time.Time
	pause    time.Duration
	retried  bool
}

func newRetry(wait time.Duration) *retry {
	return &retry{wait: wait, deadline: time.Now().Add(wait), pause: 50 * time.Millisecond}
}

// left is what remains of the wait: all of it for the first attempt (so
// the daemon judges the wait the caller asked for), the rest after.
func (r *retry) left() time.Duration {
	if !r.retried {
		return r.wait
	}
	return time.Until(r.deadline)
}

// after pauses after err and returns nil when the call is to be tried
// again: err is UNAVAILABLE and the pause ends before the wait does.
// Otherwise it returns err (or ctx's error).
func (r *retry) after(ctx context.Context, err error) error {
	pause := r.pause/2 + time.Duration(rand.Int63n(int64(r.pause/2)+1))
	if r.pause *= 2; r.pause > time.Second {
		r.pause = time.Second
	}
	if !isUnavailable(err) || !time.Now().Add(pause).Before(r.deadline) {
		return err
	}
	r.retried = true
	timer := time.NewTimer(pause)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
