package redlockd_test

// Several resources at once: AcquireMany (all or none), each member an
// ordinary Lease, ReleaseMany, and the set's checks.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func members(base string, names ...string) []string {
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = base + "/" + name
	}
	return out
}

func resourcesOf(leases []*redlockd.Lease) []string {
	out := make([]string, len(leases))
	for i, l := range leases {
		out[i] = l.Resource()
	}
	return out
}

// assertFree fails unless a plain Acquire gets each name (and gives it back).
func assertFree(t *testing.T, c *redlockd.Client, names ...string) {
	t.Helper()
	for _, name := range names {
		l, err := c.Acquire(context.Background(), name)
		if err != nil {
			t.Fatalf("%s is not free: %v", name, err)
		}
		mustRelease(t, l)
	}
}

// assertHeld fails unless a plain Acquire of each name is ErrNotAcquired.
func assertHeld(t *testing.T, c *redlockd.Client, names ...string) {
	t.Helper()
	for _, name := range names {
		l, err := c.Acquire(context.Background(), name)
		if !errors.Is(err, redlockd.ErrNotAcquired) {
			if l != nil {
				mustRelease(t, l)
			}
			t.Fatalf("%s is not held: %v", name, err)
		}
	}
}

// onMasters is the lock values the masters hold for names (a lock key is
// redlockd:{<tag>}:lock:<resource>, its value the first line) and on how many
// masters each name is held.
func onMasters(t *testing.T, names []string) (map[string]bool, []int) {
	t.Helper()
	values, copies := map[string]bool{}, make([]int, len(names))
	for i, name := range names {
		for _, port := range masterPorts() {
			if stored := lockValue(t, port, name); stored != "" {
				values[strings.SplitN(stored, "\n", 2)[0]] = true
				copies[i]++
			}
		}
	}
	return values, copies
}

