#!/usr/bin/env bash
# Runs example.py on the Python client (clients/python, installed into its
# .venv by its test.sh or here) against a throwaway daemon, plain and then
# with mutual TLS and a bearer token.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/clients/python/.venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import redlockd' 2>/dev/null || "$venv/bin/pip" install -q -e "$root/clients/python"
"$root/scripts/with-dev-daemon" "$venv/bin/python" "$here/example.py"
exec "$root/scripts/with-dev-daemon" --secure "$venv/bin/python" "$here/example.py"
