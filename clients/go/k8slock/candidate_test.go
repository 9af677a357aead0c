package k8slock_test

// The candidates: this test binary, run again as a child process with
// K8SLOCK_CANDIDATE set, is one candidate of an election, in one of two
// modes (K8SLOCK_MODE):
//
//   - "elector": client-go's leaderelection.RunOrDie on a k8slock.Lock;
//     after it returns, the Lock is released (a clean exit hands over at
//     once);
//   - "manager": a controller-runtime Manager, no controllers, with the
//     Lock as its LeaderElectionResourceLockInterface and one
//     leader-election Runnable, released on cancel.
//
// Each says what happens on stdout, one line per event, for the checker
// in the parent (election_test.go): "k8slock-event KIND IDENTITY UNIXNANO
// TERM". SIGTERM ends it cleanly (exit 0); a leadership lost ends it with
// exit 3.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	redlockd "github.com/redlockd/redlockd/clients/go"
	"github.com/redlockd/redlockd/clients/go/k8slock"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The timing every candidate uses: LeaseDuration > RenewDeadline +
// RetryPeriod, as the package requires (0.5 s to spare).
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

func TestMain(m *testing.M) {
	if id := os.Getenv("K8SLOCK_CANDIDATE"); id != "" {
		os.Exit(candidate(id, os.Getenv("K8SLOCK_RESOURCE"), os.Getenv("K8SLOCK_MODE")))
	}
	os.Exit(m.Run())
}

var emitting sync.Mutex

// emit writes one event line for the checker: one write to stdout.
func emit(kind, id string, term uint64) {
	emitting.Lock()
	defer emitting.Unlock()
	fmt.Fprintf(os.Stdout, "k8slock-event %s %s %d %d\n", kind, id, time.Now().UnixNano(), term)
}

func candidate(id, resource, mode string) int {
	say := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "candidate %s: "+format+"\n", append([]any{id}, args...)...)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	c, err := redlockd.Dial(ctx, "")
	if err != nil {
		say("%v", err)
		return 2
	}
	defer c.Close()
	lock, err := k8slock.New(c, resource, id)
	if err != nil {
		say("%v", err)
		return 2
	}
	var lost bool
	switch mode {
	case "elector":
		lost = elector(ctx, lock)
	case "manager":
		lost, err = managed(ctx, lock)
		if err != nil {
			say("the manager: %v", err)
			return 2
		}
	default:
		say("K8SLOCK_MODE is %q: elector or manager", mode)
		return 2
	}
	if lost {
		say("the leadership was lost")
		return 3
	}
	return 0
}

// elector runs client-go's RunOrDie once, then releases the lock; it
// reports whether a leadership ended before ctx did.
func elector(ctx context.Context, lock *k8slock.Lock) (lost bool) {
	id := lock.Identity()
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: leaseDuration,
		RenewDeadline: renewDeadline,
		RetryPeriod:   retryPeriod,
		Name:          "k8slock-test",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				leading, term := lock.Leading(ctx)
				emit("started", id, term)
				<-leading.Done()
				emit("ended", id, term)
			},
			OnStoppedLeading: func() {
				emit("stopped", id, 0)
				lost = lost || ctx.Err() == nil
			},
		},
	})
	release, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if held, _ := lock.Release(release); held {
		emit("released", id, 0)
	}
	return lost
}

// managed runs a controller-runtime Manager until ctx ends; it reports
// whether the leadership was lost first.
func managed(ctx context.Context, lock *k8slock.Lock) (lost bool, err error) {
	ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	klog.SetLogger(logr.Discard())
	lease, renew, retry := leaseDuration, renewDeadline, retryPeriod
	// A rest.Config that nothing contacts: a Manager with no controllers
	// starts no informer, so it never calls the API server.
	mgr, err := manager.New(&rest.Config{Host: "https://127.0.0.1:9"}, manager.Options{
		LeaderElection:                      true,
		LeaderElectionID:                    "k8slock-test",
		LeaderElectionResourceLockInterface: lock,
		LeaderElectionReleaseOnCancel:       true,
		LeaseDuration:                       &lease,
		RenewDeadline:                       &renew,
		RetryPeriod:                         &retry,
		Metrics:                             metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:              "0",
	})
	if err != nil {
		return false, err
	}
	id := lock.Identity()
	err = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		leading, term := lock.Leading(ctx)
		emit("started", id, term)
		<-leading.Done()
		emit("stopped", id, term)
		return nil
	}))
	if err != nil {
		return false, err
	}
	err = mgr.Start(ctx)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "candidate %s: the manager stopped: %v\n", id, err)
		return true, nil
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return false, err
}
