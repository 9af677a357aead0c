package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The conformance scenarios (clients/conformance/README.md): the calls, read from
 * ../conformance/scenarios/*.json, that every client plays against a real daemon with five
 * masters. One line per scenario on standard output: {@code PASS id}, {@code SKIP id: why} or
 * {@code FAIL id: why}. The scenarios that kill masters are {@link ConformanceOwnDaemonTest}'s:
 * their ids go to target/conformance-own-daemon.txt, and test.sh plays each on a daemon of its
 * own. The calls are {@link ConformanceRun}'s.
 */
class ConformanceTest {
  record Scenario(String id, boolean ownDaemon, List<Object> steps) {}

  @SuppressWarnings("unchecked")
  static List<Scenario> scenarios() throws IOException {
    String dir = System.getenv().getOrDefault("REDLOCKD_CONFORMANCE_SCENARIOS", "../conformance/scenarios");
    List<Path> files;
    try (Stream<Path> listed = Files.list(Path.of(dir))) {
      files = listed.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
    List<Scenario> all = new ArrayList<>();
    for (Path file : files) {
      Map<String, Object> doc = (Map<String, Object>) Json.parse(Files.readString(file, StandardCharsets.UTF_8));
      for (Object s : (List<Object>) doc.get("scenarios")) {
        Map<String, Object> scenario = (Map<String, Object>) s;
        List<Object> needs = (List<Object>) scenario.getOrDefault("needs", List.of());
        all.add(new Scenario((String) scenario.get("id"), needs.contains("own-daemon"), (List<Object>) scenario.get("steps")));
      }
    }
    assertTrue(all.size() >= 60, all.size() + " scenarios in " + dir + ": the files hold more");
    return all;
  }

  /** Plays each scenario; the ids of those that failed. */
  static List<String> play(List<Scenario> scenarios) {
    List<String> failed = new ArrayList<>();
    try (RedlockdClient client = Daemon.client()) {
      for (Scenario s : scenarios) {
        String outcome;
        try (ConformanceRun run = new ConformanceRun(client)) {
          run.play(s.steps());
          outcome = "PASS " + s.id();
        } catch (ConformanceRun.Skip skip) {
          outcome = "SKIP " + s.id() + ": " + skip.getMessage();
        } catch (ConformanceRun.Failed | RuntimeException failure) {
          outcome = "FAIL " + s.id() + ": " + failure.getMessage();
          failed.add(s.id());
        }
        System.out.println(outcome);
      }
    }
    return failed;
  }

  /** Where the ids of the scenarios that kill masters go, for test.sh. */
  static final Path OWN_DAEMON_IDS = Path.of("target", "conformance-own-daemon.txt");

  @Test
  void playsEveryScenarioThatSharesADaemon() throws IOException {
    List<Scenario> all = scenarios();
    List<String> own = all.stream().filter(Scenario::ownDaemon).map(Scenario::id).toList();
    assertTrue(own.size() >= 2, own.size() + " scenarios kill masters, not 2");
    Files.createDirectories(OWN_DAEMON_IDS.getParent());
    Files.write(OWN_DAEMON_IDS, own);
    assertEquals(List.of(), play(all.stream().filter(s -> !s.ownDaemon()).toList()));
  }
}
