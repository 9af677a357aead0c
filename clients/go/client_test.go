package redlockd_test

// The tests run against a real daemon and five real masters, started by
// scripts/with-dev-daemon: test.sh runs each group against a daemon of its
// own (TestClient*, TestKillsMasters*, TestSecure*). Acquire, Extend,
// Release, arguments and fencing tokens are here; Hold and Do in
// session_test.go; killed masters and TLS in faults_test.go.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func dial(t *testing.T) *redlockd.Client {
	t.Helper()
	if os.Getenv("REDLOCKD_ADDR") == "" {
		t.Fatal("REDLOCKD_ADDR is not set: run the tests through clients/go/test.sh")
	}
	c, err := redlockd.Dial(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// resource is a fresh name under "examples/", the prefix the secure
// daemon's tenant may lock.
func resource() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "examples/go-" + hex.EncodeToString(b)
}

// mustRelease releases l and fails unless it was held to the end.
func mustRelease(t *testing.T, l *redlockd.Lease) {
	t.Helper()
	if held, err := l.Release(context.Background()); !held || err != nil {
		t.Fatalf("release of %v: held to the end %v, %v", l, held, err)
	}
}

func TestClientASecondHolderIsRefusedAndTheNextGetsALargerToken(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	sent := time.Now()
	first, err := c.Acquire(ctx, name, redlockd.TTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// Validity counts from the send: at most the TTL after it.
	if v := first.ValidUntil(); !v.After(time.Now()) || v.After(sent.Add(10*time.Second)) {
		t.Fatalf("valid until %v, sent at %v", v, sent)
	}
	_, err = c.Acquire(ctx, name)
	var refused *redlockd.Error
	if !errors.Is(err, redlockd.ErrNotAcquired) || !errors.As(err, &refused) || len(refused.Nodes) != 5 {
		t.Fatalf("a second holder: %#v", err)
	}
	if refused.Nodes[0] != "held by another owner" || !strings.Contains(refused.Message, "TAKEN") {
		t.Fatalf("what the masters said: %v, %q", refused.Nodes, refused.Message)
	}
	view, err := c.Inspect(ctx, name)
	if err != nil || !view.Held || view.Quorum != 3 {
		t.Fatalf("inspect: %v %v", view, err)
	}
	// Who holds it, as a majority of the masters recorded it.
	if view.Holder == nil || view.Holder.Daemon == "" || view.Holder.FencingToken < first.FencingToken() {
		t.Fatalf("inspect's holder: %v (the lease's token %d)", view.Holder, first.FencingToken())
	}
	if ok, err := first.Extend(ctx, 20*time.Second); !ok || err != nil {
		t.Fatalf("extend: %v %v", ok, err)
	}
	if first.Remaining() <= 10*time.Second {
		t.Fatalf("after extending to 20 s, %v remain", first.Remaining())
	}
	mustRelease(t, first)
	if first.Context().Err() == nil || first.Err() != context.Canceled {
		t.Fatalf("a released lease's context: %v", first.Err())
	}
	second, err := c.Acquire(ctx, name)
	if err != nil || second.FencingToken() <= first.FencingToken() {
		t.Fatalf("second: %v %v", second, err)
	}
	mustRelease(t, second)
	if held, err := second.Release(ctx); held || err != nil {
		t.Fatalf("a second release: %v %v", held, err)
	}
}

func TestClientTheLockValueIsNeverPrinted(t *testing.T) {
	c, ctx := dial(t), context.Background()
	l, err := c.Acquire(ctx, resource())
	if err != nil {
		t.Fatal(err)
	}
	defer mustRelease(t, l)
	for _, shown := range []string{l.String(), l.GoString()} {
		if !strings.Contains(shown, "fencing_token") || strings.Contains(shown, "value") {
			t.Fatalf("%s", shown)
		}
	}
}

func TestClientAnAcquiredLeasesContextEndsWhenItsValidityRunsOut(t *testing.T) {
	c, ctx := dial(t), context.Background()
	l, err := c.Acquire(ctx, resource(), redlockd.TTL(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	arrived := time.Now()
	ended := make(chan time.Time, 1)
	context.AfterFunc(l.Context(), func() { ended <- time.Now() })
	var at time.Time
	select {
	case at = <-ended:
	case <-time.After(2 * time.Second):
		t.Fatal("the context outlived the validity")
	}
	// Before ValidUntil, by the margin (100 ms, at most a quarter of the
	// validity): the holder is told while the lock is still its own. (On a
	// busy host the reply may come with less than the margin left, the
	// validity counting from the send: then the context ends at once.)
	early := l.ValidUntil().Sub(at)
	if arrived.Before(l.ValidUntil().Add(-100*time.Millisecond)) && (early <= 0 || early > 100*time.Millisecond) {
		t.Fatalf("ended %v before ValidUntil", early)
	}
	if !errors.Is(l.Err(), redlockd.ErrLockLost) {
		t.Fatalf("cause %v", l.Err())
	}
	if ok, err := l.Extend(ctx, time.Second); ok || !errors.Is(err, redlockd.ErrLockLost) {
		t.Fatalf("extending a run-out lease: %v %v", ok, err)
	}
	time.Sleep(600 * time.Millisecond) // the TTL is over on the masters too
	if held, err := l.Release(ctx); held || err != nil {
		t.Fatalf("releasing an expired lock says it was not held to the end: %v %v", held, err)
	}
}

func TestClientTokensAbove2To53AreExact(t *testing.T) {
	c, ctx := dial(t), context.Background()
	// A token is counter*16 + the index of a master (src/redlock/quorum.rs),
	// and the masters keep counters below 2^53 (src/redis/scripts.rs): with
	// this counter the next tokens are near 2^57, far past 2^53 where a
	// float64 (a JSON number) stops being exact.
	// Every bucket's counter, so the resource's bucket is among them.
	counter := uint64(1)<<53 - 1000
	for _, port := range masterPorts() {
		setEveryFence(t, port, counter)
	}
	name := resource()
	l, err := c.Acquire(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	token := l.FencingToken()
	mustRelease(t, l)
	if token/16 != counter+1 || token%16 >= 5 || token <= 1<<56 {
		t.Fatalf("token %d for counter %d", token, counter)
	}
	// Tokens rise per resource (its bucket's counter), not across resources.
	next, err := c.Acquire(ctx, name)
	if err != nil || next.FencingToken() <= token {
		t.Fatalf("the next token %v after %d: %v", next, token, err)
	}
	mustRelease(t, next)
}

func TestClientBadArgumentsFailBeforeAnythingIsSentInTheDaemonsWords(t *testing.T) {
	ctx := context.Background()
	nowhere, err := redlockd.Dial(ctx, "127.0.0.1:1") // nothing listens: a sent call would fail otherwise
	if err != nil {
		t.Fatal(err)
	}
	defer nowhere.Close()
	for _, bad := range []struct {
		call func() error
		says string
	}{
		{func() error { _, err := nowhere.Acquire(ctx, ""); return err },
			"invalid resource: is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8"},
		{func() error { _, err := nowhere.Hold(ctx, strings.Repeat("x", 257)); return err },
			"invalid resource: is 257 bytes long; it must be 1 to 256 bytes of printable UTF-8"},
		{func() error { _, err := nowhere.Acquire(ctx, "a\nb"); return err },
			`invalid resource: contains the control character '\n'; only printable UTF-8 is allowed`},
		{func() error { _, err := nowhere.Acquire(ctx, "a", redlockd.Owner("tab\there")); return err },
			`invalid owner: contains the control character '\t'; only printable UTF-8 is allowed`},
		{func() error { _, err := nowhere.Acquire(ctx, "a", redlockd.TTL(-1500*time.Millisecond)); return err },
			"invalid ttl: -1s -500000000ns is not a valid non-negative duration (seconds >= 0, 0 <= nanos < 1e9)"},
		{func() error { _, err := nowhere.Hold(ctx, "a", redlockd.Wait(-time.Second)); return err },
			"invalid wait: -1s 0ns is not a valid non-negative duration"},
		{func() error {
			return nowhere.Do(ctx, "a", func(context.Context, *redlockd.Lease) error { return nil }, redlockd.MaxHold(-time.Second))
		}, "invalid max_hold: -1s 0ns is not a valid non-negative duration"},
		{func() error { _, err := redlockd.Dial(ctx, "dns:///%zz"); return err },
			`invalid addr: "dns:///%zz" is not a gRPC target`},
	} {
		err := bad.call()
		if !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("want %q, got %v", bad.says, err)
		}
	}
}

func TestClientRangesOnlyTheDaemonKnowsComeBackNamingTheFieldAndTheRange(t *testing.T) {
	c, ctx := dial(t), context.Background()
	for _, bad := range []struct {
		call func() error
		says string
	}{
		{func() error { _, err := c.Acquire(ctx, resource(), redlockd.TTL(time.Millisecond)); return err },
			"invalid ttl: 1ms is outside the allowed range [250ms, 1m]"},
		{func() error { _, err := c.Acquire(ctx, resource(), redlockd.Wait(61*time.Second)); return err },
			"invalid wait: 1m 1s is above the allowed maximum of 1m"},
		{func() error { _, err := c.Hold(ctx, resource(), redlockd.MaxHold(0)); return err },
			"invalid max_hold: 0s is outside the allowed range (0, "},
		{func() error { _, err := c.Hold(ctx, resource(), redlockd.TTL(0)); return err },
			"invalid ttl: 0s is outside the allowed range [250ms, 1m]"},
	} {
		err := bad.call()
		if !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("want %q, got %v", bad.says, err)
		}
	}
}

func TestClientAContextDeadlineShorterThanTheWaitEndsItWithDeadlineExceeded(t *testing.T) {
	c, name := dial(t), resource()
	l, err := c.Acquire(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer mustRelease(t, l)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	started := time.Now()
	if _, err := c.Acquire(ctx, name, redlockd.Wait(5*time.Second)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a 300 ms deadline on a 5 s wait: %v", err)
	}
	if took := time.Since(started); took > 2*time.Second {
		t.Fatalf("the deadline ended the wait after %v", took)
	}
}

func TestClientSharedLeasesHoldTogetherAndAWriterAfterThemGetsALargerToken(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	var readers []*redlockd.Lease
	for i := 0; i < 2; i++ {
		r, err := c.Acquire(ctx, name, redlockd.TTL(10*time.Second), redlockd.Shared())
		if err != nil {
			t.Fatalf("shared acquire %d: %v", i+1, err)
		}
		if !r.Shared() || !strings.Contains(r.String(), "shared") {
			t.Fatalf("a shared lease says %v (shared %v)", r, r.Shared())
		}
		readers = append(readers, r)
	}
	if view, err := c.Inspect(ctx, name); err != nil || !view.Held || view.Readers != 2 {
		t.Fatalf("inspect beside two readers: %v %v", view, err)
	}
	if l, err := c.Acquire(ctx, name, redlockd.TTL(10*time.Second)); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("an exclusive acquire beside two readers: %v %v", l, err)
	}
	for _, r := range readers {
		mustRelease(t, r)
	}
	writer, err := c.Acquire(ctx, name, redlockd.TTL(10*time.Second))
	if err != nil {
		t.Fatalf("the writer after the readers left: %v", err)
	}
	defer mustRelease(t, writer)
	if writer.Shared() {
		t.Fatalf("an exclusive lease says it is shared: %v", writer)
	}
	for _, r := range readers {
		if writer.FencingToken() <= r.FencingToken() {
			t.Fatalf("the writer's token %d is not above the reader's %d", writer.FencingToken(), r.FencingToken())
		}
	}
}

func TestClientPermitsOfTwoTakeTwoSlotsRefuseAThirdAndRefuseAnotherNumber(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	permit := func() (*redlockd.Lease, error) {
		return c.Acquire(ctx, name, redlockd.TTL(10*time.Second), redlockd.Permits(2))
	}
	first, err := permit()
	if err != nil {
		t.Fatalf("the first of two permits: %v", err)
	}
	second, err := permit()
	if err != nil {
		t.Fatalf("the second of two permits: %v", err)
	}
	defer mustRelease(t, second)
	if first.Permits() != 2 || second.Permits() != 2 || first.Slot()+second.Slot() != 1 || first.Slot() == second.Slot() {
		t.Fatalf("two permits of two: slots %d and %d, permits %d and %d", first.Slot(), second.Slot(), first.Permits(), second.Permits())
	}
	if want := fmt.Sprintf("slot: %d of 2 permits", first.Slot()); !strings.Contains(first.String(), want) {
		t.Fatalf("a permit shows %v, not %q", first, want)
	}
	if view, err := c.Inspect(ctx, name); err != nil || view.Permits != 2 || view.PermitsOut != 2 {
		t.Fatalf("inspect with two permits of two out: %v %v", view, err)
	}
	if l, err := permit(); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("a third permit of two: %v %v", l, err)
	}
	l, err := c.Acquire(ctx, name, redlockd.Permits(3))
	if !errors.Is(err, redlockd.ErrFailedPrecondition) || status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "2 permits") {
		t.Fatalf("three permits while permits of two are out: %v %v (code %v)", l, err, status.Code(err))
	}
	mustRelease(t, first)
	third, err := permit()
	if err != nil {
		t.Fatalf("a permit after one was released: %v", err)
	}
	defer mustRelease(t, third)
	if third.Slot() != first.Slot() || third.FencingToken() <= first.FencingToken() {
		t.Fatalf("the third permit: slot %d token %d; the released one: slot %d token %d",
			third.Slot(), third.FencingToken(), first.Slot(), first.FencingToken())
	}
}

