#!/usr/bin/env bash
# Builds main.go on the Go client offline (Debian's Go packages, GOPATH
# mode, as clients/go/test.sh does) and runs it against a throwaway
# daemon, plain and then with mutual TLS and a bearer token.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$root/clients/go/ensure-go.sh"
gopath="$(mktemp -d -t redlockd-go-example.XXXXXX)"
trap 'rm -rf "$gopath"' EXIT
module="github.com/redlockd/redlockd/clients/go"
mkdir -p "$gopath/src/$(dirname "$module")" "$gopath/src/example"
ln -s "$root/clients/go" "$gopath/src/$module"
cp "$here/main.go" "$gopath/src/example/"
(cd "$gopath/src/example" && GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOFLAGS= \
  GOCACHE="${GOCACHE:-${HOME:-/tmp}/.cache/redlockd-go-build}" go build -o "$gopath/example" .)
"$root/scripts/with-dev-daemon" "$gopath/example"
"$root/scripts/with-dev-daemon" --secure "$gopath/example"
