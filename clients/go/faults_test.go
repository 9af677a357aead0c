package redlockd_test

// Killed masters and a frozen daemon (SIGSTOP), each test on a daemon of
// its own (killed masters stay dead), and the --secure daemon (mutual TLS
// and a bearer token); see client_test.go.

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

func TestKillsMastersLostBeforeValidUntilAndUnavailableSaysWhatEachMasterSaid(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	l, err := c.Hold(ctx, name, redlockd.TTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// The latest ValidUntil seen while the lock was said to be held.
	var mu sync.Mutex
	lastValid := l.ValidUntil()
	stop, followed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(followed)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				v := l.ValidUntil()
				mu.Lock()
				if l.Err() == nil && v.After(lastValid) {
					lastValid = v
				}
				mu.Unlock()
			}
		}
	}()
	killThreeMasters(t)
	select {
	case <-l.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("never told the lock was lost")
	}
	lostAt := time.Now()
	close(stop)
	<-followed
	if lostAt.After(lastValid) {
		t.Fatalf("told lost %v after the validity ran out", lostAt.Sub(lastValid))
	}
	// The daemon's LOST, or the client's own deadline where a busy machine
	// delayed the LOST past it (the deadline fires from the client's clock,
	// whatever the daemon says): either is ErrLockLost, told in time.
	if !errors.Is(l.Err(), redlockd.ErrLockLost) {
		t.Fatalf("cause: %v", l.Err())
	}
	if strings.Contains(l.Err().Error(), "validity ran out") {
		t.Logf("told by the client's own deadline before the daemon's LOST came: %v", l.Err())
	}
	if _, err := l.Release(ctx); !errors.Is(err, redlockd.ErrLockLost) {
		t.Fatalf("release after the loss: %v", err)
	}

	// A wait cut short by UNAVAILABLE is tried again until it runs out.
	for _, take := range []func() error{
		func() error { _, err := c.Acquire(ctx, name+"-2", redlockd.Wait(time.Second)); return err },
		func() error { _, err := c.Hold(ctx, name+"-3", redlockd.Wait(time.Second)); return err },
	} {
		started := time.Now()
		err := take()
		var failed *redlockd.Error
		if !errors.As(err, &failed) || !errors.Is(err, redlockd.ErrUnavailable) || failed.Needed != 3 || len(failed.Nodes) != 5 {
			t.Fatalf("without a quorum: %#v", err)
		}
		granted := 0
		for _, said := range failed.Nodes {
			if said == "granted" {
				granted++
			}
		}
		// At most the two live masters grant (one of them may time out on a
		// loaded machine; that is not what this checks).
		if granted > 2 {
			t.Fatalf("three masters are dead, yet %d granted: %v", granted, failed.Nodes)
		}
		// No upper bound: a loaded machine may take longer; what matters is
		// that the wait was tried again until it ran out.
		if waited := time.Since(started); waited < 800*time.Millisecond {
			t.Fatalf("a 1 s wait ended after %v: it was not tried again", waited)
		}
	}
}

// killThreeMasters kills three of the daemon's five masters.
func killThreeMasters(t *testing.T) {
	t.Helper()
	for _, pid := range strings.Fields(os.Getenv("REDLOCKD_DEV_MASTER_PIDS"))[:3] {
		n, _ := strconv.Atoi(pid)
		if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
}

func TestKillsMastersALeadershipIsLostBeforeValidUntil(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), election()
	l := campaign(t, c, name, "pod-1", nil, redlockd.TTL(2*time.Second))
	killThreeMasters(t)
	select {
	case <-l.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("never told the leadership was lost")
	}
	// ValidUntil stays the last one given while leading.
	if lostAt := time.Now(); lostAt.After(l.ValidUntil()) {
		t.Fatalf("told lost %v after valid_for ran out", lostAt.Sub(l.ValidUntil()))
	}
	// The daemon's LOST, not the client's own deadline.
	if !errors.Is(l.Err(), redlockd.ErrLockLost) || !strings.HasPrefix(l.Err().(*redlockd.Error).Message, "lost: ") {
		t.Fatalf("cause: %v", l.Err())
	}
	if err := l.Resign(ctx); !errors.Is(err, redlockd.ErrLockLost) {
		t.Fatalf("resign after the loss: %v", err)
	}
	// Without a quorum the daemon campaigns on; the wait runs out.
	if _, err := c.Campaign(ctx, name+"-again", "pod-1", nil, redlockd.Wait(time.Second)); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("a campaign without a quorum: %v", err)
	}
	if _, err := c.Leader(ctx, name); !errors.Is(err, redlockd.ErrUnavailable) {
		t.Fatalf("Leader without a quorum: %v", err)
	}
}

