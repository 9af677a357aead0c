package redlockd_test

// The masters' keys, read and written behind the daemon's back with
// redis-cli. Every key of a lock carries its bucket's hash tag
// (docs/design.md#keys): a lock is redlockd:{<tag>}:lock:<resource>, and
// each bucket has a fence counter redlockd:{<tag>}:fence and a marker
// redlockd:{<tag>}:verified on every master the daemon verified. The tests
// find keys with KEYS in a Lua script rather than compute the tag.

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// buckets is the number of buckets: every verified master has a marker for each.
const buckets = 16384

// masterPorts is the five masters' ports, in the daemon's order.
func masterPorts() []string { return strings.Fields(os.Getenv("REDLOCKD_DEV_MASTER_PORTS")) }

// redisCLI runs one command against the master at port; its reply.
func redisCLI(t *testing.T, port string, args ...string) string {
	t.Helper()
	out, err := exec.Command("redis-cli", append([]string{"-p", port}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli -p %s %q: %v: %s", port, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// globEscaped is text as a KEYS pattern that matches only itself.
func globEscaped(text string) string {
	return regexp.MustCompile(`[*?[\]\\]`).ReplaceAllString(text, `\$0`)
}

// lockValue is the value of name's lock key on the master at port ("" when
// it has none).
func lockValue(t *testing.T, port, name string) string {
	t.Helper()
	return redisCLI(t, port, "EVAL", `
local keys = redis.call('KEYS', ARGV[1])
if #keys > 1 then return redis.error_reply('more than one key matches ' .. ARGV[1]) end
return keys[1] and redis.call('GET', keys[1])`, "0", "redlockd:{*}:lock:"+globEscaped(name))
}

// setEveryFence sets the fence counter of every bucket the master at port
// verified (its marker: a bucket's counter is written by its first lock, so
// a fresh bucket has none) to counter, and fails unless that is every
// bucket. Right after the daemon started it may still be verifying the
// master: waits up to 10 s for every bucket's marker.
func setEveryFence(t *testing.T, port string, counter uint64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n, err := strconv.Atoi(redisCLI(t, port, "EVAL", `
local markers = redis.call('KEYS', 'redlockd:{*}:verified')
for _, marker in ipairs(markers) do
  redis.call('SET', string.sub(marker, 1, -1 - #'verified') .. 'fence', ARGV[1])
end
return #markers`, "0", strconv.FormatUint(counter, 10)))
		if err != nil {
			t.Fatal(err)
		}
		if n == buckets {
			return
		}
		if n > buckets || time.Now().After(deadline) {
			t.Fatalf("the master on port %s has %d verified buckets, not %d", port, n, buckets)
		}
	}
}
