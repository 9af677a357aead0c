#!/usr/bin/env bash
# The Python client's tests, against real daemons and five real masters
# each (scripts/with-dev-daemon; REDLOCKD_BIN names the daemon binary, else
# target/debug/redlockd):
#   1. the shipped stubs are what gen.sh makes from proto/;
#   2. the plain suite (blocking and asyncio clients);
#   3. each test that kills three masters, on a daemon of its own (killed
#      masters stay dead for the rest of that daemon's life);
#   4. mutual TLS + bearer token, on the --secure daemon;
#   5. `pip install ./clients/python` into a fresh venv, then the README's
#      first lock (its first ```python block, as written) against a daemon.
# Installs what it needs (python3-venv, redis-server; pip packages into
# clients/python/.venv), only when missing.
#
#   bash clients/python/test.sh        (from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$here/.venv"
say() { echo "clients/python/test.sh: $*" >&2; }

make_venv() {
  if ! python3 -m venv "$1" 2>/dev/null; then
    say "python3 -m venv failed; installing python3-venv"
    rm -rf "$1"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y -qq python3-venv >/dev/null ||
      { $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv >/dev/null; }
    python3 -m venv "$1"
  fi
}
command -v redis-cli >/dev/null || "$root/scripts/ensure-deps"
[ -x "$venv/bin/python" ] || make_venv "$venv"
stamp="$venv/.installed"
if ! [ -f "$stamp" ] || [ "$here/pyproject.toml" -nt "$stamp" ]; then
  "$venv/bin/pip" install --disable-pip-version-check -q -e "$here[test]"
  touch "$stamp"
fi
py="$venv/bin/python"

say "1. the shipped stubs match proto/"
fresh_stubs="$(mktemp -d -t redlockd-py-stubs.XXXXXX)"
fresh="$(mktemp -d -t redlockd-py.XXXXXX)"
trap 'rm -rf "$fresh_stubs" "$fresh" "$here/build"' EXIT
PYTHON="$py" OUT="$fresh_stubs" bash "$here/gen.sh" >/dev/null
if ! diff -r "$fresh_stubs/redlockd/v1" "$here/src/redlockd/v1" -x __init__.py -x __pycache__; then
  say "src/redlockd/v1 is stale: run clients/python/gen.sh and commit"
  exit 1
fi

pytest=("$py" -m pytest -q -p no:cacheprovider)
cd "$here/tests"
say "2. the plain suite"
"$root/scripts/with-dev-daemon" "${pytest[@]}" -m "not kills_masters and not secure" .
for which in blocking async; do
  say "3. three masters killed ($which), on a daemon of its own"
  "$root/scripts/with-dev-daemon" "${pytest[@]}" -m kills_masters -k "$which" .
done
say "4. mutual TLS and a bearer token"
"$root/scripts/with-dev-daemon" --secure "${pytest[@]}" -m secure .

say "5. pip install ./clients/python into a fresh venv; the README's first lock"
make_venv "$fresh/venv"
rm -rf "$here/build" # setuptools' build/lib keeps deleted modules; never ship them
"$fresh/venv/bin/pip" install --disable-pip-version-check -q "$here"
awk '/^```python$/ { inside = 1; next } /^```$/ && inside { exit } inside' "$here/README.md" >"$fresh/first_lock.py"
[ "$(grep -c . "$fresh/first_lock.py")" -le 5 ] || { say "the README's first lock is over five lines"; exit 1; }
cd "$fresh"
"$root/scripts/with-dev-daemon" "$fresh/venv/bin/python" first_lock.py | tee "$fresh/out" >&2
grep -Eq '^fencing token [0-9]+$' "$fresh/out"
say "ok"
