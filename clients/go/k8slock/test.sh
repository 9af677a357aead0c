#!/usr/bin/env bash
# k8slock's checks and tests (a module of its own, so that the Go client
# stays free of Kubernetes modules), with the machine's Go and the modules
# go.mod pins, from the Go module proxy:
#   1. go.mod and go.sum are tidy; gofmt; go vet with every analyzer,
#      within the test build;
#   2. its README's three lines, as pasted, in a user's program: a fresh
#      module outside the repository that `go get`s k8slock and the client
#      through `replace`s (user-module.sh);
#   3. its tests against a daemon of their own and five real masters
#      (client-go's RunOrDie and a controller-runtime Manager, candidates as
#      OS processes, kill -9 of the leader), then the README's program
#      against a daemon: it must lead.
#
#   bash clients/go/k8slock/test.sh     (REDLOCKD_BIN picks the daemon binary)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
say() { echo "clients/go/k8slock/test.sh: $*" >&2; }
bash "$here/../ensure-go.sh"
command -v redis-server >/dev/null || "$root/scripts/ensure-deps"
scratch="$(mktemp -d -t redlockd-k8slock.XXXXXX)"
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
cd "$here"

# 1. Tidy, formatted, vetted (in the test build).
go mod tidy -diff >"$scratch/tidy.diff" ||
  { cat "$scratch/tidy.diff" >&2; say "go.mod/go.sum are not tidy: run go mod tidy in clients/go/k8slock and commit"; exit 1; }
unformatted="$(gofmt -l "$here")"
[ -z "$unformatted" ] || { say "not gofmt-formatted: $unformatted"; exit 1; }
# Its tests without the race detector: its shared state is the client's
# (tested with -race by ../test.sh) and what two mutexes guard; a race
# build compiles client-go and controller-runtime a second time (~200
# CPU-seconds cold, the most of any lane's preparation); its tests judge
# one leader at a time across processes, which -race could not see anyway. Unoptimised
# (-N -l): compiling client-go and controller-runtime so takes 150
# CPU-seconds instead of 190, and the tests' leader elections never notice.
unoptimised='all=-N -l'
go test -gcflags="$unoptimised" -vet=all -c -o "$scratch/k8slock.test" .
# 2. The README's three lines (its first ```go block), in a user's program.
three_lines() { awk '/^```go$/ { inside = 1; next } /^```$/ && inside { exit } inside' "$here/README.md"; }
[ "$(three_lines | wc -l)" -eq 3 ] || { say "README.md's setup is not three lines"; exit 1; }
{
  printf 'package main\n\nimport (\n\t"context"\n\t"fmt"\n\t"time"\n\n'
  printf '\tredlockd "github.com/redlockd/redlockd/clients/go"\n\t"github.com/redlockd/redlockd/clients/go/k8slock"\n'
  printf '\t"k8s.io/client-go/tools/leaderelection"\n)\n\nfunc main() {\n'
  printf '\tctx, cancel := context.WithTimeout(context.Background(), time.Minute)\n\tdefer cancel()\n'
  printf '\tpodName := "readme"\n\tvar callbacks leaderelection.LeaderCallbacks\n'
  three_lines | head -2
  printf '\tcallbacks = leaderelection.LeaderCallbacks{OnStoppedLeading: func() {}, OnStartedLeading: func(ctx context.Context) {\n'
  printf '\t\t_, term := lock.Leading(ctx)\n\t\tfmt.Println("term", term)\n\t\tcancel()\n\t}}\n'
  three_lines | tail -1
  printf '\tif held, err := lock.Release(context.Background()); !held {\n\t\tpanic(fmt.Sprint("not held to the end: ", err))\n\t}\n}\n'
} >"$scratch/leader.go"
GO_GCFLAGS="$unoptimised" bash "$here/user-module.sh" "$scratch/leader.go" "$scratch/leader" 2>"$scratch/k8slock-user-module.log" ||
  { cat "$scratch/k8slock-user-module.log" >&2; say "README.md's three lines did not build as a user's module"; exit 1; }
[ -z "${REDLOCKD_TEST_PREPARE:-}" ] || { say "prepared: the modules, the tests and the README's program"; exit 0; }
run() { "$root/scripts/with-dev-daemon" "$@"; }

# 3. Its tests on a daemon of their own, then its README's lines.
run "$scratch/k8slock.test" -test.v -test.count=1
run "$scratch/leader/leader" | tee "$scratch/leader.out"
grep -q '^term [0-9][0-9]*$' "$scratch/leader.out" || { say "README.md's three lines elected no leader"; exit 1; }
say "README.md's three lines led through redlockd (a user's module, go get with replaces)"
say "ok"
