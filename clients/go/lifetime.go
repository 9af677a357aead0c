package redlockd

// lifetime: how long something held is guaranteed (a lease, a leadership)
// and the context that ends when it no longer is: at a loss someone
// reports, at a release, or, with nobody saying so, lostMargin before the
// validity runs out — the client's own deadline, on its own timer
// (docs/design.md#sessions).

import (
	"context"
	"errors"
	"sync"
	"time"
)

// lostMargin is how long before validUntil the client's own timer ends
// the context when no extension came: 100 ms, or a quarter of the validity
// when that is less. It covers a message's way from the daemon and a late
// timer on a busy host, so that the holder is told before the validity
// ends; it is below the daemon's own lead (LOST at 3 x node_timeout, 150 ms
// by default, before the end: docs/design.md#sessions), so the daemon's
// LOST, which says why, normally comes first.
const lostMargin = 100 * time.Millisecond

// margin is lostMargin, or a quarter of validity when that is less.
func margin(validity time.Duration) time.Duration {
	return min(lostMargin, max(validity, 0)/4)
}

type lifetime struct {
	mu         sync.Mutex
	validUntil time.Time
	lostAt     time.Time // when the watchdog ends the context: margin before validUntil
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
// margin(validity) before it passes: something whose validity is about to
// run out is no longer held, whether or not anyone said so.
func (t *lifetime) setValidity(from time.Time, validity time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cause != nil {
		return // a context once cancelled stays cancelled
	}
	t.validUntil = from.Add(validity)
	t.lostAt = t.validUntil.Add(-margin(validity))
	if t.watchdog == nil {
		t.watchdog = time.AfterFunc(time.Until(t.lostAt), t.expire)
	} else {
		t.watchdog.Reset(time.Until(t.lostAt))
	}
}

func (t *lifetime) expire() {
	t.mu.Lock()
	if left := time.Until(t.lostAt); left > 0 && t.cause == nil {
		// Moved on by an extension while this fired: watch the new one.
		t.watchdog.Reset(left)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
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
