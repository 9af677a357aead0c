package io.redlockd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The conformance scenario REDLOCKD_CONFORMANCE_SCENARIO names, one that kills masters: test.sh runs
 * it on a daemon of its own (the conformance-own-daemon tag), once per id {@link ConformanceTest}
 * listed.
 */
@Tag("conformance-own-daemon")
class ConformanceOwnDaemonTest {
  @Test
  void playsTheScenarioThatKillsMasters() throws IOException {
    String id = System.getenv().getOrDefault("REDLOCKD_CONFORMANCE_SCENARIO", "");
    assertFalse(id.isEmpty(), "REDLOCKD_CONFORMANCE_SCENARIO is not set: run it through clients/java/test.sh");
    List<ConformanceTest.Scenario> one =
        ConformanceTest.scenarios().stream().filter(s -> s.ownDaemon() && s.id().equals(id)).toList();
    assertEquals(1, one.size(), "no scenario " + id + " needs a daemon of its own");
    assertEquals(List.of(), ConformanceTest.play(one));
  }
}
