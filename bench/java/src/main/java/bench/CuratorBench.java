package bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

/**
 * Apache Curator's {@code InterProcessMutex} on the ZooKeeper the benchmark
 * starts (bench/compare/src/zookeeper.rs): one workload of bench/compare per
 * run, as a {@link ClosedLoop} of {@code --clients} threads sharing one
 * {@code CuratorFramework} (one ZooKeeper session, one connection), the way a
 * Java service would use it.
 *
 * <pre>
 * java -cp target/redisson-bench.jar:target/lib/* bench.CuratorBench \
 *     --mode mutex --urls 127.0.0.1:PORT --workload a|b|c \
 *     --clients 64 --warmup 1 --duration 5 [--ttl-ms 10000]
 * </pre>
 *
 * <p>A lock is an ephemeral sequential znode under the lock's own path (a
 * container znode, made by the first lock of a name); whoever holds the
 * lowest sequence number holds the lock. Workloads: (a)/(b) a distinct
 * name with a single attempt ({@code acquire(0, ms)}: on a free name the
 * create and one {@code getChildren} decide, nothing waits), released at
 * once; (c) every thread wants the same name and waits until it holds it
 * ({@code acquire()}: a watch on the node just ahead), then releases.
 * {@code --ttl-ms} is the session timeout: ZooKeeper's lease, after which a
 * dead client's lock nodes go.
 *
 * <p>The fencing token is the lock node's creation zxid ({@code czxid}),
 * which rises across every name and survives the container's removal, where
 * the node's sequence number counts per container and starts again at 0
 * when an emptied container is reaped. Curator's default driver does not
 * keep it; {@link TokenDriver} makes the same create with the reply's
 * {@code Stat} kept (ZooKeeper's create2: no extra round trip). In (c) each
 * holder's token must exceed the last holder's, or the cycle counts as an
 * error.
 */
public final class CuratorBench {
    private CuratorBench() {}

    /** Curator's own create of a lock node, keeping the czxid of the reply. */
    static final class TokenDriver extends StandardLockInternalsDriver {
        /** The czxid of the node this thread created last. */
        long token;

        @Override
        public String createsTheLock(CuratorFramework client, String path, byte[] lockNodeBytes) throws Exception {
            Stat stat = new Stat();
            var create = client.create()
                    .storingStatIn(stat)
                    .creatingParentContainersIfNeeded()
                    .withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL);
            String ours = lockNodeBytes == null ? create.forPath(path) : create.forPath(path, lockNodeBytes);
            token = stat.getCzxid();
            return ours;
        }
    }

    public static void main(String[] argv) throws Exception {
        Args args;
        try {
            args = Args.parse(argv, "mutex");
        } catch (IllegalArgumentException e) {
            System.err.println("curator-bench: " + e.getMessage());
            System.exit(2);
            return;
        }
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(String.join(",", args.urls))
                .sessionTimeoutMs((int) Math.min(args.ttlMs, Integer.MAX_VALUE))
                .connectionTimeoutMs(5_000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            System.err.println("curator-bench: no connection to ZooKeeper at " + args.urls + " within 30 s");
            System.exit(1);
        }
        // Every run its own names: the server outlives one run.
        String root = "/bench-curator-" + ProcessHandle.current().pid() + "/";
        AtomicLong lastHolder = new AtomicLong();
        AtomicBoolean told = new AtomicBoolean();
        ClosedLoop.run(args, thread -> new ClosedLoop.Locker() {
            private final TokenDriver driver = new TokenDriver();
            private InterProcessMutex contended;
            private InterProcessMutex held;

            @Override
            public boolean lock(String name, boolean wait) throws Exception {
                if (wait) {
                    if (contended == null) {
                        contended = new InterProcessMutex(client, root + name, driver);
                    }
                    contended.acquire();
                    held = contended;
                    // Held: no other thread writes lastHolder until this one releases.
                    long previous = lastHolder.getAndSet(driver.token);
                    if (driver.token <= previous) {
                        contended.release();
                        if (!told.getAndSet(true)) {
                            System.err.println("curator-bench: token " + driver.token + " after " + previous);
                        }
                        throw new IllegalStateException("a fencing token did not rise");
                    }
                    return true;
                }
                InterProcessMutex mutex = new InterProcessMutex(client, root + name, driver);
                if (!mutex.acquire(0, TimeUnit.MILLISECONDS)) {
                    return false;
                }
                held = mutex;
                return true;
            }

            @Override
            public void unlock() throws Exception {
                held.release();
            }
        });
        client.close();
        System.exit(0);
    }
}
