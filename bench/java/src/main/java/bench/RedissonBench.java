package bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson on the benchmark's masters: one workload of bench/compare per run,
 * as a closed loop of {@code --clients} threads (Redisson's locks belong to a
 * thread), the way a Java service would use it. The same protocol as
 * bench/node/bench.js.
 *
 * <pre>
 * java -cp target/redisson-bench.jar:target/lib/* bench.RedissonBench \
 *     --mode rlock|redlock --urls redis://127.0.0.1:P1,... --workload a|b|c \
 *     --clients 64 --warmup 1 --duration 5 [--ttl-ms 10000]
 * </pre>
 *
 * <p>{@code --mode rlock}: {@code RLock} of one Redisson client on the first
 * master. {@code --mode redlock}: {@code RedissonRedLock} over one Redisson
 * client per master (deprecated in Redisson 4, which recommends
 * {@code getLock} or {@code getFencedLock} on one deployment instead; used
 * here because it is Redisson's Redlock). Workloads: (a)/(b) a distinct name
 * with a single attempt ({@code tryLock(0, ttl)}), released at once; (c)
 * every thread wants the same name and waits until it holds it
 * ({@code lockInterruptibly(ttl)}: the library's own wait), then releases.
 *
 * <p>Prints JSON lines on stdout: {"event":"ready"}, {"event":"start"} when
 * the measured window opens (after the warm-up: the JIT compiles during it,
 * as node's and Go's runtimes settle during theirs), {"event":"end"} when it
 * closes, then {"event":"result", ops, errors, not_acquired, seconds,
 * latencies_us} with every acquire (or wait) latency of the window.
 */
public final class RedissonBench {
    private RedissonBench() {}

    /** One loop's counts; read once its thread has ended. */
    static final class Tally {
        long ops;
        long errors;
        long notAcquired;
        long[] latencies = new long[1024];
        int count;

        void record(long micros) {
            if (count == latencies.length) {
                latencies = java.util.Arrays.copyOf(latencies, count * 2);
            }
            latencies[count++] = micros;
        }
    }

    public static void main(String[] argv) throws Exception {
        Args args;
        try {
            args = Args.parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("redisson-bench: " + e.getMessage());
            System.exit(2);
            return;
        }
        List<String> urls = args.mode.equals("rlock") ? args.urls.subList(0, 1) : args.urls;
        List<RedissonClient> clients = new ArrayList<>();
        for (String url : urls) {
            Config config = new Config();
            config.useSingleServer().setAddress(url);
            clients.add(Redisson.create(config));
        }
        Function<String, RLock> lockFor;
        if (args.mode.equals("rlock")) {
            lockFor = name -> clients.get(0).getLock(name);
        } else {
            lockFor = name -> new RedissonRedLock(clients.stream().map(c -> c.getLock(name)).toArray(RLock[]::new));
        }
        boolean contended = args.workload.equals("c");
        AtomicBoolean recording = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        Tally[] tallies = new Tally[args.clients];
        Thread[] threads = new Thread[args.clients];
        say("{\"event\":\"ready\"}");
        for (int i = 0; i < args.clients; i++) {
            Tally tally = tallies[i] = new Tally();
            int client = i;
            threads[i] = new Thread(() -> {
                for (long n = 0; !stop.get(); n++) {
                    String name = contended
                            ? "bench:java:" + args.mode + ":c"
                            : "bench:java:" + args.mode + ":" + args.workload + ":" + client + ":" + n;
                    RLock lock = lockFor.apply(name);
                    long started = System.nanoTime();
                    try {
                        if (contended) {
                            lock.lockInterruptibly(args.ttlMs, TimeUnit.MILLISECONDS);
                        } else if (!lock.tryLock(0, args.ttlMs, TimeUnit.MILLISECONDS)) {
                            tally.notAcquired++;
                            continue;
                        }
                    } catch (InterruptedException e) {
                        break; // the window closed while (c) waited
                    } catch (RuntimeException e) {
                        tally.errors++;
                        pause();
                        continue;
                    }
                    long took = (System.nanoTime() - started) / 1000;
                    if (recording.get()) {
                        tally.ops++;
                        tally.record(took);
                    }
                    try {
                        lock.unlock();
                    } catch (RuntimeException e) {
                        tally.errors++;
                    }
                }
            }, "client-" + i);
            threads[i].start();
        }
        Thread.sleep(args.warmupMs);
        say("{\"event\":\"start\"}");
        recording.set(true);
        long opened = System.nanoTime();
        Thread.sleep(args.durationMs);
        recording.set(false);
        double seconds = (System.nanoTime() - opened) / 1e9;
        say("{\"event\":\"end\"}");
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(2000);
            if (thread.isAlive()) {
                thread.interrupt();
                thread.join(10_000);
            }
        }
        long ops = 0, errors = 0, notAcquired = 0;
        StringBuilder latencies = new StringBuilder();
        for (Tally t : tallies) {
            ops += t.ops;
            errors += t.errors;
            notAcquired += t.notAcquired;
            for (int i = 0; i < t.count; i++) {
                if (latencies.length() > 0) {
                    latencies.append(',');
                }
                latencies.append(t.latencies[i]);
            }
        }
        say("{\"event\":\"result\",\"ops\":" + ops + ",\"errors\":" + errors + ",\"not_acquired\":" + notAcquired
                + ",\"seconds\":" + seconds + ",\"latencies_us\":[" + latencies + "]}");
        for (RedissonClient client : clients) {
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
        System.exit(0);
    }

    private static void pause() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
