package redlockd_test

// The tests run against a real daemon and five real masters, started by
// scripts/with-dev-daemon (test.sh does it, and runs each group against a
// daemon of its own: TestClient*, TestKillsMasters*, TestSecure*).

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// resource is a fresh name under "examples/", the prefix the secure
// daemon's tenant may lock.
func resource() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "examples/go-" + hex.EncodeToString(b)
}

func TestClientASecondHolderIsRefusedAndTheNextGetsALargerToken(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	first, err := c.Acquire(ctx, name, redlockd.TTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Acquire(ctx, name); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("a second holder: %v", err)
	}
	if strings.Contains(first.String(), "value") || !first.ValidUntil().After(time.Now()) {
		t.Fatalf("%v, valid until %v", first, first.ValidUntil())
	}
	if ok, err := first.Extend(ctx, 20*time.Second); !ok || err != nil {
		t.Fatalf("extend: %v %v", ok, err)
	}
	if ok, err := first.Release(ctx); !ok || err != nil {
		t.Fatalf("release: %v %v", ok, err)
	}
	second, err := c.Acquire(ctx, name)
	if err != nil || second.FencingToken() <= first.FencingToken() {
		t.Fatalf("second: %v %v", second, err)
	}
	second.Release(ctx)
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
	if ok, err := holding.Release(ctx); !ok || err != nil {
		t.Fatalf("release: %v %v", ok, err)
	}
	wg.Wait()
	if strings.Join(order, ",") != "second,third" || !(holding.FencingToken() < tokens[0] && tokens[0] < tokens[1]) {
		t.Fatalf("order %v, tokens %d then %v", order, holding.FencingToken(), tokens)
	}
}

func TestClientReleasedOnExitAndOnAnError(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	failure := errors.New("the work failed")
	if err := c.Do(ctx, name, func(context.Context, *redlockd.Lease) error { return failure }, redlockd.TTL(30*time.Second)); err != failure {
		t.Fatalf("Do: %v", err)
	}
	// TTL 30 s: only a release frees it this soon.
	again, err := c.Acquire(ctx, name, redlockd.Wait(5*time.Second))
	if err != nil {
		t.Fatalf("a session whose function failed kept its lock: %v", err)
	}
	again.Release(ctx)
	if _, err := c.Hold(ctx, name, redlockd.Wait(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	taken, _ := c.Acquire(ctx, resource())
	_ = taken
	if _, err := c.Hold(ctx, name, redlockd.Wait(300*time.Millisecond)); !errors.Is(err, redlockd.ErrNotAcquired) {
		t.Fatalf("a held lock: %v", err)
	}
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
	holder.Process.Signal(syscall.SIGKILL)
	// TTL 30 s: only the daemon seeing the stream break frees it this soon.
	l, err := c.Acquire(ctx, name, redlockd.Wait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	l.Release(ctx)
}

// TestHelperHolder holds a lock for the kill -9 test, in a process of its own.
func TestHelperHolder(t *testing.T) {
	name := os.Getenv("REDLOCKD_TEST_HOLD")
	if name == "" {
		t.Skip("only as the kill -9 test's child")
	}
	c := dial(t)
	if _, err := c.Hold(context.Background(), name, redlockd.TTL(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held\n")
	time.Sleep(60 * time.Second)
}

func TestClientTokensAbove2To53AreExact(t *testing.T) {
	c, ctx := dial(t), context.Background()
	counter := uint64(1)<<53/16 + 12345
	for _, port := range strings.Fields(os.Getenv("REDLOCKD_DEV_MASTER_PORTS")) {
		if out, err := exec.Command("redis-cli", "-p", port, "SET", "redlockd:fence", strconv.FormatUint(counter, 10)).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	l, err := c.Acquire(ctx, resource())
	if err != nil {
		t.Fatal(err)
	}
	// The counter every master returned, and the index of the first of them
	// that answered in time (the round ends at a quorum).
	if l.FencingToken()/16 != counter+1 || l.FencingToken()%16 >= 5 || l.FencingToken() <= 1<<53 {
		t.Fatalf("token %d for counter %d", l.FencingToken(), counter)
	}
	l.Release(ctx)
}

func TestClientBadArgumentsFailBeforeAnythingIsSent(t *testing.T) {
	ctx := context.Background()
	nowhere, err := redlockd.Dial(ctx, "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer nowhere.Close()
	_, err = nowhere.Acquire(ctx, "")
	if !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), "resource") || !strings.Contains(err.Error(), "1 to 256 bytes") {
		t.Fatalf("an empty resource: %v", err)
	}
	c := dial(t)
	if _, err := c.Acquire(ctx, resource(), redlockd.TTL(time.Millisecond)); !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), "ttl") {
		t.Fatalf("a 1 ms TTL: %v", err)
	}
}

func TestKillsMastersLostBeforeValidUntilAndUnavailableSaysWhatEachMasterSaid(t *testing.T) {
	c, ctx, name := dial(t), context.Background(), resource()
	l, err := c.Hold(ctx, name, redlockd.TTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	lastValid := l.ValidUntil()
	stop := make(chan struct{})
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				if l.Err() == nil {
					if v := l.ValidUntil(); v.After(lastValid) {
						lastValid = v
					}
				}
			}
		}
	}()
	for _, pid := range strings.Fields(os.Getenv("REDLOCKD_DEV_MASTER_PIDS"))[:3] {
		n, _ := strconv.Atoi(pid)
		syscall.Kill(n, syscall.SIGKILL)
	}
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
	if !errors.Is(l.Err(), redlockd.ErrLockLost) {
		t.Fatalf("cause: %v", l.Err())
	}
	if _, err := l.Release(ctx); !errors.Is(err, redlockd.ErrLockLost) {
		t.Fatalf("release after the loss: %v", err)
	}
	started := time.Now()
	_, err = c.Acquire(ctx, name+"-2", redlockd.Wait(time.Second))
	var failed *redlockd.Error
	if !errors.As(err, &failed) || !errors.Is(err, redlockd.ErrUnavailable) || failed.Needed != 3 || len(failed.Nodes) != 5 {
		t.Fatalf("without a quorum: %#v", err)
	}
	if time.Since(started) < 800*time.Millisecond {
		t.Fatal("the wait was not retried")
	}
}

func TestSecureTLSAndABearerToken(t *testing.T) {
	if os.Getenv("REDLOCKD_CA") == "" || os.Getenv("REDLOCKD_TOKEN") == "" {
		t.Fatal("needs the --secure daemon")
	}
	c, ctx, name := dial(t), context.Background(), resource()
	l, err := c.Acquire(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	l.Release(ctx)
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
}