func TestClientASetIsGrantedSortedWithOneValueAndATokenPerMember(t *testing.T) {
	c, ctx := dial(t), context.Background()
	m := members(resource(), "a", "b", "c")
	a, b, cc := m[0], m[1], m[2]
	earlier := map[string]uint64{}
	for _, name := range m {
		l, err := c.Acquire(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		mustRelease(t, l)
		earlier[name] = l.FencingToken()
	}
	leases, err := c.AcquireMany(ctx, []string{cc, a, b, a}, redlockd.TTL(10*time.Second), redlockd.Owner("go-set"))
	if err != nil {
		t.Fatalf("a free set: %v", err)
	}
	if got := resourcesOf(leases); !reflect.DeepEqual(got, m) {
		t.Fatalf("the members %q, want %q (sorted, without repeats)", got, m)
	}
	// Each member's token is its resource's: above that resource's last one.
	// (Tokens rise per resource, from the counter of its bucket, so members
	// in different buckets may share a value: docs/design.md#the-fencing-token.)
	for _, l := range leases {
		if l.FencingToken() <= earlier[l.Resource()] {
			t.Fatalf("%v: the token is not above the resource's last one %d", l, earlier[l.Resource()])
		}
		if r := l.Remaining(); r <= 9*time.Second || r > 10*time.Second {
			t.Fatalf("%v: %v remain", l, r)
		}
	}
	values, copies := onMasters(t, m)
	if len(values) != 1 {
		t.Fatalf("the members hold %d values", len(values))
	}
	for i, n := range copies {
		if n < 3 {
			t.Fatalf("%s is held on %d masters", m[i], n)
		}
	}
	for value := range values {
		if strings.Contains(fmt.Sprintf("%v %#v %s", leases, leases[0], leases[1]), value) {
			t.Fatal("the value was shown")
		}
	}
	view, err := c.Inspect(ctx, b)
	if err != nil || view.Holder == nil || view.Holder.Owner != "go-set" || !reflect.DeepEqual(view.SetMembers, m) {
		t.Fatalf("inspect of a member: %v %v", view, err)
	}
	assertHeld(t, c, m...)
	if held, err := c.ReleaseMany(ctx, leases); !held || err != nil {
		t.Fatalf("release many: %v %v", held, err)
	}
	for _, l := range leases {
		if l.Err() != context.Canceled {
			t.Fatalf("a released member's context: %v", l.Err())
		}
	}
	assertFree(t, c, m...)
}

func TestClientASetWithAMemberHeldElsewhereIsNotAcquiredAndHoldsNoneOfTheOthers(t *testing.T) {
	c, ctx := dial(t), context.Background()
	m := members(resource(), "a", "b", "c")
	holder, err := c.Acquire(ctx, m[1])
	if err != nil {
		t.Fatal(err)
	}
	leases, err := c.AcquireMany(ctx, m)
	var refused *redlockd.Error
	if !errors.Is(err, redlockd.ErrNotAcquired) || leases != nil || !errors.As(err, &refused) || len(refused.Nodes) != 5 {
		t.Fatalf("a set with a member held elsewhere: %v %v", leases, err)
	}
	assertFree(t, c, m[0], m[2])
	// Waiting never holds part of the set: its free members stay free
	// while it waits; once the held one is released, the whole set is
	// granted.
	type result struct {
		leases []*redlockd.Lease
		err    error
	}
	done := make(chan result, 1)
	go func() {
		leases, err := c.AcquireMany(ctx, m, redlockd.Wait(10*time.Second))
		done <- result{leases, err}
	}()
	time.Sleep(500 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("the set did not wait: %v %v", r.leases, r.err)
	default:
	}
	assertFree(t, c, m[0], m[2])
	mustRelease(t, holder)
	var r result
	select {
	case r = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the set was not granted after the holder released")
	}
	if r.err != nil || !reflect.DeepEqual(resourcesOf(r.leases), m) {
		t.Fatalf("after the holder released: %v %v", r.leases, r.err)
	}
	if r.leases[1].FencingToken() <= holder.FencingToken() {
		t.Fatalf("token %d after the holder's %d", r.leases[1].FencingToken(), holder.FencingToken())
	}
	if held, err := c.ReleaseMany(ctx, r.leases); !held || err != nil {
		t.Fatalf("release many: %v %v", held, err)
	}
}

func TestClientEachMemberOfASetIsAnOrdinaryLeaseReleasedOnItsOwn(t *testing.T) {
	c, ctx := dial(t), context.Background()
	m := members(resource(), "a", "b", "c")
	leases, err := c.AcquireMany(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	first, second, third := leases[0], leases[1], leases[2]
	if ok, err := second.Extend(ctx, 20*time.Second); !ok || err != nil || second.Remaining() <= 19*time.Second {
		t.Fatalf("extend a member: %v %v, %v remain", ok, err, second.Remaining())
	}
	mustRelease(t, first)
	again, err := c.Acquire(ctx, m[0])
	if err != nil {
		t.Fatalf("releasing one member did not free it: %v", err)
	}
	if again.FencingToken() <= first.FencingToken() {
		t.Fatalf("token %d after the member's %d", again.FencingToken(), first.FencingToken())
	}
	mustRelease(t, again)
	assertHeld(t, c, m[1], m[2])
	mustRelease(t, third)
	assertFree(t, c, m[2])
	assertHeld(t, c, m[1])
	mustRelease(t, second)
	assertFree(t, c, m[1])
}

func TestClientReleaseManySaysFalseWhenAMemberWasNoLongerHeld(t *testing.T) {
	c, ctx := dial(t), context.Background()
	m := members(resource(), "a", "b")
	leases, err := c.AcquireMany(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	mustRelease(t, leases[0])
	if held, err := c.ReleaseMany(ctx, leases); held || err != nil {
		t.Fatalf("release many after one member was released: %v %v", held, err)
	}
	assertFree(t, c, m...)
}

// deleteLockEverywhere deletes name's lock key on every master, as if its
// TTL had run out or another holder had taken it over.
func deleteLockEverywhere(t *testing.T, name string) {
	t.Helper()
	deleted := 0
	for _, port := range masterPorts() {
		n, err := strconv.Atoi(redisCLI(t, port, "EVAL", `
local n = 0
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do n = n + redis.call('DEL', key) end
return n`, "0", "redlockd:{*}:lock:"+globEscaped(name)))
		if err != nil {
			t.Fatal(err)
		}
		deleted += n
	}
	if deleted < 3 {
		t.Fatalf("the lock of %s was on %d masters, not a majority", name, deleted)
	}
}

func TestClientExtendManyMovesEveryValidityAndLosesAMemberNotExtended(t *testing.T) {
	c, ctx, base := dial(t), context.Background(), resource()
	leases, err := c.AcquireMany(ctx, members(base, "a", "b", "c"), redlockd.TTL(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.ExtendMany(ctx, leases, 20*time.Second); !ok || err != nil {
		t.Fatalf("extending a held set: %v %v", ok, err)
	}
	for _, l := range leases {
		if left := l.Remaining(); left < 15*time.Second {
			t.Fatalf("%v: %v left after extending to 20 s", l, left)
		}
	}
	// A member deleted on the masters (as if taken over) is not extended:
	// its Context ends with ErrLockLost at once, well before its validity.
	deleteLockEverywhere(t, leases[1].Resource())
	if ok, err := c.ExtendMany(ctx, leases, 20*time.Second); ok || err != nil {
		t.Fatalf("extending a set with a member gone: %v %v", ok, err)
	}
	select {
	case <-leases[1].Context().Done():
	case <-time.After(time.Second):
		t.Fatal("the member not extended is not lost")
	}
	if !errors.Is(leases[1].Err(), redlockd.ErrLockLost) || leases[0].Err() != nil || leases[2].Err() != nil {
		t.Fatalf("after the extension: %v, %v, %v", leases[0].Err(), leases[1].Err(), leases[2].Err())
	}
	if _, err := c.ExtendMany(ctx, nil, time.Second); !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), "invalid leases: 0 leases") {
		t.Fatalf("no lease: %v", err)
	}
	if _, err := c.ExtendMany(ctx, leases, -time.Second); !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), "invalid ttl") {
		t.Fatalf("a negative ttl: %v", err)
	}
	if held, err := c.ReleaseMany(ctx, []*redlockd.Lease{leases[0], leases[2]}); !held || err != nil {
		t.Fatalf("releasing the members still held: %v %v", held, err)
	}
}

func TestClientSeventeenResourcesAndBadMembersAreRefusedBeforeSendingInTheDaemonsWords(t *testing.T) {
	c, ctx := dial(t), context.Background()
	base := resource()
	seventeen := make([]string, 17)
	repeated := make([]string, 17)
	for i := range seventeen {
		seventeen[i] = fmt.Sprintf("%s/%02d", base, i)
		repeated[i] = base + "/a"
	}
	nowhere, err := redlockd.Dial(ctx, "127.0.0.1:1") // nothing listens: a sent call would fail otherwise
	if err != nil {
		t.Fatal(err)
	}
	defer nowhere.Close()
	for _, bad := range []struct {
		resources []string
		says      string
	}{
		{seventeen, "invalid resources: 17 names; 1 to 16 are allowed"},
		{repeated, "invalid resources: 17 names; 1 to 16 are allowed"},
		{nil, "invalid resources: 0 names; 1 to 16 are allowed"},
		{[]string{base + "/a", ""}, "invalid resources: [1] is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8"},
		{[]string{base + "/a", base + "/b", "tab\there"}, `invalid resources: [2] contains the control character '\t'; only printable UTF-8 is allowed`},
	} {
		_, err := c.Stub().AcquireMany(c.Outgoing(ctx), &pb.AcquireManyRequest{Resources: bad.resources})
		if s := status.Convert(err); s.Code() != codes.InvalidArgument || s.Message() != bad.says {
			t.Errorf("the daemon: want %q, got %v", bad.says, err)
		}
		leases, err := nowhere.AcquireMany(ctx, bad.resources)
		var e *redlockd.Error
		if leases != nil || !errors.Is(err, redlockd.ErrInvalidArgument) || !errors.As(err, &e) || e.Message != bad.says {
			t.Errorf("the client: want %q, got %v", bad.says, err)
		}
	}
	for _, opt := range []redlockd.LockOption{redlockd.Shared(), redlockd.Permits(2), redlockd.ReentrancyKey("k"), redlockd.Wait(-time.Second)} {
		if _, err := nowhere.AcquireMany(ctx, []string{base + "/a"}, opt); !errors.Is(err, redlockd.ErrInvalidArgument) {
			t.Errorf("an option a set does not take: %v", err)
		}
	}
	if _, err := nowhere.ReleaseMany(ctx, nil); !errors.Is(err, redlockd.ErrInvalidArgument) || !strings.Contains(err.Error(), "0 leases; 1 to 16") {
		t.Errorf("release many of none: %v", err)
	}
	leases, err := c.AcquireMany(ctx, seventeen[:redlockd.MaxSet])
	if err != nil || len(leases) != 16 {
		t.Fatalf("sixteen names: %d leases, %v", len(leases), err)
	}
	other, err := c.Acquire(ctx, base+"/other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReleaseMany(ctx, []*redlockd.Lease{leases[0], other}); !errors.Is(err, redlockd.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "more than one value") {
		t.Errorf("release many of two sets: %v", err)
	}
	if held, err := c.ReleaseMany(ctx, leases); !held || err != nil {
		t.Fatalf("release many of sixteen: %v %v", held, err)
	}
	mustRelease(t, other)
}
