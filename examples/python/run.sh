#!/usr/bin/env bash
# Runs example.py on the Python client (clients/python, installed into its
# .venv when missing) against a throwaway daemon, plain and then with mutual
# TLS and a bearer token (scripts/with-dev-daemon --secure).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/clients/python/.venv"
if ! [ -x "$venv/bin/python" ] && ! python3 -m venv "$venv" 2>/dev/null; then
  rm -rf "$venv"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get install -y -qq python3-venv >/dev/null ||
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv >/dev/null; }
  python3 -m venv "$venv"
fi
"$venv/bin/python" -c 'import redlockd' 2>/dev/null ||
  "$venv/bin/pip" install --disable-pip-version-check -q -e "$root/clients/python"
"$root/scripts/with-dev-daemon" "$venv/bin/python" "$here/example.py"
exec "$root/scripts/with-dev-daemon" --secure "$venv/bin/python" "$here/example.py"
