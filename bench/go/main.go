// go-redsync on the benchmark's masters: one workload of bench/compare per
// run, as a closed loop of `--clients` goroutines sharing one Redsync (one
// go-redis client per master, with go-redis's default pool), the way a Go
// service would use it. The same protocol as bench/node/bench.js.
//
//	go-redsync --urls redis://127.0.0.1:P1,... --workload a|b|c \
//	           --clients 64 --warmup 1 --duration 5 [--ttl-ms 10000]
//
// Workloads: (a)/(b) acquire a distinct name with a single attempt
// (WithTries(1)), release at once; (c) every goroutine wants the same name
// and retries until held (the library's own retry: its default random delay
// of 50-250 ms, tries unbounded), then releases at once.
//
// Prints JSON lines on stdout: {"event":"ready"}, {"event":"start"} when the
// measured window opens (after the warm-up), {"event":"end"} when it closes,
// then {"event":"result", ops, errors, not_acquired, seconds, latencies_us}
// with every acquire (or wait) latency of the window.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
)

type args struct {
	urls     []string
	workload string
	clients  int
	warmup   time.Duration
	duration time.Duration
	ttl      time.Duration
}

func parseArgs() (args, error) {
	var a args
	urls := flag.String("urls", "", "redis://host:port,... of the masters")
	flag.StringVar(&a.workload, "workload", "", "a, b or c")
	flag.IntVar(&a.clients, "clients", 1, "concurrent loops, 1 to 10000")
	warmup := flag.Float64("warmup", 1, "seconds of warm-up")
	duration := flag.Float64("duration", 5, "seconds measured")
	ttlMs := flag.Int("ttl-ms", 10000, "lock TTL in milliseconds")
	flag.Parse()
	if *urls == "" {
		return a, errors.New("--urls is required (redis://host:port,...)")
	}
	a.urls = strings.Split(*urls, ",")
	if a.workload != "a" && a.workload != "b" && a.workload != "c" {
		return a, fmt.Errorf("--workload must be a, b or c, not %q", a.workload)
	}
	if a.clients < 1 || a.clients > 10000 {
		return a, fmt.Errorf("--clients must be 1 to 10000, not %d", a.clients)
	}
	if *warmup < 0 || *duration <= 0 {
		return a, fmt.Errorf("--warmup must be >= 0 and --duration > 0 (got %v, %v)", *warmup, *duration)
	}
	if *ttlMs < 1 {
		return a, fmt.Errorf("--ttl-ms must be at least 1, not %d", *ttlMs)
	}
	a.warmup = time.Duration(*warmup * float64(time.Second))
	a.duration = time.Duration(*duration * float64(time.Second))
	a.ttl = time.Duration(*ttlMs) * time.Millisecond
	return a, nil
}

var out = json.NewEncoder(os.Stdout)

func say(event map[string]any) {
	if err := out.Encode(event); err != nil {
		fmt.Fprintf(os.Stderr, "go-redsync: stdout: %v\n", err)
		os.Exit(1)
	}
}

// taken: the attempt found the name held (not a failure of a master).
func taken(err error) bool {
	var all *redsync.ErrTaken
	var one *redsync.ErrNodeTaken
	return errors.Is(err, redsync.ErrFailed) || errors.As(err, &all) || errors.As(err, &one)
}

type tally struct {
	ops, errors, notAcquired uint64
	latencies                []int64
}

func main() {
	a, err := parseArgs()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-redsync: %v\n", err)
		os.Exit(2)
	}
	ctx := context.Background()
	var pools []redis.Pool
	var clients []*goredislib.Client
	for _, url := range a.urls {
		options, err := goredislib.ParseURL(url)
		if err != nil {
			fmt.Fprintf(os.Stderr, "go-redsync: --urls: %q: %v\n", url, err)
			os.Exit(2)
		}
		client := goredislib.NewClient(options)
		if err := client.Ping(ctx).Err(); err != nil {
			fmt.Fprintf(os.Stderr, "go-redsync: %s: %v\n", url, err)
			os.Exit(1)
		}
		clients = append(clients, client)
		pools = append(pools, goredis.NewPool(client))
	}
	rs := redsync.New(pools...)
	contended := a.workload == "c"
	options := []redsync.Option{redsync.WithExpiry(a.ttl), redsync.WithTries(1)}
	if contended {
		options = []redsync.Option{redsync.WithExpiry(a.ttl), redsync.WithTries(math.MaxInt32)}
	}

	// Cancelled when the window closes, so that (c)'s waiters stop waiting.
	lockCtx, stopWaiting := context.WithCancel(ctx)
	var recording, stop atomic.Bool
	tallies := make([]tally, a.clients)
	var wg sync.WaitGroup
	say(map[string]any{"event": "ready"})
	for client := range a.clients {
		wg.Add(1)
		go func(t *tally) {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				name := "bench:go:c"
				if !contended {
					name = fmt.Sprintf("bench:go:%s:%d:%d", a.workload, client, n)
				}
				mutex := rs.NewMutex(name, options...)
				started := time.Now()
				if err := mutex.LockContext(lockCtx); err != nil {
					if stop.Load() {
						break // (c)'s wait, cut short when the window closed
					}
					if taken(err) {
						t.notAcquired++
					} else {
						t.errors++
					}
					if contended || !taken(err) {
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				took := time.Since(started)
				if recording.Load() {
					t.ops++
					t.latencies = append(t.latencies, took.Microseconds())
				}
				if ok, err := mutex.UnlockContext(ctx); !ok || err != nil {
					t.errors++
				}
			}
		}(&tallies[client])
	}
	time.Sleep(a.warmup)
	say(map[string]any{"event": "start"})
	recording.Store(true)
	opened := time.Now()
	time.Sleep(a.duration)
	recording.Store(false)
	seconds := time.Since(opened).Seconds()
	say(map[string]any{"event": "end"})
	stop.Store(true)
	stopWaiting()
	wg.Wait()

	var total tally
	total.latencies = []int64{}
	for _, t := range tallies {
		total.ops += t.ops
		total.errors += t.errors
		total.notAcquired += t.notAcquired
		total.latencies = append(total.latencies, t.latencies...)
	}
	say(map[string]any{
		"event":        "result",
		"ops":          total.ops,
		"errors":       total.errors,
		"not_acquired": total.notAcquired,
		"seconds":      seconds,
		"latencies_us": total.latencies,
	})
	for _, client := range clients {
		_ = client.Close()
	}
}
