import io.redlockd.client.AcquireOptions;
import io.redlockd.client.FencingToken;
import io.redlockd.client.HeldLock;
import io.redlockd.client.HoldOptions;
import io.redlockd.client.Lease;
import io.redlockd.client.RedlockdClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A fenced write with the redlockd Java client. Holder A takes the lock, then stalls (a GC pause,
 * a slow disk) past its validity; holder B takes the lock over and writes; A wakes up and writes
 * under its expired lock. The store remembers the largest fencing token it has seen and refuses A,
 * and A's release reports that its lock was not held to the end.
 *
 * <pre>
 * bash examples/java/run.sh          # against a throwaway daemon, plain and --secure
 * </pre>
 */
public final class FencedWrite {
  /** A store that refuses writes carrying a token below one it has seen. */
  static final class FencedStore {
    private FencingToken highest;
    final Map<String, Integer> rows = new HashMap<>();

    synchronized boolean write(FencingToken token, String key, int value) {
      if (highest != null && token.isBefore(highest)) {
        return false; // a stale holder: its lock was superseded
      }
      highest = token;
      rows.put(key, value);
      return true;
    }
  }

  static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException(what);
    }
  }

  public static void main(String[] args) throws Exception {
    FencedStore store = new FencedStore();
    String resource = "examples/java-ledger";
    // REDLOCKD_ADDR, REDLOCKD_TOKEN, REDLOCKD_CA/CERT/KEY
    try (RedlockdClient client = RedlockdClient.fromEnv()) {
      // A: a lease it must keep alive itself; contention would be an empty Optional, not an error.
      AcquireOptions shortTtl = AcquireOptions.defaults().ttl(Duration.ofMillis(500)).wait(Duration.ofSeconds(10));
      Lease a = client.tryAcquire(resource, shortTtl)
          .orElseThrow(() -> new IllegalStateException("A did not get the lock"));
      check(store.write(a.fencingToken(), "balance", 50), "A was refused while it held the lock");
      Thread.sleep(a.remaining().toMillis() + 300); // A stalls; its lock expires on the masters

      // B: a Hold session, kept alive by the daemon; leaving the block releases it, and throws
      // LockLostException had the lock been lost meanwhile.
      FencingToken b;
      HoldOptions session = HoldOptions.defaults().ttl(Duration.ofSeconds(5)).wait(Duration.ofSeconds(10));
      try (HeldLock lock = client.hold(resource, session)) {
        check(!lock.isLost(), "B's lock was lost");
        check(store.write(lock.fencingToken(), "balance", 100), "B was refused");
        b = lock.fencingToken();
      }

      // A wakes up and writes as if it still held the lock: refused.
      check(!store.write(a.fencingToken(), "balance", 0), "the store took a stale token");
      // And A learns it: a release of an expired lock says false.
      check(!a.release(), "A's release said its lock was held to the end");
      check(store.rows.equals(Map.of("balance", 100)), "the store holds " + store.rows);
      System.out.println(
          "ok: B's token " + b + " > A's " + a.fencingToken() + "; A's stale write was refused");
    }
  }
}
