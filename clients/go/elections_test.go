package redlockd_test

// Campaign, Leader, Observe, Proclaim, Resign and Participants against the
// real daemon (see client_test.go).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

// election is a fresh election name under "examples/" (the secure
// daemon's tenant prefix applies to elections too).
func election() string {
	return "examples/go-election-" + strings.TrimPrefix(resource(), "examples/go-")
}

func campaign(t *testing.T, c *redlockd.Client, name, candidate string, value []byte, opts ...redlockd.LockOption) *redlockd.Leadership {
	t.Helper()
	l, err := c.Campaign(context.Background(), name, candidate, value, opts...)
	if err != nil {
		t.Fatalf("campaign of %s: %v", candidate, err)
	}
	return l
}

func mustResign(t *testing.T, l *redlockd.Leadership) {
	t.Helper()
	if err := l.Resign(context.Background()); err != nil {
		t.Fatalf("resign of %v: %v", l, err)
	}
}

// eventually fails unless check holds within 5 s.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !check(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5 s: %s", what)
		}
	}
}

func TestClientTheLeaderIsKnownItsSuccessorWaitsInLineAndGetsALargerTerm(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), election()
	if nobody, err := c.Leader(ctx, name); err != nil || nobody.Elected {
		t.Fatalf("before any campaign: %+v %v", nobody, err)
	}
	first := campaign(t, c, name, "pod-1", []byte("10.0.0.1"), redlockd.TTL(2*time.Second))
	leader, err := c.Leader(ctx, name)
	if err != nil || !leader.Elected || leader.Candidate != "pod-1" || string(leader.Value) != "10.0.0.1" ||
		leader.Term != first.Term() || leader.Since.IsZero() {
		t.Fatalf("leader %+v (%v), leadership %v", leader, err, first)
	}
	second := make(chan *redlockd.Leadership, 1)
	go func() {
		l, err := c.Campaign(ctx, name, "pod-2", []byte("10.0.0.2"), redlockd.TTL(2*time.Second), redlockd.Wait(30*time.Second))
		if err != nil {
			t.Error(err)
		}
		second <- l
	}()
	eventually(t, "pod-2 queued", func() bool {
		queued, err := c.Participants(ctx, name)
		return err == nil && slices.Equal(queued, []string{"pod-2"})
	})
	time.Sleep(2500 * time.Millisecond) // past the TTL: only extensions keep it
	if first.Err() != nil || first.Remaining() == 0 || len(second) > 0 {
		t.Fatalf("after the TTL: %v, %v left, second elected %v", first.Err(), first.Remaining(), len(second))
	}
	mustResign(t, first)
	if !errors.Is(first.Err(), context.Canceled) {
		t.Fatalf("a resigned leadership's Err: %v", first.Err())
	}
	next := <-second
	if next == nil || next.Term() <= first.Term() {
		t.Fatalf("the next term %v after %d", next, first.Term())
	}
	if leader, _ := c.Leader(ctx, name); leader.Candidate != "pod-2" || leader.Term != next.Term() {
		t.Fatalf("the next leader %+v", leader)
	}
	mustResign(t, next)
	if nobody, _ := c.Leader(ctx, name); nobody.Elected {
		t.Fatalf("after the last resignation: %+v", nobody)
	}
}

func TestClientProclaimOnTheLeadershipAndByTermAndAStaleTermChangesNothing(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), election()
	l := campaign(t, c, name, "pod-1", []byte("first"))
	defer mustResign(t, l)
	if err := l.Proclaim(ctx, []byte("second")); err != nil || string(l.Value()) != "second" {
		t.Fatalf("proclaim: %v, value %q", err, l.Value())
	}
	if leader, _ := c.Leader(ctx, name); string(leader.Value) != "second" {
		t.Fatalf("after proclaim: %+v", leader)
	}
	if err := c.Proclaim(ctx, name, l.Term(), []byte("third")); err != nil {
		t.Fatal(err)
	}
	current := fmt.Sprintf("the current term is %d", l.Term())
	for _, stale := range []uint64{l.Term() - 1, l.Term() + 1} {
		err := c.Proclaim(ctx, name, stale, []byte("stale"))
		if !errors.Is(err, redlockd.ErrFailedPrecondition) || !strings.Contains(err.Error(), current) {
			t.Fatalf("a proclaim by term %d: %v", stale, err)
		}
		err = c.Resign(ctx, name, stale)
		if !errors.Is(err, redlockd.ErrFailedPrecondition) || !strings.Contains(err.Error(), current) {
			t.Fatalf("a resign by term %d: %v", stale, err)
		}
	}
	if leader, _ := c.Leader(ctx, name); leader.Term != l.Term() || string(leader.Value) != "third" || l.Err() != nil {
		t.Fatalf("after stale terms: %+v, %v", leader, l.Err())
	}
}

