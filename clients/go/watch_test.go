package redlockd_test

// Watch: who holds a lock, then each change, against the real daemon.

import (
	"context"
	"errors"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
)

func TestClientWatchNamesTheHolderAndEachChange(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	watching, stop := context.WithCancel(ctx)
	defer stop()
	changes := make(chan *pb.WatchResponse, 16)
	go func() {
		defer close(changes)
		for change, err := range c.Watch(watching, name) {
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					t.Error(err)
				}
				return
			}
			changes <- change
		}
	}()
	next := func(want pb.WatchEvent) *pb.WatchResponse {
		t.Helper()
		select {
		case change := <-changes:
			if change.Event != want {
				t.Fatalf("want %v, got %v", want, change)
			}
			return change
		case <-time.After(5 * time.Second):
			t.Fatalf("no %v within 5 s", want)
			return nil
		}
	}
	if now := next(pb.WatchEvent_WATCH_EVENT_CURRENT); now.Held {
		t.Fatalf("held before anyone took it: %v", now)
	}
	l, err := c.Acquire(ctx, name, redlockd.Owner("watched-owner"))
	if err != nil {
		t.Fatal(err)
	}
	acquired := next(pb.WatchEvent_WATCH_EVENT_ACQUIRED)
	if !acquired.Held || acquired.Holder.GetOwner() != "watched-owner" || acquired.Holder.GetFencingToken() < l.FencingToken() {
		t.Fatalf("acquired: %v (the lease's token %d)", acquired, l.FencingToken())
	}
	mustRelease(t, l)
	if released := next(pb.WatchEvent_WATCH_EVENT_RELEASED); released.Held || released.Holder.GetOwner() != "watched-owner" {
		t.Fatalf("released: %v", released)
	}
	if _, err := c.Acquire(ctx, name, redlockd.TTL(500*time.Millisecond), redlockd.Owner("left-to-expire")); err != nil {
		t.Fatal(err)
	}
	next(pb.WatchEvent_WATCH_EVENT_ACQUIRED)
	// Within the TTL and a watch period.
	if expired := next(pb.WatchEvent_WATCH_EVENT_EXPIRED); expired.Holder.GetOwner() != "left-to-expire" {
		t.Fatalf("expired: %v", expired)
	}
	stop()
	for range changes {
	}
}

func TestClientAWatchOfABadResourceYieldsTheErrorOnly(t *testing.T) {
	c := dial(t)
	yielded := 0
	for change, err := range c.Watch(context.Background(), "") {
		yielded++
		if change != nil || !errors.Is(err, redlockd.ErrInvalidArgument) {
			t.Fatalf("%v %v", change, err)
		}
	}
	if yielded != 1 {
		t.Fatalf("yielded %d times", yielded)
	}
}
