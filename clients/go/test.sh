#!/usr/bin/env bash
# The Go client's checks and tests, with the machine's Go (ensure-go.sh
# fails at once, saying so, when there is none) and the modules go.mod pins,
# from the Go module proxy:
#   1. go.mod and go.sum are tidy, here and in examples/go;
#   2. the committed stubs in redlockdv1/ are what gen.sh makes of the proto
#      (protoc and its pinned Go plugins, installed by gen.sh);
#   3. gofmt, and go vet with every analyzer (the client and examples/go),
#      within the test build;
#   4. the tests, with the race detector, against a real daemon and five
#      real masters (scripts/with-dev-daemon): TestClient* (the
#      conformance scenarios, ../conformance, among them), then each
#      TestKillsMasters* and TestFreezesDaemon*, and each conformance
#      scenario that kills masters, on a daemon of its own (the killed
#      masters stay dead; the frozen daemon is continued), then
#      TestSecure* on the --secure daemon (mutual TLS and a bearer token);
#   5. the README's five lines, as pasted, in a user's program: a fresh
#      module outside the repository that `go get`s this client through a
#      `replace` (user-module.sh), built and run against a daemon.
# k8slock/, the client-go resourcelock.Interface, is a module of its own
# with a test.sh of its own (scripts/test runs it as a lane of its own).
#
#   bash clients/go/test.sh     (REDLOCKD_BIN picks the daemon binary)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { echo "clients/go/test.sh: $*" >&2; }
bash "$here/ensure-go.sh"
command -v redis-server >/dev/null || "$root/scripts/ensure-deps"
# The race detector is cgo: it needs a C compiler.
if ! command -v gcc >/dev/null 2>&1; then
  say "installing gcc (go test -race needs a C compiler)"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq gcc libc6-dev >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq gcc libc6-dev >/dev/null; }
fi

scratch="$(mktemp -d -t redlockd-go.XXXXXX)"
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
cd "$here"

# 1. The pins are what the code needs, and nothing else.
for dir in "$here" "$root/examples/go"; do
  (cd "$dir" && go mod tidy -diff >"$scratch/tidy.diff") ||
    { cat "$scratch/tidy.diff" >&2; say "${dir#"$root/"}: go.mod/go.sum are not tidy: run go mod tidy there and commit"; exit 1; }
done

# 2. The stubs users get are the proto's.
bash "$here/gen.sh" "$scratch/gen" 2>"$scratch/gen.log" || { cat "$scratch/gen.log" >&2; exit 1; }
diff -r "$scratch/gen/redlockdv1" "$here/redlockdv1" >"$scratch/stubs.diff" ||
  { head -40 "$scratch/stubs.diff" >&2; say "redlockdv1/ is stale: run bash clients/go/gen.sh and commit it"; exit 1; }

# 3. Formatting, and vet with every analyzer (go vet's own set) as part of
# each test build below (-vet=all): vet's facts about the dependencies come
# from the very compiles the tests use, not from a build of their own
# (which cost 45 CPU-seconds cold for the client, 195 for k8slock).
unformatted="$(gofmt -l "$here"/*.go "$here/redlockdv1" "$root/examples/go")"
[ -z "$unformatted" ] || { say "not gofmt-formatted: $unformatted"; exit 1; }

# 4. The tests, each group against a daemon of its own.
go test -race -vet=all -c -o "$scratch/redlockd.test" .
# examples/go with the client's race build (the same compiles).
(cd "$root/examples/go" && go vet -race ./...)
[ -z "${REDLOCKD_TEST_PREPARE:-}" ] || { say "prepared: the modules, the stubs and the race-enabled client tests"; exit 0; }
run() { "$root/scripts/with-dev-daemon" "$@"; }
run "$scratch/redlockd.test" -test.run '^TestClient' -test.v -test.count=1
alone="$("$scratch/redlockd.test" -test.list '^(TestKillsMasters|TestFreezesDaemon)')"
[ "$(wc -w <<<"$alone")" -ge 3 ] || { say "found $(wc -w <<<"$alone") tests that kill masters or freeze the daemon, not 3"; exit 1; }
for test in $alone; do
  run "$scratch/redlockd.test" -test.run "^$test\$" -test.v -test.count=1
done
# The conformance scenarios that kill masters (TestClientConformance played
# the others above), each on a daemon of its own.
owned="$(cd "$here" && "$scratch/redlockd.test" -test.run '^TestConformanceOnOwnDaemon$' | sed -n 's/^own-daemon //p')"
[ "$(wc -w <<<"$owned")" -ge 2 ] || { say "found $(wc -w <<<"$owned") conformance scenarios that need a daemon of their own, not 2"; exit 1; }
for id in $owned; do
  REDLOCKD_CONFORMANCE_SCENARIO="$id" run "$scratch/redlockd.test" -test.run '^TestConformanceOnOwnDaemon$' -test.count=1
done
run --secure "$scratch/redlockd.test" -test.run '^TestSecure' -test.v -test.count=1

# 5. The README's five lines (its first ```go block), in a user's program.
five_lines() { awk '/^```go$/ { inside = 1; next } /^```$/ && inside { exit } inside' "$here/README.md"; }
[ "$(five_lines | wc -l)" -eq 5 ] || { say "the README's first lock is not five lines"; exit 1; }
{
  printf 'package main\n\nimport (\n\t"context"\n\t"fmt"\n\t"log"\n\t"time"\n\n'
  printf '\tredlockd "github.com/redlockd/redlockd/clients/go"\n)\n\nfunc main() {\n\tctx := context.Background()\n'
  five_lines
  printf '\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n'
} >"$scratch/main.go"
# Built with -race, as the tests were: their compiles of grpc and protobuf
# serve it.
GOFLAGS=-race bash "$here/user-module.sh" "$scratch/main.go" "$scratch/firstlock" 2>"$scratch/user-module.log" ||
  { cat "$scratch/user-module.log" >&2; say "the README's five lines did not build as a user's module"; exit 1; }
run "$scratch/firstlock/firstlock" | tee "$scratch/firstlock.out"
grep -q '^fencing token [0-9][0-9]*$' "$scratch/firstlock.out" || { say "the README's five lines took no lock"; exit 1; }
say "the README's five lines took a lock (a user's module, go get with a replace)"

say "ok"
