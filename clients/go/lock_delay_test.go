package redlockd_test

// LockDelay on Acquire, Hold and Campaign (docs/design.md#lock-delay): a holder that
// dies keeps its lock that much longer; a release frees it at once.

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

const lockDelay = 2 * time.Second

// checkDelayed fails unless took is about the lock delay: neither at once
// nor the TTL (30 s).
func checkDelayed(t *testing.T, took time.Duration) {
	t.Helper()
	if took < lockDelay-500*time.Millisecond || took > lockDelay+3*time.Second {
		t.Fatalf("taken %v after the kill; the lock delay is %v", took, lockDelay)
	}
}

func TestClientAKilledHoldWithALockDelayKeepsTheLockThatLong(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	holder := exec.Command(os.Args[0], "-test.run", "^TestHelperHolder$")
	holder.Env = append(os.Environ(), "REDLOCKD_TEST_HOLD="+name, "REDLOCKD_TEST_LOCK_DELAY="+lockDelay.String())
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); !strings.Contains(line, "held") {
		t.Fatalf("the holder said %q", line)
	}
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	killed := time.Now()
	l, err := c.Acquire(ctx, name, redlockd.Wait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	checkDelayed(t, time.Since(killed))
	mustRelease(t, l)
}

func TestClientAKilledLeaderWithALockDelayKeepsTheElectionThatLong(t *testing.T) {
	c, name := dial(t), election()
	child, _ := leaderInAChild(t, name, lockDelay)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	killed := time.Now()
	l := campaign(t, c, name, "pod-1", nil, redlockd.Wait(10*time.Second))
	checkDelayed(t, time.Since(killed))
	mustResign(t, l)
}

func TestClientAReleaseOrAResignationFreesALockWithADelayAtOnce(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	l, err := c.Hold(ctx, name, redlockd.LockDelay(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	mustRelease(t, l)
	free(t, c, name, "a release with a lock delay")
	leader := campaign(t, c, name, "pod-1", nil, redlockd.LockDelay(30*time.Second))
	mustResign(t, leader)
	mustResign(t, campaign(t, c, name, "pod-2", nil, redlockd.Wait(time.Second)))
}

// Acquire with a LockDelay: a lease never released keeps another acquirer
// out until about its TTL plus the delay after it was taken.
func TestClientAnUnreleasedLeaseWithALockDelayKeepsOthersOutPastItsTTL(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	const ttl = time.Second
	taken := time.Now()
	if _, err := c.Acquire(ctx, name, redlockd.TTL(ttl), redlockd.LockDelay(lockDelay)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Acquire(ctx, name, redlockd.Wait(ttl+500*time.Millisecond)); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("taken before its TTL and lock delay ran out: %v", err)
	}
	l, err := c.Acquire(ctx, name, redlockd.Wait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(taken)
	mustRelease(t, l)
	if took < ttl+lockDelay-300*time.Millisecond || took > ttl+lockDelay+1500*time.Millisecond {
		t.Fatalf("taken %v after the first acquire; its TTL is %v and its lock delay %v", took, ttl, lockDelay)
	}
}

func TestClientAReleaseFreesAnAcquiredLockWithADelayAtOnce(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	l, err := c.Acquire(ctx, name, redlockd.TTL(time.Second), redlockd.LockDelay(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	mustRelease(t, l)
	free(t, c, name, "a release of an acquired lock with a lock delay")
}

func TestClientALockDelayOutOfRangeIsRefusedNamingIt(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	for _, bad := range []struct {
		delay time.Duration
		says  string
	}{
		{61 * time.Second, "invalid lock_delay: 1m 1s is outside the allowed range [0s, 1m]"},
		{-time.Second, "invalid lock_delay: -1s 0ns is not a valid non-negative duration"},
	} {
		if _, err := c.Acquire(ctx, name, redlockd.LockDelay(bad.delay)); !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("Acquire with %s: %v", bad.says, err)
		}
	}
	if _, err := c.AcquireMany(ctx, []string{name}, redlockd.LockDelay(time.Second)); !errors.Is(err, redlockd.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "invalid lock_delay: a set takes no lock delay") {
		t.Errorf("AcquireMany with a lock delay: %v", err)
	}
}
