#!/usr/bin/env bash
# Checks that the machine's Go (the `go` on PATH) can build the client: at
# least the version go.mod's `go` line names (the current grpc-go wants it).
# Installs nothing: Go comes from https://go.dev/dl or the machine's image.
# The modules come from the Go module proxy into the default module cache
# (`go env GOMODCACHE`). Used by test.sh, gen.sh and examples/go/run.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
say() { echo "clients/go/ensure-go.sh: $*" >&2; }
want="$(awk '$1 == "go" { print $2; exit }' "$here/go.mod")"
command -v go >/dev/null 2>&1 ||
  { say "no \`go\` on PATH: install Go $want or later (https://go.dev/dl) and put its bin/ on PATH"; exit 1; }
have="$(go env GOVERSION)" # go1.26.8, or go1.27rc1, devel ...
have="${have#go}"
# At least $want, compared number by number (1.26.0 against 1.26.8).
older() {
  local IFS=.
  local -a a=($1) b=($2)
  for i in 0 1 2; do
    local x="${a[i]:-0}" y="${b[i]:-0}"
    x="${x%%[!0-9]*}" y="${y%%[!0-9]*}"
    [ "${x:-0}" -lt "${y:-0}" ] && return 0
    [ "${x:-0}" -gt "${y:-0}" ] && return 1
  done
  return 1
}
if older "$have" "$want"; then
  say "$(command -v go) is Go $have; the client needs Go $want or later (go.mod's go line): install a newer Go (https://go.dev/dl)"
  exit 1
fi
