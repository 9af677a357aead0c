package k8slock_test

// client-go's RunOrDie and a controller-runtime Manager electing through
// k8slock, each candidate a real OS process, against a real daemon and
// five real masters (scripts/with-dev-daemon, through ../test.sh): one
// leader at a time (the checker, checker_test.go), and a takeover within
// 2 x LeaseDuration after kill -9 of the leader.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
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

// resource is a fresh resource name.
func resource() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "k8slock/" + hex.EncodeToString(b)
}

// takeover waits for the next leader after a kill -9 of the leader at
// `dead` (the first `from` events), logs how long the takeover took and
// fails unless it was within 2 x LeaseDuration.
func takeover(t *testing.T, e *election, from int, dead time.Time) (event, int) {
	t.Helper()
	next, i := e.leader(from, 4*leaseDuration)
	took := next.at.Sub(dead)
	t.Logf("takeover after kill -9: %s led %v after the leader died (LeaseDuration %v)", next.id, took.Round(time.Millisecond), leaseDuration)
	if took > 2*leaseDuration {
		t.Errorf("the takeover took %v: more than 2 x LeaseDuration (%v)", took, 2*leaseDuration)
	}
	return next, i
}

// quiet fails if anyone says anything within d: the leader leads on.
func quiet(t *testing.T, e *election, from int, d time.Duration) {
	t.Helper()
	time.Sleep(d)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, got := range e.events[from:] {
		t.Errorf("while the leader lived and renewed: %v", got)
	}
}

func TestRunOrDieElectsOneAtATimeAndFailsOverAfterKill9(t *testing.T) {
	e := newElection(t, "elector")
	for _, id := range []string{"a", "b", "c"} {
		e.start(id)
	}
	first, i := e.leader(0, 20*time.Second)
	// Longer than LeaseDuration: client-go's own clock would call the
	// leader's record expired by now, were it not renewed.
	quiet(t, e, i+1, leaseDuration+2*retryPeriod)

	second, i := takeover(t, e, i+1, e.kill(first.id))

	// A clean exit hands over at once: RunOrDie returns, the Lock is
	// released, and the last candidate leads well within LeaseDuration.
	from := e.count()
	asked := time.Now()
	e.stop(second.id)
	third, _ := e.leader(from, 4*leaseDuration)
	if took := third.at.Sub(asked); took > leaseDuration {
		t.Errorf("the handover after a clean exit took %v, no quicker than the lease's expiry (%v)", took, leaseDuration)
	} else {
		t.Logf("handover after SIGTERM: %s led %v later", third.id, took.Round(time.Millisecond))
	}
	e.stop(third.id)
	e.check()
	if view, err := e.client.Inspect(context.Background(), e.resource); err != nil || view.Held {
		t.Errorf("after every candidate exited cleanly the lock is still held (%v, %v)", view.GetHolder(), err)
	}
}

func TestManagerLeadsThroughTheLockAndFailsOverAfterKill9(t *testing.T) {
	e := newElection(t, "manager")
	e.start("m1")
	e.start("m2")
	first, i := e.leader(0, 20*time.Second)
	quiet(t, e, i+1, leaseDuration+2*retryPeriod)
	second, _ := takeover(t, e, i+1, e.kill(first.id))
	// LeaderElectionReleaseOnCancel: a clean stop releases the lock.
	e.stop(second.id)
	e.check()
	if view, err := e.client.Inspect(context.Background(), e.resource); err != nil || view.Held {
		t.Errorf("after the manager stopped the lock is still held (%v, %v)", view.GetHolder(), err)
	}
}
