// A fenced write with the redlockd Go client. A holder writes under its
// lock, then stalls (a GC pause, a frozen VM) past its lock's validity; a
// second worker takes the lock and writes; the stalled holder wakes and
// writes again. The store remembers the largest fencing token it has seen
// and refuses the stale one, and the stalled holder's release reports that
// its lock was not held to the end.
//
//	bash examples/go/run.sh          # against a throwaway daemon, plain and --secure
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

// fencedStore refuses a write whose token is older than one it has taken.
type fencedStore struct {
	mu      sync.Mutex
	highest uint64
	rows    []string
}

var errStale = errors.New("stale fencing token")

func (s *fencedStore) write(token uint64, row string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.highest {
		return fmt.Errorf("%w: %d < %d", errStale, token, s.highest)
	}
	s.highest, s.rows = token, append(s.rows, row)
	return nil
}

func main() {
	ctx := context.Background()
	c, err := redlockd.Dial(ctx, "") // REDLOCKD_ADDR, REDLOCKD_TOKEN and the REDLOCKD_CA/CERT/KEY files
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	store, resource := &fencedStore{}, "examples/go-ledger"

	// The first holder keeps its lock by hand, with a short TTL.
	stalled, err := c.Acquire(ctx, resource, redlockd.TTL(500*time.Millisecond), redlockd.Wait(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	if err := store.write(stalled.FencingToken(), "first"); err != nil {
		log.Fatal(err)
	}

	// While it stalls, a second worker waits for the lock, holds it with a
	// Hold session (the daemon extends it; ctx ends if it is lost) and writes.
	var second uint64
	err = c.Do(ctx, resource, func(ctx context.Context, l *redlockd.Lease) error {
		second = l.FencingToken()
		return store.write(second, "second")
	}, redlockd.Wait(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}

	// The first holder wakes up, its lock long gone, and writes: refused.
	if stalled.Err() == nil {
		log.Fatal("the stalled lease's context was not cancelled when its validity ran out")
	}
	if err := store.write(stalled.FencingToken(), "stale"); !errors.Is(err, errStale) {
		log.Fatalf("the store took a stale write: %v", err)
	}
	// A failed release is reported, never swallowed.
	if held, err := stalled.Release(ctx); held || err != nil {
		log.Fatalf("the stalled holder's release: held to the end %v, %v", held, err)
	}
	fmt.Printf("ok: tokens %d < %d; the stale write was refused and its release said the lock was lost; rows %v\n",
		stalled.FencingToken(), second, store.rows)
}
