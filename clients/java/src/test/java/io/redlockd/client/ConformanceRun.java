package io.redlockd.client;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import redlockd.v1.LockOuterClass.InspectResponse;

/**
 * One play of one conformance scenario through the Java client's public API
 * (clients/conformance/README.md#calls, #actions). Closing it closes what the scenario left open:
 * sessions released, leaderships resigned, streams closed (leases are let expire).
 */
final class ConformanceRun implements AutoCloseable {
  static final class Failed extends Exception {
    Failed(String why) {
      super(why);
    }
  }

  static final class Skip extends Exception {
    Skip(String why) {
      super(why);
    }
  }

  /** No campaign here waits longer (absent a wait it would wait for ever on a broken daemon). */
  private static final Duration LONGEST_CAMPAIGN = Duration.ofSeconds(60);

  private final RedlockdClient client;
  private final ConformanceValues values;
  private final Map<String, Object> handles = new HashMap<>();
  private final List<AutoCloseable> open = new ArrayList<>();

  ConformanceRun(RedlockdClient client) {
    this.client = client;
    this.values = new ConformanceValues("conformance/java-" + UUID.randomUUID().toString().substring(0, 8));
  }

  @Override
  public void close() {
    for (AutoCloseable c : open) {
      try {
        if (c instanceof HeldLock h) {
          h.release();
        } else if (c instanceof Leadership l) {
          l.resign();
        } else {
          c.close();
        }
      } catch (Exception ignored) {
        // what a scenario left open ends either way
      }
    }
  }

  @SuppressWarnings("unchecked")
  void play(List<Object> steps) throws Failed, Skip {
    for (int i = 0; i < steps.size(); i++) {
      Map<String, Object> step = (Map<String, Object>) steps.get(i);
      Object verb = step.containsKey("call") ? step.get("call") : step.get("action");
      try {
        step(step);
      } catch (Failed f) {
        throw new Failed("step " + (i + 1) + " (" + verb + "): " + f.getMessage());
      }
    }
  }

  @SuppressWarnings("unchecked")
  private void step(Map<String, Object> step) throws Failed, Skip {
    if (step.get("action") instanceof String action) {
      act(action, step);
      return;
    }
    String verb = (String) step.get("call");
    Map<String, Object> args = (Map<String, Object>) values.resolve(step.getOrDefault("args", Map.of()));
    Map<String, Object> expect = (Map<String, Object>) step.getOrDefault("expect", Map.of());
    Map<String, Object> wanted = (Map<String, Object>) step.get("expect_error");
    Object[] result;
    try {
      result = call(verb, args, expect);
    } catch (RedlockdException e) {
      if (wanted == null) {
        throw new Failed("failed: " + e);
      }
      String code = codeOf(e);
      if (!code.equals(wanted.get("code"))) {
        throw new Failed("failed as " + code + " (" + e.getMessage() + "); expected " + wanted.get("code"));
      }
      if (wanted.get("field") instanceof String field && !e.getMessage().contains("invalid " + field)) {
        throw new Failed("the error does not name " + field + ": " + e.getMessage());
      }
      if (wanted.containsKey("message_contains")) {
        String text = String.valueOf(values.resolve(wanted.get("message_contains")));
        if (!e.getMessage().contains(text)) {
          throw new Failed("the error does not say " + text + ": " + e.getMessage());
        }
      }
      return;
    }
    if (wanted != null) {
      throw new Failed("succeeded; expected " + wanted.get("code"));
    }
    Map<String, Object> fields = (Map<String, Object>) result[0];
    String why = values.unmet(fields, expect);
    if (why != null) {
      throw new Failed(why);
    }
    if (step.get("as") instanceof String name) {
      values.bound.put(name, new ConformanceValues.Bound(fields, (List<Map<String, Object>>) result[2]));
      if (result[1] != null) {
        handles.put(name, result[1]);
      }
    }
  }

  private static String codeOf(RedlockdException e) {
    if (e instanceof InvalidArgumentException) {
      return "INVALID_ARGUMENT";
    } else if (e instanceof FailedPreconditionException) {
      return "FAILED_PRECONDITION";
    } else if (e instanceof UnavailableException) {
      return "UNAVAILABLE";
    } else if (e instanceof NotAcquiredException) {
      return "NOT_ACQUIRED";
    } else if (e instanceof NotElectedException) {
      return "NOT_ELECTED";
    }
    return e.getClass().getSimpleName();
  }

  private static Duration ms(Map<String, Object> args, String key) {
    BigInteger n = ConformanceValues.integer(args.get(key));
    return n == null ? null : Duration.ofMillis(n.longValueExact());
  }

  private static String text(Map<String, Object> args, String key) {
    return args.get(key) instanceof String s ? s : "";
  }

