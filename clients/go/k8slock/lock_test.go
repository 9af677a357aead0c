package k8slock_test

// The Lock's calls as client-go makes them, against a real daemon: a write
// succeeds only while this identity holds the lock; Get shows the real
// holder; a lease lost behind the daemon's back ends the leadership, and a
// larger term follows.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
	"github.com/redlockd/redlockd/clients/go/k8slock"
	"k8s.io/client-go/tools/leaderelection"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
)

func newLock(t *testing.T, c *redlockd.Client, resource, id string) *k8slock.Lock {
	t.Helper()
	l, err := k8slock.New(c, resource, id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// record is what client-go writes for id.
func record(id string, lease time.Duration) rl.LeaderElectionRecord {
	return rl.LeaderElectionRecord{HolderIdentity: id, LeaseDurationSeconds: int(lease / time.Second)}
}

func get(t *testing.T, l *k8slock.Lock) (*rl.LeaderElectionRecord, []byte) {
	t.Helper()
	got, raw, err := l.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got, raw
}

func TestLockWritesOnlyWhileItHoldsTheLockAndGetShowsTheHolder(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	var events []string
	a, err := k8slock.New(c, name, "pod-a", k8slock.OnEvent(func(event string) { events = append(events, event) }))
	if err != nil {
		t.Fatal(err)
	}
	b := newLock(t, c, name, "pod-b")
	a.RecordEvent("became leader")
	if len(events) != 1 || events[0] != "became leader" {
		t.Fatalf("OnEvent got %q", events)
	}
	if got, _ := get(t, a); got.HolderIdentity != "" {
		t.Fatalf("nobody holds %s, but Get says %q", name, got.HolderIdentity)
	}
	if err := a.Create(ctx, record("pod-a", 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	term := a.Term()
	if term == 0 {
		t.Fatal("the holder's Term is 0")
	}
	// Another candidate sees the real holder, and cannot write.
	got, _ := get(t, b)
	// (LeaderTransitions is the token the masters' records give: the
	// holder's term, or above it: Inspect's fencing_token.)
	if got.HolderIdentity != "pod-a" || got.LeaderTransitions < int(term) || got.LeaseDurationSeconds < 4 || got.LeaseDurationSeconds > 5 {
		t.Fatalf("pod-b's Get: %+v; want pod-a's, term %d or above, 4 or 5 s left", got, term)
	}
	if err := b.Update(ctx, record("pod-b", 5*time.Second)); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("pod-b's Update while pod-a holds the lock: %v, want ErrNotAcquired", err)
	}
	if err := b.Update(ctx, record("pod-a", 5*time.Second)); err == nil || !strings.Contains(err.Error(), `may not write a record held by "pod-a"`) {
		t.Fatalf("pod-b writing pod-a's record: %v", err)
	}
	if b.Term() != 0 {
		t.Fatalf("pod-b holds nothing, but its Term is %d", b.Term())
	}
	// The holder sees its own record, unchanged until it writes again.
	mine, raw := get(t, a)
	if _, again := get(t, a); mine.HolderIdentity != "pod-a" || !bytes.Equal(raw, again) {
		t.Fatalf("pod-a's Get: %+v, then %s", mine, again)
	}
	if err := a.Update(ctx, record("pod-a", 5*time.Second)); err != nil {
		t.Fatalf("pod-a's renewal: %v", err)
	}
	if err := a.Update(ctx, rl.LeaderElectionRecord{HolderIdentity: "pod-a"}); err == nil || !strings.Contains(err.Error(), "at least 1 s") {
		t.Fatalf("a record with no lease duration: %v", err)
	}
	// A Leading context ends when the lease does.
	leading, leadingTerm := a.Leading(ctx)
	if leadingTerm != term || leading.Err() != nil {
		t.Fatalf("pod-a's Leading: term %d, %v", leadingTerm, leading.Err())
	}
	// client-go's release (no holder) gives the lock back.
	if err := a.Update(ctx, rl.LeaderElectionRecord{LeaseDurationSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-leading.Done():
		if cause := context.Cause(leading); !strings.Contains(cause.Error(), "released") {
			t.Fatalf("the Leading context ended with %v", cause)
		}
	case <-time.After(time.Second):
		t.Fatal("the Leading context did not end at the release")
	}
	if a.Term() != 0 {
		t.Fatal("the released lock still has a Term")
	}
	if got, _ := get(t, b); got.HolderIdentity != "" {
		t.Fatalf("after the release Get says %q holds it", got.HolderIdentity)
	}
	if err := b.Update(ctx, record("pod-b", 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if b.Term() <= term {
		t.Fatalf("pod-b's term %d is not larger than pod-a's %d", b.Term(), term)
	}
	// Another Lock given pod-b's identity does not take pod-b's lease for
	// its own.
	if got, _ := get(t, newLock(t, c, name, "pod-b")); got.HolderIdentity != "pod-b (a lease this Lock does not hold)" {
		t.Fatalf("a second pod-b's Get: %q", got.HolderIdentity)
	}
	if leading, term := a.Leading(ctx); term != 0 || leading.Err() == nil {
		t.Fatalf("pod-a holds nothing, but Leading gives term %d, %v", term, leading.Err())
	}
	if held, err := b.Release(ctx); !held || err != nil {
		t.Fatalf("pod-b's Release: %v, %v", held, err)
	}
}

func TestNewRefusesBadNames(t *testing.T) {
	c := dial(t)
	for _, bad := range []struct{ resource, identity, want string }{
		{"", "pod", "the resource is 0 bytes long"},
		{"r", strings.Repeat("p", 257), "the identity is 257 bytes long"},
		{"r\n", "pod", "control character"},
	} {
		if _, err := k8slock.New(c, bad.resource, bad.identity); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("New(%q, %q): %v, want %q", bad.resource, bad.identity, err, bad.want)
		}
	}
	if _, err := k8slock.New(nil, "r", "pod"); err == nil {
		t.Error("New with no client did not fail")
	}
}

// deleteLock deletes resource's lock key on every master, behind the
// daemon's back: the holder's next renewal finds it gone.
func deleteLock(t *testing.T, resource string) {
	t.Helper()
	ports := strings.Fields(os.Getenv("REDLOCKD_DEV_MASTER_PORTS"))
	if len(ports) != 5 {
		t.Fatalf("REDLOCKD_DEV_MASTER_PORTS is %q: run through scripts/with-dev-daemon", ports)
	}
	for _, port := range ports {
		out, err := exec.Command("redis-cli", "-p", port, "EVAL",
			`local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do n = n + redis.call('DEL', k) end return n`,
			"0", "redlockd:{*}:lock:"+resource).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "1" {
			t.Fatalf("deleting %s's lock on the master at port %s: %v: %s", resource, port, err, out)
		}
	}
}

func TestALeaseLostEndsTheLeadershipAndALargerTermFollows(t *testing.T) {
	c, name := dial(t), resource()
	a, b := newLock(t, c, name, "pod-a"), newLock(t, c, name, "pod-b")
	type leadership struct {
		term  uint64
		cause error
		ended time.Time
	}
	ledA, ledB := make(chan leadership, 2), make(chan leadership, 2)
	stopped := make(chan time.Time, 1)
	run := func(ctx context.Context, l *k8slock.Lock, led chan<- leadership, stoppedAt chan<- time.Time) {
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock: l, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					leading, term := l.Leading(ctx)
					led <- leadership{term: term}
					<-leading.Done()
					led <- leadership{term: term, cause: context.Cause(leading), ended: time.Now()}
				},
				OnStoppedLeading: func() {
					if stoppedAt != nil {
						stoppedAt <- time.Now()
					}
				},
			},
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { run(ctx, a, ledA, stopped) })
	first := <-ledA
	deleted := time.Now()
	deleteLock(t, name)
	wg.Go(func() { run(ctx, b, ledB, nil) })
	// pod-a's next renewal finds the lock gone: its Leading context ends
	// at once, with the loss as its cause.
	ended := <-ledA
	if ended.term != first.term || !errors.Is(ended.cause, redlockd.ErrLockLost) {
		t.Fatalf("pod-a's leadership (term %d) ended with %v, want an ErrLockLost", ended.term, ended.cause)
	}
	if took := ended.ended.Sub(deleted); took > retryPeriod+time.Second {
		t.Errorf("pod-a's Leading context ended %v after the loss: not at the next renewal", took)
	}
	// pod-a takes the lock again only a lease later: its leadership must
	// end first.
	time.Sleep(100 * time.Millisecond)
	err := a.Update(context.Background(), record("pod-a", leaseDuration))
	if err == nil || !strings.Contains(err.Error(), "takes the lock again only in") {
		t.Fatalf("pod-a's acquisition right after its loss: %v", err)
	}
	// client-go stops within RenewDeadline + RetryPeriod of its last
	// renewal.
	select {
	case at := <-stopped:
		t.Logf("lost at deletion + %v (Leading); client-go stopped at + %v", ended.ended.Sub(deleted).Round(time.Millisecond), at.Sub(deleted).Round(time.Millisecond))
		if took := at.Sub(deleted); took > renewDeadline+retryPeriod+time.Second {
			t.Errorf("client-go stopped leading %v after the loss", took)
		}
	case <-time.After(renewDeadline + retryPeriod + 2*time.Second):
		t.Fatal("client-go did not stop leading after the lease was lost")
	}
	// pod-b leads, with a larger term.
	second := <-ledB
	if second.term <= first.term || b.Term() != second.term || a.Term() != 0 {
		t.Fatalf("after the loss: terms %d then %d; pod-b's Term %d, pod-a's %d", first.term, second.term, b.Term(), a.Term())
	}
}
