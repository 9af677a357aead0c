#!/usr/bin/env bash
# Regenerates the redlockd.v1 stubs shipped in redlockdv1/ from ../../proto
# (users never run this: the module ships them). protoc is Debian's
# (protobuf-compiler, installed here when missing); its Go plugins are
# installed here with `go install` at pinned versions into a folder of their
# own, so the stubs are the same on every machine: protoc-gen-go at the
# google.golang.org/protobuf version go.mod requires (the runtime the stubs
# are built against), protoc-gen-go-grpc at PROTOC_GEN_GO_GRPC below.
# test.sh generates them into a scratch folder (the argument) and fails when
# the committed ones differ.
#
#   bash clients/go/gen.sh            # rewrites clients/go/redlockdv1/
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here}"
module="github.com/redlockd/redlockd/clients/go"
PROTOC_GEN_GO_GRPC=v1.6.2
bash "$here/ensure-go.sh"

if ! command -v protoc >/dev/null 2>&1 || [ ! -f /usr/include/google/protobuf/duration.proto ]; then
  echo "gen.sh: installing protoc (Debian's protobuf-compiler)" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq protobuf-compiler >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq protobuf-compiler >/dev/null; }
fi

# The plugins, once per pair of versions.
protobuf="$(cd "$here" && go list -m -f '{{.Version}}' google.golang.org/protobuf)"
bin="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/redlockd-go/protoc-gen-go-$protobuf-grpc-$PROTOC_GEN_GO_GRPC"
if [ ! -x "$bin/protoc-gen-go" ] || [ ! -x "$bin/protoc-gen-go-grpc" ]; then
  echo "gen.sh: installing protoc-gen-go $protobuf, protoc-gen-go-grpc $PROTOC_GEN_GO_GRPC into $bin" >&2
  (cd "$here" && GOBIN="$bin" go install google.golang.org/protobuf/cmd/protoc-gen-go)
  GOBIN="$bin" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"
fi

mkdir -p "$out"
protos=(redlockd/v1/lock.proto redlockd/v1/election.proto)
options=(--go_opt=module="$module" --go-grpc_opt=module="$module")
for proto in "${protos[@]}"; do
  options+=(--go_opt=M"$proto"="$module/redlockdv1" --go-grpc_opt=M"$proto"="$module/redlockdv1")
done
PATH="$bin:$PATH" protoc -I "$here/../../proto" -I /usr/include \
  --go_out="$out" --go-grpc_out="$out" "${options[@]}" "${protos[@]}"
echo "gen.sh: stubs written to $out/redlockdv1/ (protoc $(protoc --version | awk '{ print $2 }'))" >&2
