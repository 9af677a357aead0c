#!/usr/bin/env bash
# CI entry point for the Python example: makes examples/python/.venv (once),
# installs requirements.txt, generates the stubs, then runs example.py
# against a throwaway `redlockd dev` (scripts/with-dev-daemon), twice: plain,
# then with mutual TLS and a bearer token. Fails if either run fails.
#
#   bash examples/python/run.sh        (from anywhere)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
cd "$ROOT"

say() { echo "run.sh: $*" >&2; }

# --- Python environment -----------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV"; then
    say "python3 -m venv failed; installing python3-venv"
    rm -rf "$VENV"
    apt-get install -y python3-venv || { apt-get update && apt-get install -y python3-venv; }
    python3 -m venv "$VENV"
  fi
fi
PY="$VENV/bin/python"
# Install only when requirements.txt changed since the last install.
STAMP="$VENV/.requirements.txt"
if ! cmp -s "$HERE/requirements.txt" "$STAMP"; then
  "$PY" -m pip install --disable-pip-version-check -q -r "$HERE/requirements.txt"
  cp "$HERE/requirements.txt" "$STAMP"
fi
PYTHON="$PY" bash "$HERE/gen.sh"

# --- the daemon and the example ----------------------------------------------
# Once against a plain loopback sidecar, once with mutual TLS and a token.
"$ROOT/scripts/with-dev-daemon" "$PY" "$HERE/example.py"
exec "$ROOT/scripts/with-dev-daemon" --secure "$PY" "$HERE/example.py"
