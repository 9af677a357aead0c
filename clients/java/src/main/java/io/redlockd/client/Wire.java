package io.redlockd.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Between the wire's types and this client's: durations and what each master said. */
final class Wire {
  private Wire() {}

  /**
   * {@code d} as a protobuf Duration: seconds and nanos of one sign, as the daemon reads them (so
   * -1.5 s is -1 s and -500000000 ns, as the daemon's messages show it).
   */
  static com.google.protobuf.Duration duration(Duration d) {
    long seconds = d.getSeconds();
    int nanos = d.getNano();
    if (seconds < 0 && nanos > 0) {
      seconds += 1;
      nanos -= 1_000_000_000;
    }
    return com.google.protobuf.Duration.newBuilder().setSeconds(seconds).setNanos(nanos).build();
  }

  static Duration duration(com.google.protobuf.Duration d) {
    return Duration.ofSeconds(d.getSeconds(), d.getNanos());
  }

  /** NodeOutcome values, in the words the daemon's ErrorInfo uses. */
  private static final String[] OUTCOMES = {
    "unspecified",
    "granted",
    "held by another owner",
    "timed out",
    "errored",
    "quarantined",
    "unusable",
    "not awaited",
  };

  /** A repeated NodeOutcome (its values), by master index. */
  static Map<Integer, String> outcomes(List<Integer> values) {
    Map<Integer, String> nodes = new TreeMap<>();
    for (int i = 0; i < values.size(); i++) {
      int v = values.get(i);
      nodes.put(i, v >= 0 && v < OUTCOMES.length ? OUTCOMES[v] : "outcome " + v);
    }
    return nodes;
  }
}
