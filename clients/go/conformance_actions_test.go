package redlockd_test

// The conformance scenarios' actions (clients/conformance/README.md#actions):
// sleep, kill_masters, expect_lost, seed_counters_above.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

func (r *run) act(ctx context.Context, action string, step map[string]any) error {
	switch action {
	case "sleep":
		n, _ := integer(step, "ms")
		time.Sleep(ms(n))
		return nil
	case "kill_masters":
		n, _ := integer(step, "count")
		pids := strings.Fields(os.Getenv("REDLOCKD_DEV_MASTER_PIDS"))
		if int(n) > len(pids) {
			return fmt.Errorf("REDLOCKD_DEV_MASTER_PIDS names %d masters", len(pids))
		}
		for _, pid := range pids[:n] {
			p, _ := strconv.Atoi(pid)
			if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
				return err
			}
		}
		return nil
	case "expect_lost":
		n, _ := integer(step, "within_ms")
		var done <-chan struct{}
		if name, ok := step["hold"].(string); ok {
			l, _, err := r.lease(name)
			if err != nil {
				return err
			}
			done = l.Context().Done()
		} else if l, ok := r.names[str(step, "leadership")].handle.(*redlockd.Leadership); ok {
			done = l.Context().Done()
		} else {
			return fmt.Errorf("no hold or leadership named in %v", step)
		}
		select {
		case <-done:
			return nil
		case <-time.After(ms(n)):
			return fmt.Errorf("not told it was lost within %d ms", n)
		}
	case "seed_counters_above":
		counter, err := seedCounters(str(step, "value"))
		if err != nil {
			return err
		}
		if name, ok := step["as"].(string); ok {
			r.names[name] = &bound{fields: map[string]any{"counter": json.Number(counter.String())}}
		}
		return nil
	}
	return fmt.Errorf("no such action %q", action)
}

// seedCounters raises every verified bucket's fence counter on every master
// so that later tokens pass value (clients/conformance/README.md#actions):
// to value/16 + 1000003, or the highest counter already there when that
// is more (another test may have raised one near 2^53, the most a master
// keeps).
func seedCounters(value string) (*big.Int, error) {
	ports := strings.Fields(os.Getenv("REDLOCKD_DEV_MASTER_PORTS"))
	if len(ports) == 0 {
		return nil, errors.New("REDLOCKD_DEV_MASTER_PORTS is not set")
	}
	redis := func(port string, args ...string) (string, error) {
		out, err := exec.Command("redis-cli", append([]string{"-p", port, "--no-raw"}, args...)...).Output()
		text := strings.TrimPrefix(strings.TrimSpace(string(out)), "(integer) ")
		if err != nil || strings.HasPrefix(text, "(error)") {
			return "", fmt.Errorf("redis-cli -p %s: %v %s", port, err, text)
		}
		return text, nil
	}
	v, _ := new(big.Int).SetString(value, 10)
	counter := new(big.Int).Div(v, big.NewInt(16))
	counter.Add(counter, big.NewInt(1000003))
	for _, port := range ports {
		h, err := redis(port, "EVAL", "local h = 0 for _, k in ipairs(redis.call('KEYS', 'redlockd:{*}:fence')) do h = math.max(h, tonumber(redis.call('GET', k))) end return h", "0")
		if err != nil {
			return nil, err
		}
		if n, ok := new(big.Int).SetString(h, 10); ok && n.Cmp(counter) > 0 {
			counter = n
		}
	}
	for _, port := range ports {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			n, err := redis(port, "EVAL", "local m = redis.call('KEYS', 'redlockd:{*}:verified') for _, k in ipairs(m) do redis.call('SET', string.sub(k, 1, -1 - #'verified') .. 'fence', ARGV[1]) end return #m", "0", counter.String())
			if err != nil {
				return nil, err
			}
			if n == "16384" {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("master on port %s verified %s buckets of 16384 in 10 s", port, n)
			}
		}
	}
	return counter, nil
}
