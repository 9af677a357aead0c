// A fenced write with the redlockd Go client: two holders take turns on one
// lock, and a store that remembers the largest fencing token it has seen
// refuses a write from a holder whose lock has been superseded.
//
//	bash examples/go/run.sh          # against a throwaway daemon
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

// fencedStore rejects writes carrying a token older than one it took.
type fencedStore struct {
	mu      sync.Mutex
	highest uint64
	rows    []string
}

func (s *fencedStore) write(token uint64, row string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.highest {
		return false // a stale holder: its lock was superseded
	}
	s.highest, s.rows = token, append(s.rows, row)
	return true
}

func main() {
	ctx := context.Background()
	store := &fencedStore{}
	c, err := redlockd.Dial(ctx, "") // REDLOCKD_ADDR (+ REDLOCKD_TOKEN and TLS files, if set)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	const resource = "examples/ledger"

	var first uint64
	// A session: its context is cancelled if the lock is lost; released after.
	err = c.Do(ctx, resource, func(ctx context.Context, l *redlockd.Lease) error {
		first = l.FencingToken()
		if !store.write(first, "first") {
			return errors.New("the store refused a live holder")
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	l, err := c.Acquire(ctx, resource)
	if err != nil || l.FencingToken() <= first {
		log.Fatalf("second holder: %v %v", l, err)
	}
	if _, err := c.Acquire(ctx, resource); !errors.Is(err, redlockd.ErrNotAcquired) {
		log.Fatalf("a second holder got the lock: %v", err)
	}
	if !store.write(l.FencingToken(), "second") {
		log.Fatal("the store refused a live holder")
	}
	l.Release(ctx)

	// The first holder, paused past its lock, comes back: the store says no.
	if store.write(first, "stale") {
		log.Fatal("the store took a stale token")
	}
	fmt.Printf("ok: tokens %d < %d; the stale write was refused\n", first, l.FencingToken())
}
