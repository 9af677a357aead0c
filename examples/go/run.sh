#!/usr/bin/env bash
# Builds main.go, a module of its own (go.mod: the client through a
# `replace` to ../../clients/go, the rest from the Go module proxy), with the
# machine's Go and runs it against a throwaway daemon, plain and then with
# mutual TLS and a bearer token.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$root/clients/go/ensure-go.sh"
scratch="$(mktemp -d -t redlockd-go-example.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
(cd "$here" && go build -o "$scratch/example" .)
"$root/scripts/with-dev-daemon" "$scratch/example"
"$root/scripts/with-dev-daemon" --secure "$scratch/example"
