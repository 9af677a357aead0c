package redlockd

// lifetime: how long something held is guaranteed (a lease, a leadership)
// and the context that ends when it no longer is: at a loss someone
// reports, at a release, or when the validity runs out with nobody saying
// so — the client's own deadline.

import (
	"context"
	"errors"
	"sync"
	"time"
)

type lifetime struct {
	mu         sync.Mutex
	validUntil time.Time
	watchdog   *time.Timer
	cause      error
	ranOut     string // the loss's message when the validity runs out

	ctx  context.Context
	stop context.CancelFunc
}

// begin starts the lifetime: valid for validity from `from`.
func (t *lifetime) begin(from time.Time, validity time.Duration, ranOut string) {
	t.ctx, t.stop = context.WithCancel(context.Background())
	t.ranOut = ranOut
	t.setValidity(from, validity)
}

// setValidity moves validUntil, and the watchdog that cancels the context
// when it passes: something whose validity ran out is no longer held,
// whether or not anyone said so.
func (t *lifetime) setValidity(from time.Time, validity time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cause != nil {
		return // a context once cancelled stays cancelled
	}
	t.validUntil = from.Add(validity)
	if t.watchdog == nil {
		t.watchdog = time.AfterFunc(time.Until(t.validUntil), t.expire)
	} else {
		t.watchdog.Reset(time.Until(t.validUntil))
	}
}

func (t *lifetime) expire() {
	t.cancel(&Error{Kind: ErrLockLost, Message: t.ranOut})
}

// cancel ends the context with cause (the first cause stays).
func (t *lifetime) cancel(cause error) {
	t.mu.Lock()
	if t.cause == nil {
		t.cause = cause
	}
	if t.watchdog != nil {
		t.watchdog.Stop()
	}
	t.mu.Unlock()
	t.stop()
}

func (t *lifetime) until() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.validUntil
}

func (t *lifetime) remaining() time.Duration {
	if left := time.Until(t.until()); left > 0 && t.err() == nil {
		return left
	}
	return 0
}

func (t *lifetime) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cause
}

// lostCause is the cause when it says the thing held was lost.
func (t *lifetime) lostCause() error {
	if err := t.err(); errors.Is(err, ErrLockLost) {
		return err
	}
	return nil
}
