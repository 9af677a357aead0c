#!/usr/bin/env bash
# Makes sure a JDK 17 or later (java and javac) and Maven are on PATH: Debian's
# openjdk-17-jdk-headless and maven, installed with apt-get when missing (as
# root, or through sudo). Fails naming what is missing otherwise. Used by
# test.sh and examples/java/run.sh.
set -euo pipefail
say() { echo "clients/java/ensure-java.sh: $*" >&2; }
have() { command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; }
if ! have; then
  say "installing openjdk-17-jdk-headless and maven (java, javac or mvn is missing)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  { $sudo apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless maven >/dev/null 2>&1 ||
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless maven >/dev/null; }; } ||
    true
  have || { say "need java and javac 17 or later and mvn (Maven 3.6.3 or later) on PATH: install a JDK and Maven"; exit 1; }
fi
# "17.0.15", "21", "1.8.0_402": the feature release is the first number (the second for 1.x).
version="$(javac -version 2>&1 | awk '{ print $2 }')"
major="${version%%.*}"
[ "$major" != 1 ] || major="$(echo "$version" | cut -d. -f2)"
if ! [ "$major" -ge 17 ] 2>/dev/null; then
  say "$(command -v javac) is Java $version; the client needs Java 17 or later (set JAVA_HOME / PATH to a newer JDK)"
  exit 1
fi
