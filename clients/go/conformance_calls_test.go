package redlockd_test

// The conformance scenarios' calls through the Go client's public API
// (clients/conformance/README.md#calls); conformance_test.go reads the
// files and checks the expectations, conformance_actions_test.go acts.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
	pb "github.com/redlockd/redlockd/clients/go/redlockdv1"
)

func str(args map[string]any, key string) string { s, _ := args[key].(string); return s }

func integer(args map[string]any, key string) (int64, bool) {
	n := number(args[key])
	if n == nil {
		return 0, false
	}
	return n.Int64(), true
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// term is a term argument: a decimal string or a bound uint64.
func term(args map[string]any) uint64 {
	if n := number(args["term"]); n != nil && n.IsUint64() {
		return n.Uint64()
	}
	return 0
}

// options are the lock options args name; ttl is the TTL asked (ms).
func options(args map[string]any) (opts []redlockd.LockOption, ttl int64) {
	ttl = 10000
	if n, ok := integer(args, "ttl_ms"); ok {
		ttl = n
		opts = append(opts, redlockd.TTL(ms(n)))
	}
	if n, ok := integer(args, "wait_ms"); ok {
		opts = append(opts, redlockd.Wait(ms(n)))
	}
	if n, ok := integer(args, "max_hold_ms"); ok {
		opts = append(opts, redlockd.MaxHold(ms(n)))
	}
	if n, ok := integer(args, "lock_delay_ms"); ok {
		opts = append(opts, redlockd.LockDelay(ms(n)))
	}
	if owner, ok := args["owner"].(string); ok {
		opts = append(opts, redlockd.Owner(owner))
	}
	if args["shared"] == true {
		opts = append(opts, redlockd.Shared())
	}
	if n, ok := integer(args, "permits"); ok {
		opts = append(opts, redlockd.Permits(int(n)))
	}
	if key, ok := args["reentrancy_key"].(string); ok {
		opts = append(opts, redlockd.ReentrancyKey(key))
	}
	return opts, ttl
}

func leaseFields(l *redlockd.Lease) map[string]any {
	return map[string]any{"acquired": true, "held": true, "token": l.FencingToken(), "shared": l.Shared(),
		"permits": l.Permits(), "slot": l.Slot(), "resource": l.Resource()}
}

// lease is the lease a step names: "a", or "s.1" (a set's member).
func (r *run) lease(name string) (*redlockd.Lease, int64, error) {
	set, member, isMember := strings.Cut(name, ".")
	b, ok := r.names[set]
	if !ok {
		return nil, 0, fmt.Errorf("nothing is bound as %s", set)
	}
	if isMember {
		i, _ := strconv.Atoi(member)
		leases, _ := b.handle.([]*redlockd.Lease)
		if i >= len(leases) {
			return nil, 0, fmt.Errorf("%s has no member %d", set, i)
		}
		return leases[i], b.ttl, nil
	}
	l, ok := b.handle.(*redlockd.Lease)
	if !ok {
		return nil, 0, fmt.Errorf("%s is not a lease", name)
	}
	return l, b.ttl, nil
}

// members is the set args name, or those of its members "members" lists.
func (r *run) members(args map[string]any) ([]*redlockd.Lease, int64, error) {
	b, ok := r.names[str(args, "set")]
	leases, _ := b.handle.([]*redlockd.Lease)
	if !ok || leases == nil {
		return nil, 0, fmt.Errorf("no set is bound as %v", args["set"])
	}
	list, ok := args["members"].([]any)
	if !ok {
		return leases, b.ttl, nil
	}
	some := make([]*redlockd.Lease, len(list))
	for i, m := range list {
		some[i] = leases[number(m).Int64()]
	}
	return some, b.ttl, nil
}

func codeOf(verb string, err error) string {
	switch {
	case errors.Is(err, redlockd.ErrInvalidArgument):
		return "INVALID_ARGUMENT"
	case errors.Is(err, redlockd.ErrFailedPrecondition):
		return "FAILED_PRECONDITION"
	case errors.Is(err, redlockd.ErrUnavailable):
		return "UNAVAILABLE"
	case errors.Is(err, redlockd.ErrNotAcquired) && verb == "campaign":
		return "NOT_ELECTED"
	case errors.Is(err, redlockd.ErrNotAcquired):
		return "NOT_ACQUIRED"
	}
	return fmt.Sprintf("another error (%T)", err)
}

func (r *run) call(ctx context.Context, c *redlockd.Client, verb string, args, expect map[string]any) (*bound, error) {
	result := func(fields map[string]any) (*bound, error) { return &bound{fields: fields}, nil }
	switch verb {
	case "acquire":
		opts, ttl := options(args)
		l, err := c.Acquire(ctx, str(args, "resource"), opts...)
		if errors.Is(err, redlockd.ErrNotAcquired) {
			return result(map[string]any{"acquired": false})
		} else if err != nil {
			return nil, err
		}
		return &bound{fields: leaseFields(l), handle: l, ttl: ttl}, nil
	case "extend":
		l, ttl, err := r.lease(str(args, "lease"))
		if err != nil {
			return nil, err
		}
		if n, ok := integer(args, "ttl_ms"); ok {
			ttl = n
		}
		extended, err := l.Extend(ctx, ms(ttl))
		if errors.Is(err, redlockd.ErrLockLost) {
			extended, err = false, nil // its validity had run out: Extend says so without asking
		}
		return &bound{fields: map[string]any{"extended": extended}}, err
	case "release":
		l, _, err := r.lease(str(args, "lease"))
		if err != nil {
			return nil, err
		}
		released, err := l.Release(ctx)
		return &bound{fields: map[string]any{"released": released}}, err
	case "inspect":
		reply, err := c.Inspect(ctx, str(args, "resource"))
		if err != nil {
			return nil, err
		}
		fields := map[string]any{"held": reply.Held, "readers": int64(reply.Readers), "permits": int64(reply.Permits), "permits_out": int64(reply.PermitsOut)}
		if h := reply.Holder; h != nil {
			fields["token"], fields["owner"] = h.FencingToken, h.Owner
		}
		return result(fields)
	case "acquire_many":
		opts, ttl := options(args)
		var names []string
		list, _ := args["resources"].([]any)
		for _, n := range list {
			names = append(names, n.(string))
		}
		leases, err := c.AcquireMany(ctx, names, opts...)
		if errors.Is(err, redlockd.ErrNotAcquired) {
			return result(map[string]any{"acquired": false})
		} else if err != nil {
			return nil, err
		}
		b := &bound{handle: leases, ttl: ttl}
		var resources, tokens []any
		for _, l := range leases {
			resources, tokens = append(resources, l.Resource()), append(tokens, l.FencingToken())
			b.members = append(b.members, leaseFields(l))
		}
		b.fields = map[string]any{"acquired": true, "count": len(leases), "resources": resources, "tokens": tokens}
		return b, nil
	case "extend_many":
		leases, ttl, err := r.members(args)
		if err != nil {
			return nil, err
		}
		if n, ok := integer(args, "ttl_ms"); ok {
			ttl = n
		}
		extended, err := c.ExtendMany(ctx, leases, ms(ttl))
		return &bound{fields: map[string]any{"extended": extended}}, err
	case "release_many":
		leases, _, err := r.members(args)
		if err != nil {
			return nil, err
		}
		released, err := c.ReleaseMany(ctx, leases)
		return &bound{fields: map[string]any{"released": released}}, err
	case "hold":
		opts, ttl := options(args)
		l, err := c.Hold(ctx, str(args, "resource"), opts...)
		if err != nil {
			return nil, err
		}
		return &bound{fields: leaseFields(l), handle: l, ttl: ttl}, nil
	case "release_hold":
		l, _, err := r.lease(str(args, "hold"))
		if err != nil {
			return nil, err
		}
		released, err := l.Release(ctx)
		if errors.Is(err, redlockd.ErrLockLost) {
			err = nil // Release says the loss with its false as well
		}
		return &bound{fields: map[string]any{"released": released}}, err
	case "campaign":
		opts, _ := options(args)
		var value []byte
		if v, ok := args["value"].(string); ok {
			value = []byte(v)
		}
		l, err := c.Campaign(ctx, str(args, "election"), str(args, "candidate"), value, opts...)
		if err != nil {
			return nil, err
		}
		return &bound{fields: map[string]any{"elected": true, "term": l.Term(), "value": string(l.Value())}, handle: l}, nil
	case "leader":
		leader, err := c.Leader(ctx, str(args, "election"))
		if err != nil {
			return nil, err
		}
		return result(leaderFields(leader))
	case "proclaim":
		if name, ok := args["leadership"].(string); ok {
			l, ok := r.names[name].handle.(*redlockd.Leadership)
			if !ok {
				return nil, fmt.Errorf("%s is not a leadership", name)
			}
			return &bound{}, l.Proclaim(ctx, []byte(str(args, "value")))
		}
		return &bound{}, c.Proclaim(ctx, str(args, "election"), term(args), []byte(str(args, "value")))
	case "resign":
		if name, ok := args["leadership"].(string); ok {
			l, ok := r.names[name].handle.(*redlockd.Leadership)
			if !ok {
				return nil, fmt.Errorf("%s is not a leadership", name)
			}
			return &bound{}, l.Resign(ctx)
		}
		return &bound{}, c.Resign(ctx, str(args, "election"), term(args))
	case "observe":
		return r.follow(ctx, func(ctx context.Context, out chan<- item) {
			for leader, err := range c.Observe(ctx, str(args, "election")) {
				if !send(ctx, out, item{leaderFields(leader), err}) {
					return
				}
			}
		})
	case "watch":
		return r.follow(ctx, func(ctx context.Context, out chan<- item) {
			for change, err := range c.Watch(ctx, str(args, "resource")) {
				if !send(ctx, out, item{changeFields(change), err}) {
					return
				}
			}
		})
	case "next":
		s, ok := r.names[str(args, "stream")].handle.(*stream)
		if !ok {
			return nil, fmt.Errorf("%v is not a stream", args["stream"])
		}
		within := int64(10000)
		if n, ok := integer(args, "within_ms"); ok {
			within = n
		}
		deadline := time.After(ms(within))
		for seen := 0; ; seen++ {
			select {
			case it := <-s.items:
				if it.err != nil {
					return nil, fmt.Errorf("the stream ended: %w", it.err)
				}
				if r.meets(it.fields, expect) == nil {
					return result(it.fields)
				}
			case <-deadline:
				return nil, fmt.Errorf("%d states in %d ms, none as expected", seen, within)
			}
		}
	case "close":
		s, ok := r.names[str(args, "stream")].handle.(*stream)
		if !ok {
			return nil, fmt.Errorf("%v is not a stream", args["stream"])
		}
		s.stop()
		return result(nil)
	}
	return nil, fmt.Errorf("no such call %q", verb)
}

func leaderFields(l redlockd.Leader) map[string]any {
	if !l.Elected {
		return map[string]any{"elected": false}
	}
	return map[string]any{"elected": true, "candidate": l.Candidate, "value": string(l.Value), "term": l.Term}
}

func changeFields(w *pb.WatchResponse) map[string]any {
	if w == nil {
		return nil
	}
	fields := map[string]any{"kind": strings.TrimPrefix(w.Event.String(), "WATCH_EVENT_"), "held": w.Held,
		"readers": int64(w.Readers), "permits": int64(w.Permits), "permits_out": int64(w.PermitsOut)}
	if h := w.Holder; h != nil {
		fields["token"], fields["owner"] = h.FencingToken, h.Owner
	}
	return fields
}

type item struct {
	fields map[string]any
	err    error
}

// stream is an Observe or Watch read by a goroutine into items.
type stream struct {
	items chan item
	stop  context.CancelFunc
}

func send(ctx context.Context, out chan<- item, it item) bool {
	select {
	case out <- it:
		return it.err == nil
	case <-ctx.Done():
		return false
	}
}

// follow starts a stream; its first state (or error) is the call's result.
func (r *run) follow(ctx context.Context, read func(context.Context, chan<- item)) (*bound, error) {
	ctx, stop := context.WithCancel(ctx)
	s := &stream{items: make(chan item, 64), stop: stop}
	r.cleanup = append(r.cleanup, stop)
	go read(ctx, s.items)
	select {
	case first := <-s.items:
		if first.err != nil {
			return nil, first.err
		}
		return &bound{fields: first.fields, handle: s}, nil
	case <-time.After(10 * time.Second):
		return nil, errors.New("no first state in 10 s")
	}
}
