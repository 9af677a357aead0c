package io.redlockd.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlockd.client.FencingToken;
import io.redlockd.client.RedlockdClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Two Spring Boot applications (two application contexts, each with its own connection to the
 * daemon) schedule the same {@code @SchedulerLock} job on the same cron, every second: it runs once
 * per second across both, under rising fencing tokens; when one application stops, the other runs
 * it alone, still once per second.
 */
class SchedulerLockTwoContextsTest {
  /** A locked run: which application, the second it fired in, its token. */
  record Run(String app, long second, FencingToken token) {}

  static final ConcurrentLinkedQueue<Run> RUNS = new ConcurrentLinkedQueue<>();
  /** Every firing, locked or not: (application, second). */
  static final ConcurrentLinkedQueue<Map.Entry<String, Long>> FIRED = new ConcurrentLinkedQueue<>();
  static final String PREFIX = Daemon.prefix("spring");

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableScheduling
  @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
  static class App {
    @Bean(destroyMethod = "close")
    RedlockdClient redlockdClient() {
      return Daemon.client();
    }

    @Bean(destroyMethod = "close")
    LockProvider lockProvider(RedlockdClient client) {
      return RedlockdLockProvider.builder(client).prefix(PREFIX).build();
    }

    @Bean
    Jobs jobs(@Value("${app}") String app) {
      return new Jobs(app);
    }
  }

  static class Jobs {
    private final String app;

    Jobs(String app) {
      this.app = app;
    }

    /**
     * The job under the lock: held at least 0.8 s, so the other app's firing of the same second is
     * refused even if it comes that late (a busy machine).
     */
    @Scheduled(cron = "* * * * * *")
    @SchedulerLock(name = "report", lockAtLeastFor = "PT0.8S", lockAtMostFor = "PT5S")
    public void report() {
      RUNS.add(new Run(app, Instant.now().getEpochSecond(), RedlockdShedLock.currentToken()));
    }

    /** The same cron without a lock: proof that both apps fire (about) every second. */
    @Scheduled(cron = "* * * * * *")
    public void fired() {
      FIRED.add(Map.entry(app, Instant.now().getEpochSecond()));
    }
  }

  private static ConfigurableApplicationContext start(String app) {
    return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
        .properties("app=" + app, "spring.main.banner-mode=off", "spring.task.scheduling.pool.size=2",
            "logging.level.root=WARN")
        .run();
  }

  @Test
  void theJobRunsOncePerSecondAcrossBothApplicationsAndGoesOnWhenOneStops() throws Exception {
    ConfigurableApplicationContext a = start("a");
    ConfigurableApplicationContext b = start("b");
    long together;
    long alone;
    try {
      long from = Instant.now().getEpochSecond() + 2; // a second to warm up
      Thread.sleep(5200);
      together = Instant.now().getEpochSecond() - 1;
      a.close();
      long bAlone = Instant.now().getEpochSecond() + 1;
      Thread.sleep(3200);
      alone = Instant.now().getEpochSecond() - 1;

      Map<Long, List<Run>> bySecond = new TreeMap<>();
      for (Run run : RUNS) {
        bySecond.computeIfAbsent(run.second(), s -> new ArrayList<>()).add(run);
      }
      // Never twice in a second. A second may go without a run, at most one: a firing that a
      // busy machine delays to the end of its second holds the lock (lockAtLeastFor) into the
      // next, whose firings are then refused, as they should be.
      long missed = 0;
      for (long s = from; s <= alone; s++) {
        List<Run> runs = bySecond.getOrDefault(s, List.of());
        assertThat(runs).as("runs in second %d (all: %s)", s, bySecond).hasSizeLessThanOrEqualTo(1);
        missed += runs.isEmpty() ? 1 : 0;
      }
      assertThat(missed).as("seconds without a run, of %d (all: %s)", alone - from + 1, bySecond)
          .isLessThanOrEqualTo(1);
      for (String app : List.of("a", "b")) {
        long fired = FIRED.stream().filter(f -> f.getKey().equals(app) && f.getValue() >= from
            && f.getValue() <= together).count();
        assertThat(fired).as("seconds in which %s fired, of %d", app, together - from + 1)
            .isGreaterThanOrEqualTo(together - from);
      }
      for (long s = bAlone; s <= alone; s++) {
        for (Run run : bySecond.getOrDefault(s, List.of())) {
          assertThat(run.app()).as("the app left, in second %d", s).isEqualTo("b");
        }
      }
      List<FencingToken> tokens = bySecond.values().stream().map(runs -> runs.get(0).token()).toList();
      for (int i = 1; i < tokens.size(); i++) {
        assertThat(tokens.get(i).isAfter(tokens.get(i - 1))).as("token %s after %s", tokens.get(i), tokens.get(i - 1))
            .isTrue();
      }
      assertThat(alone - from).as("seconds watched").isGreaterThanOrEqualTo(5);
    } finally {
      a.close();
      b.close();
    }
  }
}
