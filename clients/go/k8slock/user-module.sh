#!/usr/bin/env bash
# Builds a user's main.go the way README.md says a user depends on k8slock:
# a fresh module of its own (OUT, outside the repository) that `go get`s
# github.com/redlockd/redlockd/clients/go/k8slock@v0.0.0 with `replace`s
# pointing both it and the client at this checkout; client-go and the rest
# come from the Go module proxy at the versions k8slock's go.mod needs.
#
#   bash clients/go/k8slock/user-module.sh path/to/main.go OUT   # writes OUT/leader
#
# GO_GCFLAGS, when set, is passed to go build as -gcflags (test.sh builds
# as its test build does, so that client-go is compiled once).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
client="$(cd "$here/.." && pwd)" # a clean path: with client/.. the go command finds k8slock in both modules
main="$1" out="$2"
mkdir -p "$out"
cp "$main" "$out/main.go"
cd "$out"
go mod init example.com/leader
go mod edit -replace "github.com/redlockd/redlockd/clients/go=$client" \
  -replace "github.com/redlockd/redlockd/clients/go/k8slock=$here"
go get github.com/redlockd/redlockd/clients/go/k8slock@v0.0.0
go mod tidy
go build ${GO_GCFLAGS:+-gcflags="$GO_GCFLAGS"} -o "$out/leader" .