func TestClientAcquiresWithOneReentrancyKeyShareTheLockUntilTheLastRelease(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	key := "job-" + name
	outer, err := c.Acquire(ctx, name, redlockd.TTL(10*time.Second), redlockd.ReentrancyKey(key))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := c.Acquire(ctx, name, redlockd.TTL(10*time.Second), redlockd.ReentrancyKey(key))
	if err != nil {
		t.Fatalf("the same key was refused the lock it holds: %v", err)
	}
	if inner.FencingToken() != outer.FencingToken() {
		t.Fatalf("reentered with token %d, held with %d", inner.FencingToken(), outer.FencingToken())
	}
	if strings.Contains(fmt.Sprintf("%v %#v", inner, inner), key) {
		t.Fatalf("a lease shows its reentrancy key: %v", inner)
	}
	for _, opts := range [][]redlockd.LockOption{nil, {redlockd.ReentrancyKey("another job")}} {
		if l, err := c.Acquire(ctx, name, opts...); !errors.Is(err, redlockd.ErrNotAcquired) {
			t.Fatalf("without the key while held twice: %v %v", l, err)
		}
	}
	mustRelease(t, inner)
	if view, err := c.Inspect(ctx, name); err != nil || !view.Held {
		t.Fatalf("released at the first of two releases: %v %v", view, err)
	}
	if l, err := c.Acquire(ctx, name); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("without the key while held once: %v %v", l, err)
	}
	mustRelease(t, outer)
	after, err := c.Acquire(ctx, name)
	if err != nil {
		t.Fatalf("still held after both releases: %v", err)
	}
	defer mustRelease(t, after)
	if after.FencingToken() <= outer.FencingToken() {
		t.Fatalf("the next token %d is not above %d", after.FencingToken(), outer.FencingToken())
	}
}

func TestClientPermitsAndReentrancyKeysAreCheckedBeforeSending(t *testing.T) {
	ctx := context.Background()
	nowhere, err := redlockd.Dial(ctx, "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer nowhere.Close()
	for _, bad := range []struct {
		opts []redlockd.LockOption
		says string
	}{
		{[]redlockd.LockOption{redlockd.Permits(-1)}, "invalid permits: -1 is not a number of permits"},
		{[]redlockd.LockOption{redlockd.Permits(2), redlockd.Shared()}, "invalid permits: a shared lock takes no permits"},
		{[]redlockd.LockOption{redlockd.ReentrancyKey(strings.Repeat("é", 64) + "k")},
			"invalid reentrancy_key: is 129 bytes; at most 128 are allowed"},
		{[]redlockd.LockOption{redlockd.ReentrancyKey("half \xff")}, "invalid reentrancy_key: is not valid UTF-8"},
	} {
		_, acquired := nowhere.Acquire(ctx, "a", bad.opts...)
		_, held := nowhere.Hold(ctx, "a", bad.opts...)
		for _, err := range []error{acquired, held} {
			if !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), bad.says) {
				t.Errorf("want %q, got %v", bad.says, err)
			}
		}
	}
}