func TestFreezesDaemonTheLeaderAndTheHolderAreToldBeforeTheirOwnDeadline(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), election()
	const ttl = 2 * time.Second
	l := campaign(t, c, name, "pod-1", nil, redlockd.TTL(ttl))
	h, err := c.Hold(ctx, resource(), redlockd.TTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	// When each is told: a function run the moment its context ends.
	toldAt := func(ctx context.Context) <-chan time.Time {
		at := make(chan time.Time, 1)
		context.AfterFunc(ctx, func() { at <- time.Now() })
		return at
	}
	leaderTold, holderTold := toldAt(l.Context()), toldAt(h.Context())
	time.Sleep(ttl / 2) // an extension or two came
	daemon, err := strconv.Atoi(os.Getenv("REDLOCKD_DEV_DAEMON_PID"))
	if err != nil {
		t.Fatalf("REDLOCKD_DEV_DAEMON_PID: %v", err)
	}
	if err := syscall.Kill(daemon, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(daemon, syscall.SIGCONT) }() // with-dev-daemon must stop it
	frozen := time.Now()
	for _, held := range []struct {
		what  string
		told  <-chan time.Time
		until func() time.Time
		err   func() error
		cause string
	}{
		{"the leader", leaderTold, l.ValidUntil, l.Err, "the client's own deadline"},
		{"the holder", holderTold, h.ValidUntil, h.Err, "validity ran out"},
	} {
		var at time.Time
		select {
		case at = <-held.told:
		case <-time.After(ttl + 5*time.Second):
			t.Fatalf("%s still holds with a frozen daemon", held.what)
		}
		// ValidUntil is the last extension's. Told before it, by at most the
		// margin (100 ms): the client's own timer, with no word from the daemon.
		until := held.until()
		early := until.Sub(at)
		t.Logf("%s told %v before valid_until, %v after the freeze", held.what, early, at.Sub(frozen))
		if early <= 0 || early > 100*time.Millisecond || at.Sub(frozen) > ttl {
			t.Fatalf("%s told %v before valid_until, %v after the freeze", held.what, early, at.Sub(frozen))
		}
		if err := held.err(); !errors.Is(err, redlockd.ErrLockLost) || !strings.Contains(err.Error(), held.cause) {
			t.Fatalf("%s: cause: %v", held.what, err)
		}
	}
}

func TestSecureTLSAndABearerToken(t *testing.T) {
	if os.Getenv("REDLOCKD_CA") == "" || os.Getenv("REDLOCKD_TOKEN") == "" {
		t.Fatal("needs the --secure daemon")
	}
	c, ctx, name := dial(t), context.Background(), resource()
	err := c.Do(ctx, name, func(context.Context, *redlockd.Lease) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Acquire(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	mustRelease(t, l)
	if _, err := c.Acquire(ctx, "outside/"+name); !errors.Is(err, redlockd.ErrPermissionDenied) {
		t.Fatalf("outside the prefixes: %v", err)
	}
	stranger, err := redlockd.Dial(ctx, "", redlockd.WithToken("not-the-token-0123456789abcdefgh"))
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	if _, err := stranger.Acquire(ctx, name); !errors.Is(err, redlockd.ErrUnauthenticated) {
		t.Fatalf("a wrong token: %v", err)
	}
	if _, err := stranger.Hold(ctx, name); !errors.Is(err, redlockd.ErrUnauthenticated) {
		t.Fatalf("a wrong token, Hold: %v", err)
	}
	// Elections: the tenant's prefixes apply to their names too.
	leader := campaign(t, c, election(), "pod-1", []byte("secure"))
	mustResign(t, leader)
	if _, err := c.Campaign(ctx, "outside/"+name, "pod-1", nil); !errors.Is(err, redlockd.ErrPermissionDenied) {
		t.Fatalf("an election outside the prefixes: %v", err)
	}
	for _, err := range stranger.Observe(ctx, election()) {
		if !errors.Is(err, redlockd.ErrUnauthenticated) {
			t.Fatalf("a wrong token, Observe: %v", err)
		}
	}
	plain, err := redlockd.Dial(ctx, "", redlockd.WithTLS(nil, nil, nil)) // the system's roots do not know the test CA
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Acquire(ctx, name); err == nil || errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("a server certificate from an unknown CA was trusted: %v", err)
	}
}
