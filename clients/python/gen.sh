#!/usr/bin/env bash
# Regenerates the redlockd.v1 stubs shipped in src/redlockd/v1/ from
# ../../proto (users never run this: the package ships them). Needs
# grpcio-tools in the Python that runs it ($PYTHON, default .venv/bin/python);
# the generated code requires grpcio >= the grpcio-tools version used here,
# which pyproject.toml states.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-.venv/bin/python}"
WELL_KNOWN="$("$PYTHON" -c 'import os, grpc_tools; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
rm -f src/redlockd/v1/lock_pb2*.py src/redlockd/v1/lock_pb2*.pyi
"$PYTHON" -m grpc_tools.protoc -I ../../proto -I "$WELL_KNOWN" \
  --python_out=src --pyi_out=src --grpc_python_out=src redlockd/v1/lock.proto
echo "gen.sh: stubs written to src/redlockd/v1/"
