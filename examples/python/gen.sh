#!/usr/bin/env bash
# Generates the Python stubs for redlockd.v1 from ../../proto into ./gen/
# (gen/redlockd/v1/lock_pb2.py, lock_pb2_grpc.py, lock_pb2.pyi).
#
# Needs grpcio-tools (requirements.txt) in the Python that runs it:
# $PYTHON if set, else python3 (run.sh passes its venv's python).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"

# google/protobuf/duration.proto ships inside grpc_tools.
WELL_KNOWN="$("$PYTHON" -c 'import os, grpc_tools; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"

rm -rf gen
mkdir -p gen
"$PYTHON" -m grpc_tools.protoc \
  -I ../../proto \
  -I "$WELL_KNOWN" \
  --python_out=gen \
  --pyi_out=gen \
  --grpc_python_out=gen \
  redlockd/v1/lock.proto
echo "gen.sh: stubs written to examples/python/gen/redlockd/v1/"
