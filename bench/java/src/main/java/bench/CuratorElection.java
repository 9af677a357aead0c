package bench;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * ZooKeeper's side of the benchmark's elections, (e) and (f)
 * (docs/performance.md#elections), with Apache Curator's recipes on the
 * ZooKeeper that bench/compare starts (bench/compare/src/elections_zookeeper.rs
 * drives it through stdin and stdout).
 *
 * <pre>
 * java -cp target/redisson-bench.jar:target/lib/* bench.CuratorElection --mode election \
 *     --role candidate --urls 127.0.0.1:PORT --latch /PATH --value /PATH --id candidate-0 --session-ms 10000
 * java -cp … bench.CuratorElection --mode election \
 *     --role observers --urls 127.0.0.1:PORT --value /PATH --observers 1000 --connections 8
 * </pre>
 *
 * <p>A candidate is a process of its own (one {@code CuratorFramework}, one
 * ZooKeeper session of {@code --session-ms}), so that the benchmark can kill
 * it with SIGKILL. It joins a {@code LeaderLatch} on {@code --latch}: an
 * ephemeral sequential node, the lowest of which leads, each other
 * participant watching the node just ahead of its own. A {@code LeaderLatch}
 * rather than a {@code LeaderSelector}: the latch holds leadership until its
 * process or session ends, like a {@code Campaign} of redlockd or etcd, where
 * a selector's leader leads only while its {@code takeLeadership} callback
 * runs and is built to hand leadership round. When told it leads
 * ({@code isLeader}) it prints {@code elected SEQ} (its latch node's sequence
 * number: rises from one leader to the next), then creates {@code --value},
 * an ephemeral node holding its id, and sets each hex-encoded line it reads
 * on stdin as that node's data (the leader's proclaim). It prints
 * {@code session MS} (the negotiated session timeout) once connected, and
 * {@code lost} if the latch says it no longer leads.
 *
 * <p>The observers are {@code --observers} {@code CuratorCache}s of the single
 * node {@code --value}, spread over {@code --connections} clients (a session
 * and a TCP connection each) in this one process. Each prints
 * {@code INDEX HEX} at every value it is told (an empty HEX: the node is
 * gone, no leader), after {@code ready} once every cache has loaded. Lines go
 * out through one writer thread, each batch in one write.
 */
public final class CuratorElection {
    private CuratorElection() {}

    public static void main(String[] argv) throws Exception {
        Map<String, String> args;
        try {
            args = parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("curator-election: " + e.getMessage());
            System.exit(2);
            return;
        }
        switch (args.get("--role")) {
            case "candidate" -> candidate(args);
            case "observers" -> observers(args);
            default -> {
                System.err.println("curator-election: --role must be candidate or observers");
                System.exit(2);
            }
        }
        System.exit(0);
    }

    private static Map<String, String> parse(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i < argv.length; i += 2) {
            if (i + 1 >= argv.length) {
                throw new IllegalArgumentException("missing value for " + argv[i]);
            }
            args.put(argv[i], argv[i + 1]);
        }
        if (!"election".equals(args.get("--mode"))) {
            throw new IllegalArgumentException("--mode must be election, not " + args.get("--mode"));
        }
        for (String required : List.of("--role", "--urls", "--value")) {
            if (!args.containsKey(required)) {
                throw new IllegalArgumentException(required + " is required");
            }
        }
        return args;
    }

    private static int number(Map<String, String> args, String key, int fallback) {
        String value = args.get(key);
        if (value == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(value);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(key + " must be a whole number above 0, not " + value);
    }

    private static CuratorFramework connect(String urls, int sessionMs) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(urls)
                .sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            System.err.println("curator-election: no connection to ZooKeeper at " + urls + " within 30 s");
            System.exit(1);
        }
        return client;
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static void candidate(Map<String, String> args) throws Exception {
        String id = args.get("--id");
        String latchPath = args.get("--latch");
        String valuePath = args.get("--value");
        if (id == null || latchPath == null) {
            throw new IllegalArgumentException("a candidate needs --id and --latch");
        }
        CuratorFramework client = connect(args.get("--urls"), number(args, "--session-ms", 10_000));
        say("session " + client.getZookeeperClient().getZooKeeper().getSessionTimeout());
        // One thread for what the leader writes: its value first, then each
        // proclaim in order (no ZooKeeper call on Curator's event thread).
        ExecutorService writes = Executors.newSingleThreadExecutor();
        LeaderLatch latch = new LeaderLatch(client, latchPath, id);
        latch.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                String ours = latch.getOurPath();
                say("elected " + Long.parseLong(ours.substring(ours.length() - 10)));
                try {
                    client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                            .forPath(valuePath, id.getBytes(StandardCharsets.UTF_8));
                } catch (KeeperException.NodeExistsException e) {
                    set(client, valuePath, id.getBytes(StandardCharsets.UTF_8));
                } catch (Exception e) {
                    fail("creating " + valuePath, e);
                }
            }

            @Override
            public void notLeader() {
                say("lost");
            }
        }, writes);
        latch.start();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = stdin.readLine()) != null; ) {
            byte[] value = java.util.HexFormat.of().parseHex(line.trim());
            writes.execute(() -> set(client, valuePath, value));
        }
        // stdin closed: the benchmark is done with this candidate.
        writes.shutdown();
        writes.awaitTermination(10, TimeUnit.SECONDS);
        latch.close();
        client.close();
    }

    private static void set(CuratorFramework client, String path, byte[] value) {
        try {
            client.setData().forPath(path, value);
        } catch (Exception e) {
            fail("setting " + path, e);
        }
    }

    private static void fail(String what, Exception e) {
        System.err.println("curator-election: " + what + ": " + e);
        System.exit(1);
    }

    private static void observers(Map<String, String> args) throws Exception {
        int n = number(args, "--observers", 1000);
        int connections = Math.min(n, number(args, "--connections", 8));
        String valuePath = args.get("--value");
        List<CuratorFramework> clients = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
            clients.add(connect(args.get("--urls"), number(args, "--session-ms", 10_000)));
        }
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread writer = new Thread(() -> write(lines), "observers-out");
        writer.setDaemon(true);
        writer.start();
        CountDownLatch loaded = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            String index = Integer.toString(i);
            CuratorCache cache = CuratorCache.build(clients.get(i % connections), valuePath,
                    CuratorCache.Options.SINGLE_NODE_CACHE);
            CuratorCacheListener listener = CuratorCacheListener.builder()
                    .forCreatesAndChanges((old, node) ->
                            lines.add(index + " " + java.util.HexFormat.of().formatHex(node.getData())))
                    .forDeletes(old -> lines.add(index + " "))
                    .forInitialized(loaded::countDown)
                    .build();
            cache.listenable().addListener(listener);
            cache.start();
        }
        if (!loaded.await(60, TimeUnit.SECONDS)) {
            System.err.println("curator-election: " + loaded.getCount() + " caches not loaded within 60 s");
            System.exit(1);
        }
        lines.add("ready");
        // Until the benchmark closes stdin (or kills this process).
        while (System.in.read() >= 0) {
            // nothing is sent to the observers
        }
        for (CuratorFramework client : clients) {
            client.close();
        }
    }

    /** Writes the observers' lines, each batch that is waiting in one write. */
    private static void write(BlockingQueue<String> lines) {
        var out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        List<String> batch = new ArrayList<>();
        try {
            while (true) {
                batch.add(lines.take());
                lines.drainTo(batch);
                for (String line : batch) {
                    out.write(line);
                    out.write('\n');
                }
                out.flush();
                batch.clear();
            }
        } catch (Exception e) {
            System.err.println("curator-election: writing: " + e);
            System.exit(1);
        }
    }
}
