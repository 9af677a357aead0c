#!/usr/bin/env bash
# Regenerates the redlockd.v1 stubs shipped in redlockdv1/ from ../../proto
# with Debian's protoc, protoc-gen-go and protoc-gen-go-grpc (users never
# run this: the package ships them).
set -euo pipefail
cd "$(dirname "$0")"
module="github.com/redlockd/redlockd/clients/go"
protoc -I ../../proto -I /usr/include \
  --go_out=. --go_opt=module="$module" --go_opt=Mredlockd/v1/lock.proto="$module/redlockdv1" \
  --go-grpc_out=. --go-grpc_opt=module="$module" --go-grpc_opt=Mredlockd/v1/lock.proto="$module/redlockdv1" \
  redlockd/v1/lock.proto
echo "gen.sh: stubs written to redlockdv1/"
