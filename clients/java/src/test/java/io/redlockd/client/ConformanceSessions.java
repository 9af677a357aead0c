package io.redlockd.client;

import static io.redlockd.client.ConformanceRun.done;
import static io.redlockd.client.ConformanceRun.fields;
import static io.redlockd.client.ConformanceRun.textOf;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The conformance scenarios' Hold sessions, elections and streams, and the actions
 * (clients/conformance/README.md#calls, #actions), for {@link ConformanceRun}.
 */
final class ConformanceSessions {
  private ConformanceSessions() {}

  private static FencingToken term(Map<String, Object> args) {
    return FencingToken.of(ConformanceValues.integer(args.get("term")));
  }

  @SuppressWarnings("unchecked")
  static Object[] call(
      ConformanceRun run,
      String verb,
      Map<String, Object> args,
      Map<String, Object> expect,
      Duration ttl,
      Duration wait,
      int permits,
      boolean shared)
      throws ConformanceRun.Failed {
    RedlockdClient client = run.client();
    String value = textOf(args, "value");
    switch (verb) {
      case "hold" -> {
        HoldOptions o = HoldOptions.defaults().owner(textOf(args, "owner")).permits(permits);
        o = ttl != null ? o.ttl(ttl) : o;
        o = wait != null ? o.wait(wait) : o;
        o = shared ? o.shared() : o;
        o = args.get("reentrancy_key") instanceof String key ? o.reentrancyKey(key) : o;
        o = args.containsKey("max_hold_ms") ? o.maxHold(Duration.ofMillis(((BigInteger) args.get("max_hold_ms")).longValueExact())) : o;
        o = args.containsKey("lock_delay_ms") ? o.lockDelay(Duration.ofMillis(((BigInteger) args.get("lock_delay_ms")).longValueExact())) : o;
        HeldLock h = client.hold(textOf(args, "resource"), o);
        return run.bind(fields("held", true, "token", h.fencingToken().toBigInteger(), "slot", h.slot()), h);
      }
      case "release_hold" -> {
        return done(fields("released", run.handleOf(args, "hold", HeldLock.class).release()));
      }
      case "campaign" -> {
        CampaignOptions o = CampaignOptions.defaults().candidate(textOf(args, "candidate")).value(value);
        o = ttl != null ? o.ttl(ttl) : o;
        Leadership l = client.campaign(textOf(args, "election"), o.wait(ConformanceRun.campaignWait(wait)));
        return run.bind(fields("elected", true, "term", l.term().toBigInteger(), "value", l.valueUtf8()), l);
      }
      case "leader" -> {
        return done(ConformanceRun.leader(client.leader(textOf(args, "election"))));
      }
      case "proclaim" -> {
        if (args.containsKey("leadership")) {
          run.handleOf(args, "leadership", Leadership.class).proclaim(value);
        } else {
          client.proclaim(textOf(args, "election"), term(args), ConformanceRun.utf8(value));
        }
        return done(fields());
      }
      case "resign" -> {
        if (args.containsKey("leadership")) {
          run.handleOf(args, "leadership", Leadership.class).resign();
        } else {
          client.resign(textOf(args, "election"), term(args));
        }
        return done(fields());
      }
      case "observe", "watch" -> {
        Follower<?> f = verb.equals("observe") ? client.observe(textOf(args, "election")) : client.watch(textOf(args, "resource"));
        Optional<?> first = f.poll(Duration.ofSeconds(10));
        if (first.isEmpty()) {
          f.close();
          throw new ConformanceRun.Failed("no first state in 10 s");
        }
        return run.bind(state(first.get()), f);
      }
      case "next" -> {
        Follower<?> f = run.handleOf(args, "stream", Follower.class);
        BigInteger within = ConformanceValues.integer(args.getOrDefault("within_ms", BigInteger.valueOf(10000)));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(within.longValueExact());
        int seen = 0;
        while (true) {
          long left = deadline - System.nanoTime();
          Optional<?> next = left > 0 ? f.poll(Duration.ofNanos(left)) : Optional.empty();
          if (next.isEmpty()) {
            throw new ConformanceRun.Failed(seen + " states in " + within + " ms, none as expected");
          }
          Map<String, Object> state = state(next.get());
          if (run.values().unmet(state, expect) == null) {
            return done(state);
          }
          seen++;
        }
      }
      case "close" -> {
        run.handleOf(args, "stream", Follower.class).close();
        return done(fields());
      }
      default -> throw new ConformanceRun.Failed("no such call " + verb);
    }
  }

  private static Map<String, Object> state(Object message) {
    return message instanceof LeaderState l ? ConformanceRun.leader(l) : ConformanceRun.change((WatchChange) message);
  }

  static void act(ConformanceRun run, String action, Map<String, Object> step) throws ConformanceRun.Failed {
    long n;
    switch (action) {
      case "sleep" -> {
        try {
          Thread.sleep(((BigInteger) step.get("ms")).longValueExact());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ConformanceRun.Failed("interrupted");
        }
      }
      case "kill_masters" -> {
        long[] pids = Daemon.masterPids();
        n = ((BigInteger) step.get("count")).longValueExact();
        List<String> command = new ArrayList<>(List.of("kill", "-KILL"));
        for (int i = 0; i < n; i++) {
          command.add(Long.toString(pids[i]));
        }
        Daemon.run(command.toArray(new String[0]));
      }
      case "expect_lost" -> {
        Duration within = Duration.ofMillis(((BigInteger) step.get("within_ms")).longValueExact());
        Session<?, ?> session = step.containsKey("hold")
            ? run.handleOf(step, "hold", HeldLock.class)
            : run.handleOf(step, "leadership", Leadership.class);
        if (!ConformanceRun.completes(session.lost(), within)) {
          throw new ConformanceRun.Failed("not told it was lost within " + within.toMillis() + " ms");
        }
      }
      case "seed_counters_above" -> {
        BigInteger counter = seedCounters(new BigInteger((String) step.get("value")));
        if (step.get("as") instanceof String name) {
          run.values().bound.put(name, new ConformanceValues.Bound(fields("counter", counter.toString()), List.of()));
        }
      }
      default -> throw new ConformanceRun.Failed("no such action " + action);
    }
  }

  private static final String HIGHEST_FENCE =
      "local h = 0 for _, k in ipairs(redis.call('KEYS', 'redlockd:{*}:fence')) do"
          + " h = math.max(h, tonumber(redis.call('GET', k))) end return h";
  private static final String SET_EVERY_FENCE =
      "local m = redis.call('KEYS', 'redlockd:{*}:verified') for _, k in ipairs(m) do"
          + " redis.call('SET', string.sub(k, 1, -1 - #'verified') .. 'fence', ARGV[1]) end return #m";

  /**
   * Raises every verified bucket's fence counter on every master so that later tokens pass {@code
   * value} (clients/conformance/README.md#actions): to value/16 + 1000003, or the highest counter
   * already there when that is more (another test may have raised one near 2^53, the most a master
   * keeps).
   */
  private static BigInteger seedCounters(BigInteger value) throws ConformanceRun.Failed {
    BigInteger counter = value.divide(BigInteger.valueOf(16)).add(BigInteger.valueOf(1_000_003));
    for (int port : Daemon.masterPorts()) {
      counter = counter.max(new BigInteger(Daemon.redis(port, "EVAL", HIGHEST_FENCE, 0)));
    }
    for (int port : Daemon.masterPorts()) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      String buckets;
      while (!(buckets = Daemon.redis(port, "EVAL", SET_EVERY_FENCE, 0, counter)).equals("16384")) {
        if (System.nanoTime() > deadline) {
          throw new ConformanceRun.Failed("the master on port " + port + " verified " + buckets + " buckets of 16384");
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ConformanceRun.Failed("interrupted");
        }
      }
    }
    return counter;
  }
}
