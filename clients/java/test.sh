#!/usr/bin/env bash
# The Java client's tests, against real daemons and five real masters each
# (scripts/with-dev-daemon; REDLOCKD_BIN names the daemon binary, else
# target/debug/redlockd):
#   1. `mvn verify`: the build generates the gRPC stubs from proto/ (protoc and
#      protoc-gen-grpc-java come from Maven Central), compiles, and runs the
#      plain suite: FencingTokenTest (unit: tokens up to 2^64 - 1 off the
#      wire), SessionEndingTest (unit: a HeldLock and a Leadership end alike on
#      a stream played by hand), LockingTest (tokens above 2^53 from a real
#      daemon among them), SessionsTest (a holding JVM killed with kill -9
#      among them), KindsTest,
#      SetsTest, SlowNetworkTest (a delaying TCP proxy: validity counted from
#      the send, a silent daemon, a daemon that never answers), ElectionsTest
#      (campaign, leader, proclaim, resign, terms above 2^53, lock delay),
#      ObserveWatchTest, ConformanceTest (the scenarios of ../conformance that
#      share a daemon);
#   1b. each conformance scenario that kills masters (ConformanceTest lists
#      them in target/conformance-own-daemon.txt), on a daemon of its own;
#   2. the test that kills three masters under a lock and a leader, on a
#      daemon of its own (killed masters stay dead for the rest of that
#      daemon's life);
#   3. the daemon frozen with SIGSTOP under a leader and a lock, on a daemon
#      of its own: both are told lost by the client's own clock, before
#      their validity ends (by at most the margin);
#   4. mutual TLS + bearer token, on the --secure daemon;
#   5. `mvn install` of the jar into the local Maven repository (~/.m2), then
#      a fresh Maven project that depends on it runs the README's first lock
#      (its first ```java block, as written) against a daemon;
#   6. the framework adapters built on the installed jar, on one daemon:
#      shedlock/ (ShedLock's own provider test kit, unchanged, whose sources
#      are first checked against their upstream git blob ids, and
#      @SchedulerLock on two Spring Boot contexts) and spring-integration/
#      (the LockRegistry behaviours Spring's own registry tests assert, and
#      LockRegistryLeaderInitiator with a leader killed by kill -9).
# Installs a JDK and Maven (Debian's packages) and redis-server when missing;
# Maven fetches the rest from Maven Central into ~/.m2.
#
#   bash clients/java/test.sh        (from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { echo "clients/java/test.sh: $*" >&2; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || "$root/scripts/ensure-deps"
bash "$here/ensure-java.sh"
mvn=(mvn -B -q -f "$here/pom.xml")
run() { "$root/scripts/with-dev-daemon" "$@"; }
# Maven 3.8 prints stray colour resets (ESC[0m) even with -B -q: dropped.
clean() { sed -u 's/\x1b\[0m//g'; }
started=$SECONDS
fresh="$(mktemp -d -t redlockd-java.XXXXXX)"
trap 'rm -rf "$fresh"' EXIT
adapters=(shedlock spring-integration)
rm -rf "$here/target/surefire-reports" "$here/target/conformance-own-daemon.txt"
for m in "${adapters[@]}"; do rm -rf "$here/$m/target/surefire-reports"; done

if [ -n "${REDLOCKD_TEST_PREPARE:-}" ]; then
  "${mvn[@]}" test-compile 2>&1 | clean
  # The adapters depend on the client's jar: installed, then their tests compiled.
  "${mvn[@]}" install -DskipTests 2>&1 | clean
  for m in "${adapters[@]}"; do mvn -B -q -f "$here/$m/pom.xml" test-compile 2>&1 | clean; done
  say "prepared: the Maven artifacts, the stubs and the compiled tests (client and adapters)"
  exit 0
fi
say "1. mvn verify: the stubs generated from proto/, the plain suite"
run "${mvn[@]}" verify 2>&1 | clean
say "1b. the conformance scenarios that kill masters, each on a daemon of its own"
owned="$(cat "$here/target/conformance-own-daemon.txt")"
[ "$(wc -w <<<"$owned")" -ge 2 ] || { say "found $(wc -w <<<"$owned") conformance scenarios that kill masters, not 2"; exit 1; }
for id in $owned; do
  REDLOCKD_CONFORMANCE_SCENARIO="$id" run "${mvn[@]}" surefire:test -Dgroups=conformance-own-daemon -DexcludedGroups= 2>&1 | clean
