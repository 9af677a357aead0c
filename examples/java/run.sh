#!/usr/bin/env bash
# Installs the Java client from the repository path into the local Maven
# repository (~/.m2), builds FencedWrite.java as a project that depends on it
# (pom.xml), and runs it against a throwaway daemon, plain and then with
# mutual TLS and a bearer token (scripts/with-dev-daemon --secure).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$root/clients/java/ensure-java.sh"
# Maven 3.8 prints stray colour resets (ESC[0m) even with -B -q: dropped.
clean() { sed -u 's/\x1b\[0m//g'; }
mvn -B -q -f "$root/clients/java/pom.xml" install -DskipTests 2>&1 | clean
mvn -B -q -f "$here/pom.xml" compile dependency:build-classpath -Dmdep.outputFile="$here/target/classpath.txt" 2>&1 | clean
classpath="$here/target/classes:$(cat "$here/target/classpath.txt")"
"$root/scripts/with-dev-daemon" java -cp "$classpath" FencedWrite
exec "$root/scripts/with-dev-daemon" --secure java -cp "$classpath" FencedWrite
