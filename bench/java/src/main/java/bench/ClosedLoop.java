package bench;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;

/**
 * One workload of bench/compare as a closed loop of {@code --clients}
 * platform threads, whatever the library (the locks of Redisson and Curator
 * both belong to a thread): the protocol of bench/node/bench.js.
 *
 * <p>Prints JSON lines on stdout: {"event":"ready"}, {"event":"start"} when
 * the measured window opens (after the warm-up: the JIT compiles during it,
 * as node's and Go's runtimes settle during theirs), {"event":"end"} when it
 * closes, then {"event":"result", ops, errors, not_acquired, seconds,
 * latencies_us} with every acquire (or wait) latency of the window.
 */
final class ClosedLoop {
    private ClosedLoop() {}

    /** One thread's lock, a name per cycle. */
    interface Locker {
        /**
         * Takes {@code name}: with {@code wait} until held (workload c),
         * otherwise in a single attempt; false when not acquired.
         */
        boolean lock(String name, boolean wait) throws Exception;

        /** Releases what the last {@link #lock} took. */
        void unlock() throws Exception;
    }

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

    /**
     * Runs {@code args.workload} with a locker per thread from
     * {@code lockers}. Names: "c" for every thread in (c); otherwise
     * "WORKLOAD:CLIENT:N", a new one each cycle.
     */
    static void run(Args args, IntFunction<Locker> lockers) throws InterruptedException {
        boolean contended = args.workload.equals("c");
        AtomicBoolean recording = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        Tally[] tallies = new Tally[args.clients];
        Thread[] threads = new Thread[args.clients];
        say("{\"event\":\"ready\"}");
        for (int i = 0; i < args.clients; i++) {
            Tally tally = tallies[i] = new Tally();
            Locker locker = lockers.apply(i);
            int client = i;
            threads[i] = new Thread(() -> {
                for (long n = 0; !stop.get(); n++) {
                    String name = contended ? "c" : args.workload + ":" + client + ":" + n;
                    long started = System.nanoTime();
                    try {
                        if (!locker.lock(name, contended)) {
                            tally.notAcquired++;
                            continue;
                        }
                    } catch (InterruptedException e) {
                        break; // the window closed while (c) waited
                    } catch (Exception e) {
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
                        locker.unlock();
                    } catch (Exception e) {
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
