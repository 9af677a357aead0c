package redlockd_test

// The conformance scenarios (clients/conformance/README.md): the same
// calls, read from ../conformance/scenarios/*.json, that every client plays
// against a real daemon. One line per scenario on stdout: PASS, SKIP or FAIL.
// TestClientConformance plays the scenarios that share a daemon;
// TestConformanceOnOwnDaemon plays the one REDLOCKD_CONFORMANCE_SCENARIO
// names on a daemon of its own (test.sh runs it once per such scenario).
// The calls are in conformance_calls_test.go, the actions (killing masters,
// seeding the fence counters) in conformance_actions_test.go.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

type scenario struct {
	ID    string           `json:"id"`
	Needs []string         `json:"needs"`
	Steps []map[string]any `json:"steps"`
}

func (s scenario) ownDaemon() bool { return slices.Contains(s.Needs, "own-daemon") }

// scenarios reads every scenario file, numbers kept exact (json.Number).
func scenarios(t *testing.T) []scenario {
	t.Helper()
	files, err := filepath.Glob("../conformance/scenarios/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files in ../conformance/scenarios (%v)", err)
	}
	sort.Strings(files)
	var all []scenario
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		decoder := json.NewDecoder(f)
		decoder.UseNumber()
		var doc struct{ Scenarios []scenario }
		err = decoder.Decode(&doc)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		all = append(all, doc.Scenarios...)
	}
	return all
}

func TestClientConformance(t *testing.T) {
	c := dial(t)
	played := 0
	for _, s := range scenarios(t) {
		if s.ownDaemon() {
			continue // TestConformanceOnOwnDaemon, on a daemon of its own
		}
		played++
		if err := play(c, s); err != nil {
			fmt.Printf("FAIL %s: %v\n", s.ID, err)
			t.Errorf("%s: %v", s.ID, err)
		} else {
			fmt.Printf("PASS %s\n", s.ID)
		}
	}
	if played < 60 {
		t.Errorf("played %d scenarios: the files hold more", played)
	}
}

// TestConformanceOnOwnDaemon plays the scenario REDLOCKD_CONFORMANCE_SCENARIO
// names (one that kills masters); without it, it lists those scenarios'
// ids ("own-daemon <id>") for test.sh.
func TestConformanceOnOwnDaemon(t *testing.T) {
	id := os.Getenv("REDLOCKD_CONFORMANCE_SCENARIO")
	for _, s := range scenarios(t) {
		switch {
		case !s.ownDaemon():
		case id == "":
			fmt.Printf("own-daemon %s\n", s.ID)
		case s.ID == id:
			if err := play(dial(t), s); err != nil {
				fmt.Printf("FAIL %s: %v\n", s.ID, err)
				t.Fatalf("%s: %v", s.ID, err)
			}
			fmt.Printf("PASS %s\n", s.ID)
			return
		}
	}
	if id != "" {
		t.Fatalf("no scenario %q needs a daemon of its own", id)
	}
}

// bound is what a step's "as" names: its result fields, and the handle
// (*Lease, []*Lease, *Leadership, a stream) later steps act on.
type bound struct {
	fields  map[string]any
	members []map[string]any // a set's leases' fields, in order
	handle  any
	ttl     int64 // ms: what extend and extend_many default to
}

type run struct {
	prefix  string
	names   map[string]*bound
	cleanup []func()
}

// play runs a scenario's steps in order; the first that does not meet its
// expectation fails it. Whatever it left open is closed at the end.
func play(c *redlockd.Client, s scenario) (err error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	r := &run{prefix: "conformance/go-" + hex.EncodeToString(b), names: map[string]*bound{}}
	// No call waits past this (a campaign without a wait waits until elected).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer func() {
		for i := len(r.cleanup) - 1; i >= 0; i-- {
			r.cleanup[i]()
		}
		cancel() // ends sessions, leaderships and streams still open
	}()
	for i, step := range s.Steps {
		verb, _ := step["call"].(string)
		if verb == "" {
			verb, _ = step["action"].(string)
		}
		if err := r.step(ctx, c, step); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, verb, err)
		}
	}
	return nil
}

