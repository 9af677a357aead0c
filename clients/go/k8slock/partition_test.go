package k8slock_test

// A leader cut off from the daemon: its renewals fail, its lease runs out,
// and another candidate takes the lock. Leading's context (the lease's
// validity) ends the leadership before the other starts, whatever
// client-go's timing; client-go's own context and OnStoppedLeading do too
// when LeaseDuration > RenewDeadline + RetryPeriod.

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
	"github.com/redlockd/redlockd/clients/go/k8slock"
	"k8s.io/client-go/tools/leaderelection"
)

// relay forwards TCP connections to the daemon until cut: then it closes
// them all and accepts no more, as a network partition would.
type relay struct {
	listener net.Listener
	mu       sync.Mutex
	conns    []net.Conn
}

func newRelay(t *testing.T, target string) *relay {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{listener: listener}
	go func() {
		for {
			in, err := listener.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, in, out)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	t.Cleanup(r.cut)
	return r
}

func (r *relay) cut() {
	r.listener.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, conn := range r.conns {
		conn.Close()
	}
}

// span is when a candidate's leadership started and ended.
type span struct {
	started, ended, stopped time.Time
	term                    uint64
	cause                   error
}

type times struct {
	mu sync.Mutex
	s  span
}

func (ts *times) get() span {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.s
}

// timing is client-go's LeaseDuration, RenewDeadline and RetryPeriod.
type timing struct{ lease, renew, retry time.Duration }

// elect runs RunOrDie for l until ctx ends, noting its leadership in ts.
func elect(ctx context.Context, l *k8slock.Lock, at timing, ts *times, led chan<- struct{}) {
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: l, LeaseDuration: at.lease, RenewDeadline: at.renew, RetryPeriod: at.retry,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				leading, term := l.Leading(ctx)
				ts.mu.Lock()
				ts.s.started, ts.s.term = time.Now(), term
				ts.mu.Unlock()
				led <- struct{}{}
				<-leading.Done()
				ts.mu.Lock()
				ts.s.ended, ts.s.cause = time.Now(), context.Cause(leading)
				ts.mu.Unlock()
			},
			OnStoppedLeading: func() {
				ts.mu.Lock()
				ts.s.stopped = time.Now()
				ts.mu.Unlock()
			},
		},
	})
}

func TestALeaderCutOffFromTheDaemonStopsBeforeAnotherLeads(t *testing.T) {
	t.Run("LeaseDurationAboveRenewDeadlinePlusRetryPeriod", func(t *testing.T) {
		first, second := partition(t, timing{leaseDuration, renewDeadline, retryPeriod})
		if first.stopped.IsZero() || !first.stopped.Before(second.started) {
			t.Errorf("pod-a's client-go (stopped %v) did not stop leading before pod-b led", first.stopped)
		}
	})
	// client-go slower than the lease (2.3 s > 2 s): Leading's context ends
	// first, at the lease's end, and before pod-b leads.
	t.Run("LeaseDurationBelowRenewDeadlinePlusRetryPeriod", func(t *testing.T) {
		first, _ := partition(t, timing{2 * time.Second, 1800 * time.Millisecond, retryPeriod})
		if !errors.Is(first.cause, redlockd.ErrLockLost) || !first.ended.Before(first.stopped) {
			t.Errorf("pod-a's Leading context ended with %v at %v, client-go stopped at %v: want the lease's end first", first.cause, first.ended, first.stopped)
		}
	})
}

// partition elects pod-a, then pod-b runs too, then pod-a is cut off from
// the daemon: pod-a's Leading context must have ended before pod-b leads,
// with a larger term. It returns both leaderships.
func partition(t *testing.T, at timing) (span, span) {
	r := newRelay(t, os.Getenv("REDLOCKD_ADDR"))
	cut, err := redlockd.Dial(context.Background(), r.listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	name := resource()
	a, b := newLock(t, cut, name, "pod-a"), newLock(t, dial(t), name, "pod-b")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var ta, tb times
	ledA, ledB := make(chan struct{}, 1), make(chan struct{}, 1)
	wg.Go(func() { elect(ctx, a, at, &ta, ledA) })
	<-ledA
	wg.Go(func() { elect(ctx, b, at, &tb, ledB) })
	time.Sleep(at.retry) // pod-a renews at least once more
	partitioned := time.Now()
	r.cut()
	select {
	case <-ledB:
	case <-time.After(2 * at.lease):
		t.Fatalf("pod-b did not lead within %v of pod-a's partition", 2*at.lease)
	}
	for deadline := time.Now().Add(at.renew + at.retry + time.Second); ta.get().stopped.IsZero() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // pod-a's client-go stops, when it does
	}
	first, second := ta.get(), tb.get()
	since := func(at time.Time) time.Duration { return at.Sub(partitioned).Round(time.Millisecond) }
	t.Logf("after the partition: pod-a's Leading ended at +%v (%v), client-go stopped at +%v; pod-b led at +%v",
		since(first.ended), first.cause, since(first.stopped), since(second.started))
	if first.ended.IsZero() || !first.ended.Before(second.started) {
		t.Errorf("pod-a's Leading context (ended %v) did not end before pod-b led", first.ended)
	}
	if second.term <= first.term {
		t.Errorf("pod-b's term %d is not above pod-a's %d", second.term, first.term)
	}
	return first, second
}
