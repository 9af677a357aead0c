#!/usr/bin/env bash
# Regenerates the redlockd.v1 stubs shipped in src/redlockd/v1/ from
# ../../proto, with grpcio-tools (users never run this: the package ships
# them). Run it after proto/ changes and commit the result; test.sh fails
# while they differ.
#
#   bash clients/python/gen.sh
#
# PYTHON: the Python with grpcio-tools (default .venv/bin/python, where
# test.sh installs the pinned version of pyproject.toml's "test" extra; the
# generated code needs grpcio >= that version, which pyproject.toml says).
# OUT: where to write (default src; test.sh writes elsewhere to compare).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-.venv/bin/python}"
OUT="${OUT:-src}"
WELL_KNOWN="$("$PYTHON" -c 'import os, grpc_tools; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
mkdir -p "$OUT"
rm -f "$OUT"/redlockd/v1/*_pb2*.py "$OUT"/redlockd/v1/*_pb2*.pyi
"$PYTHON" -m grpc_tools.protoc -I ../../proto -I "$WELL_KNOWN" \
  --python_out="$OUT" --pyi_out="$OUT" --grpc_python_out="$OUT" redlockd/v1/lock.proto redlockd/v1/election.proto
echo "gen.sh: stubs written to $OUT/redlockd/v1/"