func TestClientAResignationByTermIsALossForTheLeader(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), election()
	l := campaign(t, c, name, "pod-1", nil)
	if err := c.Resign(ctx, name, l.Term()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the leader was never told")
	}
	if !errors.Is(l.Err(), redlockd.ErrLockLost) || !strings.Contains(l.Err().Error(), "the daemon ended the leadership") {
		t.Fatalf("cause: %v", l.Err())
	}
	if err := l.Proclaim(ctx, []byte("too late")); !errors.Is(err, redlockd.ErrLockLost) {
		t.Fatalf("a proclaim after the loss: %v", err)
	}
	if err := l.Resign(ctx); !errors.Is(err, redlockd.ErrLockLost) {
		t.Fatalf("a resign after the loss: %v", err)
	}
}

func TestClientACandidateNotElectedWithinItsWaitWithdraws(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), election()
	l := campaign(t, c, name, "pod-1", nil)
	defer mustResign(t, l)
	started := time.Now()
	_, err := c.Campaign(ctx, name, "pod-2", nil, redlockd.Wait(500*time.Millisecond))
	if !errors.Is(err, redlockd.ErrNotAcquired) || !strings.Contains(err.Error(), "not elected within 500ms") {
		t.Fatalf("while another leads: %v", err)
	}
	if waited := time.Since(started); waited < 500*time.Millisecond {
		t.Fatalf("gave up after %v", waited)
	}
	if queued, err := c.Participants(ctx, name); err != nil || len(queued) != 0 {
		t.Fatalf("still queued: %v %v", queued, err)
	}
	// A context that ends gives up the wait too.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := c.Campaign(short, name, "pod-3", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with a context that ends: %v", err)
	}
	eventually(t, "pod-3 withdrawn", func() bool {
		queued, err := c.Participants(ctx, name)
		return err == nil && len(queued) == 0
	})
}

func TestClientObserveSeesEachStateInOrder(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), election()
	states := make(chan redlockd.Leader, 16)
	observing, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() {
		defer close(stopped)
		for leader, err := range c.Observe(observing, name) {
			if err != nil {
				stopped <- err
				return
			}
			states <- leader
		}
	}()
	next := func(what string) redlockd.Leader {
		t.Helper()
		select {
		case leader := <-states:
			return leader
		case <-time.After(5 * time.Second):
			t.Fatalf("no state: %s", what)
			return redlockd.Leader{}
		}
	}
	if first := next("the state now"); first.Elected {
		t.Fatalf("the first state: %+v", first)
	}
	l := campaign(t, c, name, "pod-1", []byte("a"))
	if seen := next("elected"); seen.Candidate != "pod-1" || string(seen.Value) != "a" || seen.Term != l.Term() {
		t.Fatalf("elected: %+v", seen)
	}
	if err := l.Proclaim(ctx, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if seen := next("proclaimed"); string(seen.Value) != "b" || seen.Term != l.Term() {
		t.Fatalf("proclaimed: %+v", seen)
	}
	mustResign(t, l)
	if seen := next("resigned"); seen.Elected {
		t.Fatalf("resigned: %+v", seen)
	}
	stop()
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Fatalf("the view ended with %v", err)
	}
	// Breaking out of the loop ends the stream too.
	for leader, err := range c.Observe(ctx, name) {
		if err != nil || leader.Elected {
			t.Fatalf("%+v %v", leader, err)
		}
		break
	}
}

func TestClientTermsAbove2To53AreExact(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), election()
	// Above TestClientTokensAbove2To53AreExact's counter (tokens must not go
	// back), below 2^53 (the daemon's limit for counters): terms near 2^57.
	counter := uint64(1)<<53 - 500
	for _, port := range masterPorts() {
		setEveryFence(t, port, counter)
	}
	l := campaign(t, c, name, "pod-1", nil)
	defer mustResign(t, l)
	if l.Term()/16 != counter+1 || l.Term() <= 1<<56 {
		t.Fatalf("term %d for counter %d", l.Term(), counter)
	}
	if leader, _ := c.Leader(ctx, name); leader.Term != l.Term() {
		t.Fatalf("Leader's term %d, ELECTED's %d", leader.Term, l.Term())
	}
	if err := c.Proclaim(ctx, name, l.Term(), []byte("exact")); err != nil {
		t.Fatalf("a proclaim by the exact term: %v", err)
	}
}