  static Map<String, Object> fields(Object... pairs) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      out.put((String) pairs[i], pairs[i + 1]);
    }
    return out;
  }

  private static Object[] result(Map<String, Object> fields) {
    return new Object[] {fields, null, List.of()};
  }

  private static Map<String, Object> leaseFields(Lease l) {
    return fields("acquired", true, "token", l.fencingToken().toBigInteger(), "shared", l.shared(),
        "permits", l.permits(), "slot", l.slot(), "resource", l.resource());
  }

  private static Map<String, Object> leaderFields(LeaderState l) {
    return l.elected()
        ? fields("elected", true, "candidate", l.candidate(), "value", l.valueUtf8(), "term", l.term().toBigInteger())
        : fields("elected", false);
  }

  private static Map<String, Object> changeFields(WatchChange w) {
    Map<String, Object> f = fields("kind", w.event().name(), "held", w.held(), "readers", w.readers(),
        "permits", w.permits(), "permits_out", w.permitsOut());
    w.holderToken().ifPresent(t -> f.put("token", t.toBigInteger()));
    w.holder().ifPresent(h -> f.put("owner", h.getOwner()));
    return f;
  }

  /** The lease a step names: "a", or "s.1" (a set's member). */
  @SuppressWarnings("unchecked")
  private Lease lease(String name) throws Failed {
    String[] parts = name.split("\\.");
    Object handle = handles.get(parts[0]);
    if (parts.length == 2 && handle instanceof List<?> set) {
      return ((List<Lease>) set).get(Integer.parseInt(parts[1]));
    }
    if (handle instanceof Lease l) {
      return l;
    }
    throw new Failed("no lease is bound as " + name);
  }

  @SuppressWarnings("unchecked")
  private List<Lease> members(Map<String, Object> args) throws Failed {
    if (!(handles.get(text(args, "set")) instanceof List<?> set)) {
      throw new Failed("no set is bound as " + args.get("set"));
    }
    if (!(args.get("members") instanceof List<?> chosen)) {
      return (List<Lease>) set;
    }
    List<Lease> some = new ArrayList<>();
    chosen.forEach(i -> some.add((Lease) set.get(((BigInteger) i).intValueExact())));
    return some;
  }

  private <T> T handle(Map<String, Object> args, String key, Class<T> type) throws Failed {
    Object h = handles.get(text(args, key));
    if (!type.isInstance(h)) {
      throw new Failed("no " + type.getSimpleName() + " is bound as " + args.get(key));
    }
    return type.cast(h);
  }

  /** A call's result: its fields, what to bind (or null), a set's members' fields. */
  @SuppressWarnings("unchecked")
  private Object[] call(String verb, Map<String, Object> args, Map<String, Object> expect) throws Failed, Skip {
    Duration ttl = ms(args, "ttl_ms");
    Duration wait = ms(args, "wait_ms");
    int permits = args.get("permits") instanceof BigInteger n ? n.intValueExact() : 0;
    boolean shared = Boolean.TRUE.equals(args.get("shared"));
    switch (verb) {
      case "acquire", "acquire_many" -> {
        AcquireOptions o = AcquireOptions.defaults().owner(text(args, "owner")).permits(permits);
        o = ttl != null ? o.ttl(ttl) : o;
        o = wait != null ? o.wait(wait) : o;
        o = shared ? o.shared() : o;
        o = args.get("reentrancy_key") instanceof String key ? o.reentrancyKey(key) : o;
        Duration lockDelay = ms(args, "lock_delay_ms");
        o = lockDelay != null ? o.lockDelay(lockDelay) : o;
        if (verb.equals("acquire")) {
          Optional<Lease> l = client.tryAcquire(text(args, "resource"), o);
          return l.isEmpty() ? result(fields("acquired", false)) : new Object[] {leaseFields(l.get()), l.get(), List.of()};
        }
        Optional<List<Lease>> set = client.tryAcquireMany((List<String>) args.get("resources"), o);
        if (set.isEmpty()) {
          return result(fields("acquired", false));
        }
        List<Map<String, Object>> members = set.get().stream().map(ConformanceRun::leaseFields).toList();
        Map<String, Object> f = fields("acquired", true, "count", set.get().size(),
            "resources", set.get().stream().map(Lease::resource).toList(),
            "tokens", members.stream().map(m -> m.get("token")).toList());
        return new Object[] {f, set.get(), members};
      }
      case "extend" -> {
        Lease l = lease(text(args, "lease"));
        return result(fields("extended", ttl != null ? l.extend(ttl) : l.extend()));
      }
      case "release" -> {
        return result(fields("released", lease(text(args, "lease")).release()));
      }
      case "inspect" -> {
        InspectResponse r = client.inspect(text(args, "resource"));
        Map<String, Object> f = fields("held", r.getHeld(), "readers", r.getReaders(), "permits", r.getPermits(),
            "permits_out", r.getPermitsOut());
        if (r.hasHolder()) {
          f.put("token", FencingToken.fromWire(r.getHolder().getFencingToken()).toBigInteger());
          f.put("owner", r.getHolder().getOwner());
        }
        return result(f);
      }
      case "extend_many" -> {
        List<Lease> set = members(args);
        return result(fields("extended", ttl != null ? client.extendMany(set, ttl) : client.extendMany(set)));
      }
      case "release_many" -> {
        return result(fields("released", client.releaseMany(members(args))));
      }
      default -> {
        return ConformanceSessions.call(this, verb, args, expect, ttl, wait, permits, shared);
      }
    }
  }

  /** What an open session, leadership or stream needs from the run. */
  Object[] bind(Map<String, Object> fields, AutoCloseable handle) {
    open.add(handle);
    return new Object[] {fields, handle, List.of()};
  }

  RedlockdClient client() {
    return client;
  }

  ConformanceValues values() {
    return values;
  }

  <T> T handleOf(Map<String, Object> args, String key, Class<T> type) throws Failed {
    return handle(args, key, type);
  }

  static Object[] done(Map<String, Object> fields) {
    return result(fields);
  }

  static Map<String, Object> leader(LeaderState l) {
    return leaderFields(l);
  }

  static Map<String, Object> change(WatchChange w) {
    return changeFields(w);
  }

  static String textOf(Map<String, Object> args, String key) {
    return text(args, key);
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static Duration campaignWait(Duration wait) {
    return wait != null ? wait : LONGEST_CAMPAIGN;
  }

  /** Waits for a lost() future; false when it did not complete within {@code within}. */
  static boolean completes(CompletableFuture<String> lost, Duration within) {
    try {
      lost.get(within.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (Exception e) {
      return true;
    }
  }

  private void act(String action, Map<String, Object> step) throws Failed {
    ConformanceSessions.act(this, action, step);
  }
}
