package bench;

import java.util.Arrays;
import java.util.List;

/**
 * The command line of {@link RedissonBench} and {@link CuratorBench}; a bad
 * value names its flag and the allowed range.
 */
final class Args {
    String mode;
    List<String> urls;
    String workload;
    int clients = 1;
    long warmupMs = 1000;
    long durationMs = 5000;
    long ttlMs = 10_000;

    /** Parses {@code argv}, whose {@code --mode} must be one of {@code modes}. */
    static Args parse(String[] argv, String... modes) {
        Args a = new Args();
        for (int i = 0; i < argv.length; i += 2) {
            String key = argv[i];
            if (i + 1 >= argv.length) {
                throw new IllegalArgumentException("missing value for " + key);
            }
            String value = argv[i + 1];
            switch (key) {
                case "--mode" -> a.mode = value;
                case "--urls" -> a.urls = Arrays.asList(value.split(","));
                case "--workload" -> a.workload = value;
                case "--clients" -> a.clients = (int) number(key, value, 1, 10_000);
                case "--warmup" -> a.warmupMs = Math.round(seconds(key, value, 0) * 1000);
                case "--duration" -> a.durationMs = Math.round(seconds(key, value, 0.001) * 1000);
                case "--ttl-ms" -> a.ttlMs = number(key, value, 1, 86_400_000);
                default -> throw new IllegalArgumentException("unknown argument " + key);
            }
        }
        if (a.mode == null || !List.of(modes).contains(a.mode)) {
            throw new IllegalArgumentException("--mode must be one of " + String.join(", ", modes) + ", not " + a.mode);
        }
        if (a.urls == null || a.urls.isEmpty() || a.urls.get(0).isEmpty()) {
            throw new IllegalArgumentException("--urls is required (redis://host:port,... or host:port for ZooKeeper)");
        }
        if (a.workload == null || !List.of("a", "b", "c").contains(a.workload)) {
            throw new IllegalArgumentException("--workload must be a, b or c, not " + a.workload);
        }
        return a;
    }

    private static long number(String key, String value, long min, long max) {
        try {
            long n = Long.parseLong(value);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(key + " must be a whole number from " + min + " to " + max + ", not " + value);
    }

    private static double seconds(String key, String value, double min) {
        try {
            double s = Double.parseDouble(value);
            if (s >= min && s <= 3600) {
                return s;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(key + " must be seconds from " + min + " to 3600, not " + value);
    }
}
