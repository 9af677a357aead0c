package redlockd_test

// LockDelay on Hold and Campaign (docs/design.md#lock-delay): a holder that
// dies keeps its lock that much longer; a release frees it at once.

import (
	"bufio"
	"context"
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
