#!/usr/bin/env bash
# Regenerates the redlockd.v1 stubs shipped in redlockdv1/ from ../../proto
# with Debian's protoc, protoc-gen-go and protoc-gen-go-grpc (users never
# run this: the package ships them). test.sh generates them into a
# scratch folder (the argument) and fails when the committed ones differ.
#
#   bash clients/go/gen.sh            # rewrites clients/go/redlockdv1/
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here}"
module="github.com/redlockd/redlockd/clients/go"
mkdir -p "$out"
protoc -I "$here/../../proto" -I /usr/include \
  --go_out="$out" --go_opt=module="$module" --go_opt=Mredlockd/v1/lock.proto="$module/redlockdv1" \
  --go-grpc_out="$out" --go-grpc_opt=module="$module" --go-grpc_opt=Mredlockd/v1/lock.proto="$module/redlockdv1" \
  redlockd/v1/lock.proto
echo "gen.sh: stubs written to $out/redlockdv1/" >&2