done
say "2. three masters killed, on a daemon of its own"
run "${mvn[@]}" surefire:test -Dgroups=kills-masters -DexcludedGroups= 2>&1 | clean
say "3. the daemon frozen (SIGSTOP), on a daemon of its own"
run "${mvn[@]}" surefire:test -Dgroups=frozen-daemon -DexcludedGroups= 2>&1 | clean
say "4. mutual TLS and a bearer token"
run --secure "${mvn[@]}" surefire:test -Dgroups=secure -DexcludedGroups= 2>&1 | clean
# What ran, from Surefire's reports (a failure has stopped the script already).
counts="$(cat "$here"/target/surefire-reports/TEST-*.xml | grep -o '<testsuite [^>]*>' |
  sed -E 's/.* tests="([0-9]+)" errors="([0-9]+)" skipped="([0-9]+)" failures="([0-9]+)".*/\1 \2 \3 \4/' |
  awk '{ t += $1; e += $2; s += $3; f += $4 } END { printf "%d passed, %d failed, %d skipped", t - e - s - f, e + f, s }')"
say "surefire: $counts"

say "5. mvn install, then a fresh project runs the README's first lock"
"${mvn[@]}" install -DskipTests 2>&1 | clean
version="$(sed -n 's|^  <version>\(.*\)</version>$|\1|p' "$here/pom.xml" | head -1)"
mkdir -p "$fresh/src/main/java"
cat >"$fresh/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>first-lock</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>io.redlockd</groupId>
      <artifactId>redlockd-client</artifactId>
      <version>$version</version>
    </dependency>
  </dependencies>
  <build>
    <pluginManagement>
      <plugins>
        <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.14.0</version></plugin>
        <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
        <plugin><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version></plugin>
      </plugins>
    </pluginManagement>
  </build>
</project>
POM
lines="$(awk '/^```java$/ { inside = 1; next } /^```$/ && inside { exit } inside' "$here/README.md")"
[ "$(printf '%s\n' "$lines" | grep -c .)" -le 5 ] || { say "the README's first lock is over five lines"; exit 1; }
{
  printf 'import io.redlockd.client.*;\nimport java.time.Duration;\n\npublic class FirstLock {\n'
  printf '  public static void main(String[] args) throws Exception {\n'
  printf '%s\n' "$lines"
  printf '  }\n}\n'
} >"$fresh/src/main/java/FirstLock.java"
(cd "$fresh" && mvn -B -q compile dependency:build-classpath -Dmdep.outputFile=classpath.txt) 2>&1 | clean
(cd "$fresh" && run java -cp "target/classes:$(cat classpath.txt)" FirstLock) | tee "$fresh/out" >&2
grep -Eq '^fencing token [0-9]+$' "$fresh/out" || { say "the README's first lock took no lock"; exit 1; }

say "6. the ShedLock provider and the Spring Integration lock registry, on the jar installed in 5"
kit="$here/shedlock/src/test/java/net/javacrumbs/shedlock/test/support"
checked=0
while read -r id file; do
  [ "$(git hash-object "$kit/$file")" = "$id" ] ||
    { say "$kit/$file is not ShedLock's own (its git blob id is not $id, see UPSTREAM there)"; exit 1; }
  checked=$((checked + 1))
done < <(grep -E '^[0-9a-f]{40}  [A-Za-z]+\.java$' "$kit/UPSTREAM")
[ "$checked" -eq 3 ] || { say "checked $checked of ShedLock's test kit files, not 3"; exit 1; }
poms=()
for m in "${adapters[@]}"; do poms+=("$here/$m/pom.xml"); done
run bash -c 'for pom in "$@"; do mvn -B -q -f "$pom" verify || exit 1; done' adapters "${poms[@]}" 2>&1 | clean
# ShedLock's kit must have run whole: 15 tests of the extensible kit, 8 of the plain one.
tests_in() { grep -o '<testsuite [^>]* tests="[0-9]*"' "$1" | sed -E 's/.* tests="([0-9]+)"/\1/'; }
reports="$here/shedlock/target/surefire-reports"
[ "$(tests_in "$reports/TEST-io.redlockd.shedlock.RedlockdLockProviderIntegrationTest.xml")" = 15 ] &&
  [ "$(tests_in "$reports/TEST-io.redlockd.shedlock.RedlockdLockProviderTwoInstancesIntegrationTest.xml")" = 8 ] ||
  { say "ShedLock's provider test kit did not run whole (15 + 8 tests)"; exit 1; }
for m in "${adapters[@]}"; do
  adapter_counts="$(cat "$here/$m"/target/surefire-reports/TEST-*.xml | grep -o '<testsuite [^>]*>' |
    sed -E 's/.* tests="([0-9]+)" errors="([0-9]+)" skipped="([0-9]+)" failures="([0-9]+)".*/\1 \2 \3 \4/' |
    awk '{ t += $1; e += $2; s += $3; f += $4 } END { printf "%d passed, %d failed, %d skipped", t - e - s - f, e + f, s }')"
  say "$m: $adapter_counts"
done
say "ok ($((SECONDS - started)) s)"
