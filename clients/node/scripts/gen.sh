#!/usr/bin/env bash
# Regenerates src/gen/ (committed) from the repository's proto/ and this
# package's proto/google/rpc/status.proto, offline: protoc from pip's
# grpcio-tools (npm's grpc-tools downloads protoc at install time) and the
# ts-proto plugin from node_modules. Users never run this; test.sh runs it
# into a temporary folder and fails when src/gen/ differs.
#
#   bash clients/node/scripts/gen.sh [out-dir]     (default: src/gen)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/src/gen}"
# Outside the repository: its files are not the project's.
venv="${XDG_CACHE_HOME:-$HOME/.cache}/redlockd-node-gen-venv"
if ! "$venv/bin/python" -c 'import grpc_tools' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'grpcio-tools==1.85.1'
fi
[ -x "$here/node_modules/.bin/protoc-gen-ts_proto" ] ||
  (cd "$here" && npm install --no-audit --no-fund --loglevel=error)
rm -rf "$out"
mkdir -p "$out"
# forceLong=bigint: fencing tokens stay exact above 2^53.
# useDate=false, useOptionals=messages: durations stay {seconds, nanos} and
# unset messages stay undefined (an unset ttl means the daemon's default).
"$venv/bin/python" -m grpc_tools.protoc \
  --plugin=protoc-gen-ts_proto="$here/node_modules/.bin/protoc-gen-ts_proto" \
  --ts_proto_out="$out" \
  --ts_proto_opt=outputServices=grpc-js,forceLong=bigint,esModuleInterop=true,useOptionals=messages,useDate=false,env=node,oneof=unions-value,outputJsonMethods=false,outputPartialMethods=false,exportCommonSymbols=false \
  -I "$root/proto" -I "$here/proto" \
  redlockd/v1/lock.proto redlockd/v1/election.proto google/rpc/status.proto
# The protos' google.api.http annotations (docs/http.md#grpc-gateway-and-envoy)
# make ts-proto emit google/api/ and google/protobuf/descriptor.ts, which no
# generated file imports (options are not fields): not shipped.
rm -rf "$out/google/api" "$out/google/protobuf/descriptor.ts"