func TestClientAKilledLeaderProcessFreesTheElectionAtOnce(t *testing.T) {
	c, name := dial(t), election()
	child, term := leaderInAChild(t, name, 0)
	killed := time.Now()
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// TTL 30 s: only the daemon seeing the stream break frees it this soon.
	l := campaign(t, c, name, "pod-1", nil, redlockd.Wait(10*time.Second))
	defer mustResign(t, l)
	if took := time.Since(killed); took > 3*time.Second || l.Term() <= term {
		t.Fatalf("elected %v after the kill, term %d after %d", took, l.Term(), term)
	}
}

// leaderInAChild starts TestHelperLeader, which leads name (TTL 30 s, the
// lock delay given), and returns it once elected, with its term.
func leaderInAChild(t *testing.T, name string, lockDelay time.Duration) (*exec.Cmd, uint64) {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run", "^TestHelperLeader$")
	child.Env = append(os.Environ(), "REDLOCKD_TEST_LEAD="+name, "REDLOCKD_TEST_LOCK_DELAY="+lockDelay.String())
	out, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	var term uint64
	line, _ := bufio.NewReader(out).ReadString('\n')
	if _, err := fmt.Sscanf(line, "elected %d", &term); err != nil {
		t.Fatalf("the leader said %q", line)
	}
	return child, term
}

// TestHelperLeader leads an election for the kill -9 tests, in a process of
// its own.
func TestHelperLeader(t *testing.T) {
	name := os.Getenv("REDLOCKD_TEST_LEAD")
	if name == "" {
		t.Skip("only as a kill -9 test's child")
	}
	delay, err := time.ParseDuration(os.Getenv("REDLOCKD_TEST_LOCK_DELAY"))
	if err != nil {
		t.Fatal(err)
	}
	l := campaign(t, dial(t), name, "pod-child", nil, redlockd.TTL(30*time.Second), redlockd.LockDelay(delay))
	fmt.Printf("elected %d\n", l.Term())
	time.Sleep(60 * time.Second)
}

func TestClientBadCampaignArgumentsNameTheField(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), election()
	for _, tc := range []struct {
		call func() error
		want string
	}{
		{func() error { _, err := c.Campaign(ctx, "", "pod-1", nil); return err }, "invalid election: is 0 bytes long"},
		{func() error { _, err := c.Campaign(ctx, name, "", nil); return err }, "invalid candidate: is 0 bytes long"},
		{func() error { _, err := c.Campaign(ctx, name, "pod-1", bytes.Repeat([]byte("x"), 4097)); return err },
			"invalid value: is 4097 bytes long; at most 4096 are allowed"},
		{func() error { _, err := c.Campaign(ctx, name, "pod-1", nil, redlockd.Shared()); return err },
			"invalid mode: a campaign takes TTL, Wait, MaxHold and LockDelay"},
		{func() error {
			_, err := c.Campaign(ctx, name, "pod-1", nil, redlockd.LockDelay(-time.Second))
			return err
		},
			"invalid lock_delay: -1s 0ns is not a valid non-negative duration"},
		{func() error { return c.Resign(ctx, name, 0) }, "invalid term: must be set"},
		{func() error { _, err := c.Leader(ctx, "a\x00b"); return err }, `invalid election: contains the control character '\0'`},
		// Ranges only the daemon knows, in its words.
		{func() error { _, err := c.Campaign(ctx, name, "pod-1", nil, redlockd.LockDelay(time.Hour)); return err },
			"invalid lock_delay: 1h is outside the allowed range [0s, "},
		{func() error {
			_, err := c.Campaign(ctx, name, "pod-1", nil, redlockd.TTL(250*time.Millisecond))
			return err
		}, "invalid ttl: a campaign needs a TTL of at least"},
	} {
		if err := tc.call(); !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
	for _, err := range c.Observe(ctx, "") {
		if !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), "invalid election") {
			t.Errorf("Observe of no election: %v", err)
		}
	}
}
