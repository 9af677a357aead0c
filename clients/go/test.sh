#!/usr/bin/env bash
# The Go client's checks and tests, offline, on Debian's Go packages
# (installed here when missing; quick when they are there):
#   1. the committed stubs in redlockdv1/ are what gen.sh makes of the proto;
#   2. gofmt, go vet;
#   3. the tests against a real daemon and five real masters
#      (scripts/with-dev-daemon): TestClient*, then TestKillsMasters* on a
#      daemon of its own (the killed masters stay dead), then TestSecure* on
#      the --secure daemon (mutual TLS and a bearer token);
#   4. the README's five lines, as pasted, built by a user's program that
#      depends on the package from the repository path: once in GOPATH
#      mode, once as a module with a `replace` (clients/go/user-module.sh).
#
#   bash clients/go/test.sh     (REDLOCKD_BIN picks the daemon binary)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { echo "clients/go/test.sh: $*" >&2; }
command -v redis-server >/dev/null || "$root/scripts/ensure-deps"

bash "$here/ensure-go.sh"

scratch="$(mktemp -d -t redlockd-go.XXXXXX)"
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT

# 1. The stubs users get are the proto's.
bash "$here/gen.sh" "$scratch/gen" 2>/dev/null
diff -r "$scratch/gen/redlockdv1" "$here/redlockdv1" >/dev/null ||
  { say "redlockdv1/ is stale: run bash clients/go/gen.sh and commit it"; exit 1; }

# GOPATH mode: this folder linked in a throwaway GOPATH, Debian's sources after it.
gopath="$scratch/gopath"
module="github.com/redlockd/redlockd/clients/go"
mkdir -p "$gopath/src/$(dirname "$module")"
ln -s "$here" "$gopath/src/$module"
export GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOFLAGS= GOCACHE="${GOCACHE:-${HOME:-/tmp}/.cache/redlockd-go-build}"

# 2. Formatting and vet.
cd "$gopath/src/$module"
unformatted="$(gofmt -l "$here"/*.go "$root"/examples/go/*.go)"
[ -z "$unformatted" ] || { say "not gofmt-formatted: $unformatted"; exit 1; }
go vet . ./redlockdv1

# 3. The tests, each group against a daemon of its own.
# With the race detector when a C compiler is there for it (the client is
# goroutines around a stream).
race=""; command -v gcc >/dev/null && race="-race"
go test $race -c -o "$scratch/redlockd.test" .
run() { "$root/scripts/with-dev-daemon" "$@"; }
run "$scratch/redlockd.test" -test.run '^TestClient' -test.v -test.count=1
run "$scratch/redlockd.test" -test.run '^TestKillsMasters' -test.v -test.count=1
run --secure "$scratch/redlockd.test" -test.run '^TestSecure' -test.v -test.count=1

# 4. The README's five lines (its first ```go block), in a user's program.
user="$gopath/src/example.com/firstlock"
mkdir -p "$user"
{
  printf 'package main\n\nimport (\n\t"context"\n\t"fmt"\n\t"log"\n\t"time"\n\n'
  printf '\tredlockd "%s"\n)\n\nfunc main() {\n\tctx := context.Background()\n' "$module"
  awk '/^```go$/ { inside = 1; next } /^```$/ && inside { exit } inside' "$here/README.md"
  printf '\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n'
} >"$user/main.go"
[ "$(awk '/^```go$/ { inside = 1; next } /^```$/ && inside { exit } inside' "$here/README.md" | wc -l)" -eq 5 ] ||
  { say "the README's first lock is not five lines"; exit 1; }
(cd "$user" && go build -o "$scratch/firstlock" .)
run "$scratch/firstlock" | tee "$scratch/firstlock.out"
grep -q '^fencing token [0-9][0-9]*$' "$scratch/firstlock.out" || { say "the README's five lines took no lock"; exit 1; }
say "the README's five lines took a lock (GOPATH mode)"

bash "$here/user-module.sh" "$user/main.go" "$scratch/module"
run "$scratch/module/firstlock" | grep -q '^fencing token [0-9][0-9]*$' ||
  { say "the README's five lines, built as a module, took no lock"; exit 1; }
say "the README's five lines took a lock (module mode, replace)"
say "ok"
