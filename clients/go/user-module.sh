#!/usr/bin/env bash
# Builds a user's main.go the way the README says a user depends on this
# client: a fresh module of its own (OUT, outside the repository) that
# `go get`s github.com/redlockd/redlockd/clients/go@v0.0.0 with a `replace`
# pointing at this checkout; its other modules (grpc, protobuf, genproto)
# come from the Go module proxy at the versions this client's go.mod needs.
#
#   bash clients/go/user-module.sh path/to/main.go OUT   # writes OUT/firstlock
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
main="$1" out="$2"
module="github.com/redlockd/redlockd/clients/go"
mkdir -p "$out"
cp "$main" "$out/main.go"
cd "$out"
go mod init example.com/firstlock
go mod edit -replace "$module=$here"
go get "$module@v0.0.0" # any version: the replace gives this checkout for every one
go mod tidy
go build -o "$out/firstlock" .