func (r *run) step(ctx context.Context, c *redlockd.Client, step map[string]any) error {
	if action, ok := step["action"].(string); ok {
		return r.act(ctx, action, step)
	}
	verb, _ := step["call"].(string)
	args, _ := r.value(step["args"]).(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	expect, _ := step["expect"].(map[string]any)
	out, err := r.call(ctx, c, verb, args, expect)
	if wanted, ok := step["expect_error"].(map[string]any); ok {
		return r.failedAs(verb, err, wanted)
	}
	if err != nil {
		return fmt.Errorf("failed: %w", err)
	}
	if err := r.meets(out.fields, expect); err != nil {
		return err
	}
	if name, ok := step["as"].(string); ok {
		r.names[name] = out
	}
	return nil
}

// failedAs checks err against expect_error: the code, "invalid <field>"
// in the message, and message_contains.
func (r *run) failedAs(verb string, err error, wanted map[string]any) error {
	if err == nil {
		return fmt.Errorf("succeeded; expected %v", wanted["code"])
	}
	if code := codeOf(verb, err); code != wanted["code"] {
		return fmt.Errorf("failed as %s (%v); expected %v", code, err, wanted["code"])
	}
	if field, ok := wanted["field"].(string); ok && !strings.Contains(err.Error(), "invalid "+field) {
		return fmt.Errorf("the error does not name %s: %v", field, err)
	}
	if text, ok := wanted["message_contains"]; ok {
		if s := asText(r.value(text)); !strings.Contains(err.Error(), s) {
			return fmt.Errorf("the error does not say %q: %v", s, err)
		}
	}
	return nil
}

// value resolves {run}, "$name.field" references, and the repeat and
// numbered forms (clients/conformance/README.md#values).
func (r *run) value(v any) any {
	switch v := v.(type) {
	case string:
		if strings.HasPrefix(v, "$") {
			return r.ref(v[1:])
		}
		return strings.ReplaceAll(v, "{run}", r.prefix)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = r.value(e)
		}
		return out
	case map[string]any:
		if text, ok := v["repeat"].(string); ok {
			n, _ := v["times"].(json.Number).Int64()
			return strings.Repeat(text, int(n))
		}
		if text, ok := v["numbered"].(string); ok {
			n, _ := v["count"].(json.Number).Int64()
			out := make([]any, n)
			for i := range out {
				out[i] = fmt.Sprintf("%s%d", r.value(text), i)
			}
			return out
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = r.value(e)
		}
		return out
	}
	return v
}

// ref is "a.token" (a bound result's field) or "s.1.token" (a set member's).
func (r *run) ref(path string) any {
	parts := strings.Split(path, ".")
	b, ok := r.names[parts[0]]
	if !ok {
		return fmt.Sprintf("<nothing bound as %s>", parts[0])
	}
	fields := b.fields
	if len(parts) == 3 {
		var i int
		fmt.Sscan(parts[1], &i)
		if i >= len(b.members) {
			return fmt.Sprintf("<%s has no member %d>", parts[0], i)
		}
		fields = b.members[i]
	}
	if v, ok := fields[parts[len(parts)-1]]; ok {
		return v
	}
	return fmt.Sprintf("<%s has no %s>", path, parts[len(parts)-1])
}

// meets checks each expected field of a result.
func (r *run) meets(fields map[string]any, expect map[string]any) error {
	for key, want := range expect {
		got, ok := fields[key]
		if !ok {
			return fmt.Errorf("the result has no %s (expected %v)", key, r.value(want))
		}
		if err := r.matches(got, want); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}

var comparisons = map[string]func(int) bool{
	"gt": func(c int) bool { return c > 0 }, "ge": func(c int) bool { return c >= 0 },
	"lt": func(c int) bool { return c < 0 }, "le": func(c int) bool { return c <= 0 },
	"ne": func(c int) bool { return c != 0 },
}

func (r *run) matches(got, want any) error {
	if m, ok := want.(map[string]any); ok && len(m) == 1 {
		for op, operand := range m {
			if holds, ok := comparisons[op]; ok {
				x, y := number(got), number(r.value(operand))
				if x == nil || y == nil || !holds(x.Cmp(y)) {
					return fmt.Errorf("%v is not %s %v", got, op, r.value(operand))
				}
				return nil
			}
		}
	}
	if list, ok := want.([]any); ok {
		items, ok := got.([]any)
		if !ok || len(items) != len(list) {
			return fmt.Errorf("%v does not have the %d elements of %v", got, len(list), r.value(list))
		}
		for i := range list {
			if err := r.matches(items[i], list[i]); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	}
	want = r.value(want)
	if x, y := number(got), number(want); x != nil && y != nil {
		if x.Cmp(y) != 0 {
			return fmt.Errorf("was %v, expected %v", got, want)
		}
		return nil
	}
	if got != want {
		return fmt.Errorf("was %#v, expected %#v", got, want)
	}
	return nil
}

// number is v as an exact integer (uint64 tokens, json.Number, decimal
// strings), or nil when it is none.
func number(v any) *big.Int {
	switch v := v.(type) {
	case uint64:
		return new(big.Int).SetUint64(v)
	case int64:
		return big.NewInt(v)
	case int:
		return big.NewInt(int64(v))
	case json.Number:
		n, ok := new(big.Int).SetString(string(v), 10)
		if ok {
			return n
		}
	case string:
		if n, ok := new(big.Int).SetString(v, 10); ok {
			return n
		}
	}
	return nil
}

// asText is v as text: a decimal for numbers.
func asText(v any) string { return fmt.Sprint(v) }
