package redlockd_test

// Hold sessions and Do, against the real daemon (see client_test.go).

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

// free fails unless a single attempt takes the lock on name at once.
func free(t *testing.T, c *redlockd.Client, name, after string) {
	t.Helper()
	l, err := c.Acquire(context.Background(), name)
	if err != nil {
		t.Fatalf("after %s the lock was not free: %v", after, err)
	}
	mustRelease(t, l)
}

func TestClientHoldWithAWaitHandsTheLockOverInFIFOOrder(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	holding, err := c.Hold(ctx, name, redlockd.TTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var tokens []uint64
	var wg sync.WaitGroup
	waiter := func(label string) {
		defer wg.Done()
		err := c.Do(ctx, name, func(ctx context.Context, l *redlockd.Lease) error {
			mu.Lock()
			order, tokens = append(order, label), append(tokens, l.FencingToken())
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			return nil
		}, redlockd.TTL(5*time.Second), redlockd.Wait(30*time.Second))
		if err != nil {
			t.Error(err)
		}
	}
	wg.Add(2)
	go waiter("second")
	time.Sleep(500 * time.Millisecond) // orders the waiters; no timing is asserted
	go waiter("third")
	time.Sleep(500 * time.Millisecond)
	mustRelease(t, holding)
	wg.Wait()
	if strings.Join(order, ",") != "second,third" || !(holding.FencingToken() < tokens[0] && tokens[0] < tokens[1]) {
		t.Fatalf("order %v, tokens %d then %v", order, holding.FencingToken(), tokens)
	}
}

func TestClientASessionIsExtendedByTheDaemonWhileItLives(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	l, err := c.Hold(ctx, name, redlockd.TTL(600*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	first := l.ValidUntil()
	time.Sleep(1500 * time.Millisecond) // more than twice the TTL
	if l.Err() != nil || !l.ValidUntil().After(first) || l.Remaining() == 0 {
		t.Fatalf("after 1.5 s of a 600 ms TTL: %v, valid until +%v", l.Err(), time.Until(l.ValidUntil()))
	}
	if _, err := c.Acquire(ctx, name); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("the session's lock was taken: %v", err)
	}
	if ok, err := l.Extend(ctx, time.Second); ok || !errors.Is(err, redlockd.ErrInvalidArgument) {
		t.Fatalf("Extend on a session: %v %v", ok, err)
	}
	mustRelease(t, l)
	free(t, c, name, "Release")
}

func TestClientDoReleasesOnReturnOnAnErrorAndOnAPanic(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	long := redlockd.TTL(30 * time.Second) // only a release frees it soon
	ran := false
	if err := c.Do(ctx, name, func(context.Context, *redlockd.Lease) error { ran = true; return nil }, long); err != nil || !ran {
		t.Fatalf("Do: %v, ran %v", err, ran)
	}
	free(t, c, name, "a function that returned")

	failure := errors.New("the work failed")
	if err := c.Do(ctx, name, func(context.Context, *redlockd.Lease) error { return failure }, long); err != failure {
		t.Fatalf("Do: %v", err)
	}
	free(t, c, name, "a function that failed")

	func() {
		defer func() {
			if recovered := recover(); recovered != "boom" {
				t.Fatalf("recovered %v", recovered)
			}
		}()
		_ = c.Do(ctx, name, func(context.Context, *redlockd.Lease) error { panic("boom") }, long)
	}()
	free(t, c, name, "a function that panicked")
}

func TestClientDoReportsALossEvenWhenTheFunctionSucceeded(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	// max_hold used up: the daemon ends the session on its own, which is a
	// loss for the work under the lock.
	err := c.Do(ctx, name, func(ctx context.Context, l *redlockd.Lease) error {
		select {
		case <-ctx.Done():
			if !errors.Is(l.Err(), redlockd.ErrLockLost) || !strings.Contains(l.Err().Error(), "max_hold") {
				t.Errorf("cause: %v", l.Err())
			}
		case <-time.After(5 * time.Second):
			t.Error("never told the daemon ended the session")
		}
		return nil
	}, redlockd.TTL(time.Second), redlockd.MaxHold(time.Second))
	if !errors.Is(err, redlockd.ErrLockLost) {
		t.Fatalf("Do after the daemon released: %v", err)
	}
	free(t, c, name, "max_hold")
}

func TestClientHoldGivesUpWithErrNotAcquiredWhenTheWaitRunsOut(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	l, err := c.Hold(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer mustRelease(t, l)
	started := time.Now()
	_, err = c.Hold(ctx, name, redlockd.Wait(300*time.Millisecond))
	var refused *redlockd.Error
	if !errors.Is(err, redlockd.ErrNotAcquired) || !errors.As(err, &refused) || refused.Nodes[0] != "held by another owner" {
		t.Fatalf("a held lock: %#v", err)
	}
	if waited := time.Since(started); waited < 250*time.Millisecond {
		t.Fatalf("gave up after %v of a 300 ms wait", waited)
	}
}

func TestClientCancellingHoldsContextEndsTheSessionAndFreesTheLock(t *testing.T) {
	c, name := dial(t), resource()
	ctx, cancel := context.WithCancel(context.Background())
	l, err := c.Hold(ctx, name, redlockd.TTL(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-l.Context().Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the lease's context outlived Hold's")
	}
	if held, err := l.Release(context.Background()); held || !errors.Is(err, redlockd.ErrLockLost) {
		t.Fatalf("release after the session ended: %v %v", held, err)
	}
	l2, err := c.Acquire(context.Background(), name, redlockd.Wait(2*time.Second))
	if err != nil {
		t.Fatalf("a cancelled session kept its lock: %v", err)
	}
	mustRelease(t, l2)
}

func TestClientAProcessKilledWithKill9FreesItsLockAtOnce(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	holder := exec.Command(os.Args[0], "-test.run", "^TestHelperHolder$")
	holder.Env = append(os.Environ(), "REDLOCKD_TEST_HOLD="+name)
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.Contains(line, "held") {
		t.Fatalf("the holder said %q", line)
	}
	if _, err := c.Acquire(ctx, name); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("while held: %v", err)
	}
	killed := time.Now()
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// TTL 30 s: only the daemon seeing the stream break frees it this soon.
	l, err := c.Acquire(ctx, name, redlockd.Wait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(killed); took > 2*time.Second {
		t.Fatalf("freed %v after the kill", took)
	}
	mustRelease(t, l)
}

// TestHelperHolder holds a lock for the kill -9 tests, in a process of its
// own (with REDLOCKD_TEST_LOCK_DELAY's lock delay, if set).
func TestHelperHolder(t *testing.T) {
	name := os.Getenv("REDLOCKD_TEST_HOLD")
	if name == "" {
		t.Skip("only as the kill -9 test's child")
	}
	c := dial(t)
	delay, _ := time.ParseDuration(os.Getenv("REDLOCKD_TEST_LOCK_DELAY")) // 0 when unset
	if _, err := c.Hold(context.Background(), name, redlockd.TTL(30*time.Second), redlockd.LockDelay(delay)); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held\n")
	time.Sleep(60 * time.Second)
}

func TestClientSharedHoldSessionsHoldTogetherAndKeepAWriterOut(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	first, err := c.Hold(ctx, name, redlockd.TTL(5*time.Second), redlockd.Shared())
	if err != nil {
		t.Fatal(err)
	}
	var tokens []uint64
	err = c.Do(ctx, name, func(ctx context.Context, second *redlockd.Lease) error {
		if !first.Shared() || !second.Shared() {
			t.Errorf("shared sessions say %v and %v", first, second)
		}
		tokens = append(tokens, first.FencingToken(), second.FencingToken())
		if l, err := c.Acquire(ctx, name); !errors.Is(err, redlockd.ErrNotAcquired) {
			t.Errorf("an exclusive acquire beside two shared sessions: %v %v", l, err)
		}
		return nil
	}, redlockd.TTL(5*time.Second), redlockd.Wait(0), redlockd.Shared())
	if err != nil {
		t.Fatalf("a second shared session: %v", err)
	}
	mustRelease(t, first)
	writer, err := c.Acquire(ctx, name)
	if err != nil {
		t.Fatalf("the writer after the sessions ended: %v", err)
	}
	defer mustRelease(t, writer)
	for _, token := range tokens {
		if writer.FencingToken() <= token {
			t.Fatalf("the writer's token %d is not above a reader's %d", writer.FencingToken(), token)
		}
	}
}

func TestClientPermitSessionsTakeTwoSlotsAndAThirdIsNotAcquired(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	first, err := c.Hold(ctx, name, redlockd.TTL(5*time.Second), redlockd.Permits(2))
	if err != nil {
		t.Fatal(err)
	}
	defer mustRelease(t, first)
	err = c.Do(ctx, name, func(ctx context.Context, second *redlockd.Lease) error {
		if second.Permits() != 2 || first.Slot() == second.Slot() || first.Slot()+second.Slot() != 1 {
			t.Errorf("two permit sessions: %v and %v", first, second)
		}
		if l, err := c.Hold(ctx, name, redlockd.Wait(0), redlockd.Permits(2)); !errors.Is(err, redlockd.ErrNotAcquired) {
			t.Errorf("a third permit session of two: %v %v", l, err)
		}
		if l, err := c.Hold(ctx, name, redlockd.Wait(0), redlockd.Permits(3)); !errors.Is(err, redlockd.ErrFailedPrecondition) {
			t.Errorf("a session for three permits while two are out: %v %v", l, err)
		}
		return nil
	}, redlockd.TTL(5*time.Second), redlockd.Wait(0), redlockd.Permits(2))
	if err != nil {
		t.Fatalf("a second permit session: %v", err)
	}
}

func TestClientASessionWithAReentrancyKeyIsOneHoldOfItsLock(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	err := c.Do(ctx, name, func(ctx context.Context, session *redlockd.Lease) error {
		l, err := c.Acquire(ctx, name, redlockd.ReentrancyKey("session-key"))
		if err != nil || l.FencingToken() != session.FencingToken() {
			t.Fatalf("an acquire with the session's key: %v %v (session %v)", l, err, session)
		}
		mustRelease(t, l)
		if l, err := c.Acquire(ctx, name); !errors.Is(err, redlockd.ErrNotAcquired) {
			t.Errorf("the session's hold went with another's release: %v %v", l, err)
		}
		return nil
	}, redlockd.TTL(5*time.Second), redlockd.ReentrancyKey("session-key"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.Acquire(ctx, name)
	if err != nil {
		t.Fatalf("still held after the session: %v", err)
	}
	mustRelease(t, after)
}
