package bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson on the benchmark's masters: one workload of bench/compare per run,
 * as a {@link ClosedLoop} of {@code --clients} threads (Redisson's locks
 * belong to a thread), the way a Java service would use it.
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
 */
public final class RedissonBench {
    private RedissonBench() {}

    public static void main(String[] argv) throws Exception {
        Args args;
        try {
            args = Args.parse(argv, "rlock", "redlock");
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
        ClosedLoop.run(args, client -> new ClosedLoop.Locker() {
            private RLock held;

            @Override
            public boolean lock(String name, boolean wait) throws InterruptedException {
                RLock lock = lockFor.apply("bench:java:" + args.mode + ":" + name);
                if (wait) {
                    lock.lockInterruptibly(args.ttlMs, TimeUnit.MILLISECONDS);
                } else if (!lock.tryLock(0, args.ttlMs, TimeUnit.MILLISECONDS)) {
                    return false;
                }
                held = lock;
                return true;
            }

            @Override
            public void unlock() {
                held.unlock();
            }
        });
        for (RedissonClient client : clients) {
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
        System.exit(0);
    }
}
