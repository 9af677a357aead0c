#!/usr/bin/env bash
# The Go client's tests against a real daemon and five real masters
# (scripts/with-dev-daemon), built offline from Debian's packages: golang-go
# 1.19, grpc-go, google.golang.org/protobuf, genproto and golang/protobuf
# 1.5 (installed here when missing) in GOPATH mode, with this folder linked
# into a throwaway GOPATH. Runs TestClient*, then TestKillsMasters* (a
# daemon of its own) and TestSecure* (the --secure daemon), then builds and
# runs a five-line program that depends on the package the same way.
#
#   bash clients/go/test.sh        (from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { echo "clients/go/test.sh: $*" >&2; }
command -v redis-cli >/dev/null || "$root/scripts/ensure-deps"

packages=(golang-go golang-google-grpc-dev golang-google-protobuf-dev golang-google-genproto-dev golang-github-golang-protobuf-1-5-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi

gopath="$(mktemp -d -t redlockd-go.XXXXXX)"
trap 'rm -rf "$gopath"' EXIT
module="github.com/redlockd/redlockd/clients/go"
mkdir -p "$gopath/src/$(dirname "$module")"
ln -s "$here" "$gopath/src/$module"
export GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOFLAGS= GOCACHE="$gopath/cache"

cd "$gopath/src/$module"
unformatted="$(gofmt -l "$here"/*.go)"
[ -z "$unformatted" ] || { say "not gofmt-formatted: $unformatted"; exit 1; }
go vet ./...
go test -c -o "$gopath/redlockd.test" .
"$root/scripts/with-dev-daemon" "$gopath/redlockd.test" -test.run '^TestClient' -test.v
"$root/scripts/with-dev-daemon" "$gopath/redlockd.test" -test.run '^TestKillsMasters' -test.v
"$root/scripts/with-dev-daemon" --secure "$gopath/redlockd.test" -test.run '^TestSecure' -test.v

# A user depends on it the same way (or with a `replace` in go.mod) and
# takes a lock in five lines.
mkdir -p "$gopath/src/fivelines"
cat >"$gopath/src/fivelines/main.go" <<'GO'
package main

import (
	"context"
	"fmt"

	redlockd "github.com/redlockd/redlockd/clients/go"
)

func main() {
	ctx := context.Background()
	c, _ := redlockd.Dial(ctx, "")
	l, err := c.Hold(ctx, "examples/five-lines")
	if err != nil {
		panic(err)
	}
	fmt.Println("fencing token", l.FencingToken())
	l.Release(ctx)
}
GO
(cd "$gopath/src/fivelines" && go build -o "$gopath/fivelines" .)
"$root/scripts/with-dev-daemon" "$gopath/fivelines" | grep -q "fencing token"
say "ok"
