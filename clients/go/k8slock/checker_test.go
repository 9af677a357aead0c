package k8slock_test

// The harness and the independent checker: candidates run as real OS
// processes (candidate_test.go); the parent reads their event lines, kills
// them (SIGKILL) or stops them (SIGTERM), and checks, over every
// process's OnStartedLeading and OnStoppedLeading (a killed process's
// leadership ends when it is reaped), that at most one leads at any time
// and that each leader's term is larger than the one before; and, each
// time one starts leading, that the daemon says it holds the lock with
// that term.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

type event struct {
	kind, id string
	at       time.Time
	term     uint64
}

func (e event) String() string {
	return fmt.Sprintf("%s %s at %s term %d", e.kind, e.id, e.at.Format("15:04:05.000"), e.term)
}

type process struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{} // closed once reaped
	err    error         // Wait's
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// election is one resource's candidates and what they said.
type election struct {
	t         *testing.T
	client    *redlockd.Client
	resource  string
	mode      string
	mu        sync.Mutex
	events    []event
	arrived   chan struct{} // signalled at each event
	processes map[string]*process
}

func newElection(t *testing.T, mode string) *election {
	e := &election{t: t, client: dial(t), resource: resource(), mode: mode,
		arrived: make(chan struct{}, 1), processes: map[string]*process{}}
	t.Cleanup(func() {
		for _, p := range e.processes {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			for id, p := range e.processes {
				t.Logf("candidate %s's stderr (last 3000 bytes):\n%s", id, tail(p.stderr.String(), 3000))
			}
			t.Logf("events:\n%s", e.describe())
		}
	})
	return e
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// start runs candidate id as a process of its own.
func (e *election) start(id string) {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "K8SLOCK_CANDIDATE="+id, "K8SLOCK_RESOURCE="+e.resource, "K8SLOCK_MODE="+e.mode)
	p := &process{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.processes[id] = p
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if got, ok := parse(lines.Text()); ok {
				e.add(got)
			}
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
}

// parse reads "k8slock-event KIND ID UNIXNANO TERM".
func parse(line string) (event, bool) {
	f := strings.Fields(line)
	if len(f) != 5 || f[0] != "k8slock-event" {
		return event{}, false
	}
	nanos, err1 := strconv.ParseInt(f[3], 10, 64)
	term, err2 := strconv.ParseUint(f[4], 10, 64)
	if err1 != nil || err2 != nil {
		return event{}, false
	}
	return event{kind: f[1], id: f[2], at: time.Unix(0, nanos), term: term}, true
}

func (e *election) add(got event) {
	e.mu.Lock()
	e.events = append(e.events, got)
	e.mu.Unlock()
	select {
	case e.arrived <- struct{}{}:
	default:
	}
}

// next waits up to timeout for an event of kind after the first `from`
// events; it returns it and its index.
func (e *election) next(kind string, from int, timeout time.Duration) (event, int) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		e.mu.Lock()
		for i := from; i < len(e.events); i++ {
			if e.events[i].kind == kind {
				got := e.events[i]
				e.mu.Unlock()
				return got, i
			}
		}
		e.mu.Unlock()
		select {
		case <-e.arrived:
		case <-time.After(time.Until(deadline)):
			e.t.Fatalf("no %q event within %v", kind, timeout)
		}
	}
}

func (e *election) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.events)
}

// leader waits for the next leader after the first `from` events and
// checks that the daemon says it holds the lock with its term.
func (e *election) leader(from int, timeout time.Duration) (event, int) {
	e.t.Helper()
	got, i := e.next("started", from, timeout)
	view, err := e.client.Inspect(context.Background(), e.resource)
	if err != nil {
		e.t.Fatal(err)
	}
	if h := view.GetHolder(); h.GetOwner() != got.id || h.GetFencingToken() < got.term || got.term == 0 {
		e.t.Fatalf("%v, but the daemon says the holder is %q with token %d", got, h.GetOwner(), h.GetFencingToken())
	}
	return got, i
}

// kill sends SIGKILL to candidate id and returns when it was reaped: its
// leadership, if any, ends there.
func (e *election) kill(id string) time.Time {
	p := e.processes[id]
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		e.t.Fatal(err)
	}
	<-p.done
	dead := time.Now()
	e.add(event{kind: "killed", id: id, at: dead})
	return dead
}

// stop sends SIGTERM to candidate id and waits up to 15 s for it to exit 0.
func (e *election) stop(id string) {
	e.t.Helper()
	p := e.processes[id]
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		e.t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		e.t.Fatalf("candidate %s did not exit within 15 s of SIGTERM", id)
	}
	if p.err != nil {
		e.t.Fatalf("candidate %s exited with %v after SIGTERM", id, p.err)
	}
}

// check is the checker: leaderships, from each process's "started" to its
// "stopped" (or "killed"), never overlap, and terms increase.
func (e *election) check() {
	e.t.Helper()
	type leadership struct {
		id         string
		start, end time.Time // end zero: still leading
		term       uint64
	}
	var all []*leadership
	open := map[string]*leadership{}
	e.mu.Lock()
	for _, got := range e.events {
		switch got.kind {
		case "started":
			if open[got.id] != nil {
				e.t.Errorf("%v while it already led", got)
			}
			open[got.id] = &leadership{id: got.id, start: got.at, term: got.term}
			all = append(all, open[got.id])
		case "stopped", "killed":
			if l := open[got.id]; l != nil {
				l.end = got.at
				delete(open, got.id)
			}
		}
	}
	e.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].start.Before(all[j].start) })
	for i := 1; i < len(all); i++ {
		before, after := all[i-1], all[i]
		if before.end.IsZero() || !before.end.Before(after.start) {
			e.t.Errorf("two leaders at once: %s (term %d) from %s to %v, and %s (term %d) from %s",
				before.id, before.term, before.start.Format("15:04:05.000"), before.end.Format("15:04:05.000"),
				after.id, after.term, after.start.Format("15:04:05.000"))
		}
		if after.term <= before.term {
			e.t.Errorf("%s led with term %d after %s's term %d: terms must increase", after.id, after.term, before.id, before.term)
		}
	}
}

func (e *election) describe() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, got := range e.events {
		fmt.Fprintln(&b, got)
	}
	return b.String()
}
