#!/usr/bin/env bash
# The Python client's tests, against real daemons and five real masters
# each (scripts/with-dev-daemon; REDLOCKD_BIN names the daemon binary, else
# target/debug/redlockd):
#   1. the shipped stubs are what gen.sh makes from proto/;
#   2. the plain suite (blocking and asyncio clients);
#   3. each test that kills three masters or freezes the daemon (SIGSTOP),
#      on a daemon of its own (killed masters stay dead for the rest of that
#      daemon's life);
#   4. mutual TLS + bearer token, on the --secure daemon;
#   5. the conformance scenarios (clients/conformance/README.md), through
#      the blocking and the asyncio client, a line per scenario; each one
#      that kills masters once per client, on a daemon of its own;
#   6. the packages a registry would get: `python -m build` makes an sdist
#      and, from it, a wheel; the wheel goes into a fresh venv, which runs
#      the README's first lock (its first ```python block, as written)
#      against a daemon; the sdist into another, which imports it (and says
#      what redlockd.celery needs without the extra);
#   7. the schedulers, on a daemon of its own whose server.keepalive is 1 s
#      (a frozen beat is noticed in ~2 s), and a local redis-server:
#      redlockd.celery (the `celery` extra) with a real Celery worker and
#      real `celery beat` processes; redlockd.apscheduler (the `apscheduler`
#      extra) with real APScheduler processes.
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
  "$venv/bin/pip" install --disable-pip-version-check -q -e "$here[test,celery,apscheduler]"
  touch "$stamp"
fi
py="$venv/bin/python"
[ -z "${REDLOCKD_TEST_PREPARE:-}" ] || { say "prepared: the virtualenv"; exit 0; }

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
alone="kills_masters or freezes_daemon"
"$root/scripts/with-dev-daemon" "${pytest[@]}" -m "not ($alone) and not secure and not schedulers" .
# (Collecting needs no daemon, but conftest.py wants an address.)
# Node ids come relative to clients/python; the tests run from tests/.
mapfile -t tests < <(REDLOCKD_ADDR=unused "${pytest[@]}" --collect-only -m "$alone" . | grep '::' | sed 's#^tests/##')
[ "${#tests[@]}" -ge 6 ] || { say "found ${#tests[@]} tests that kill masters or freeze the daemon, not 6"; exit 1; }
for test in "${tests[@]}"; do
  say "3. ${test#*::}, on a daemon of its own"
  "$root/scripts/with-dev-daemon" "${pytest[@]}" "$test"
done
say "4. mutual TLS and a bearer token"
"$root/scripts/with-dev-daemon" --secure "${pytest[@]}" -m secure .

say "5. the conformance scenarios"
"$root/scripts/with-dev-daemon" "$py" -m conformance
for id in $("$py" -m conformance --own-daemon-ids); do
  for driver in sync async; do
    say "5. $id ($driver), on a daemon of its own"
    "$root/scripts/with-dev-daemon" "$py" -m conformance --client "$driver" --only "$id"
  done
done

say "6. python -m build; the wheel and the sdist, each in a fresh venv"
# setuptools' build/lib and the egg-info's SOURCES.txt (which the sdist's
# file list starts from) keep deleted modules: never ship them.
rm -rf "$here/build" "$here/src/redlockd.egg-info"
# The sdist first, then the wheel built from it (a file the sdist lacks fails
# here), each in an isolated environment with the setuptools pyproject.toml asks for.
"$py" -m build --outdir "$fresh/dist" "$here" >"$fresh/build.log" 2>&1 || { cat "$fresh/build.log" >&2; exit 1; }
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)"
wheel="$fresh/dist/redlockd-$version-py3-none-any.whl" sdist="$fresh/dist/redlockd-$version.tar.gz"
[ -f "$wheel" ] && [ -f "$sdist" ] || { say "no wheel and sdist of version $version (the daemon's): $(ls "$fresh/dist")"; exit 1; }
# What the package needs at run time, and no tests.
listing="$("$py" -m zipfile -l "$wheel")"
for file in redlockd/__init__.py redlockd/py.typed redlockd/v1/lock_pb2.py redlockd/v1/lock_pb2.pyi redlockd/v1/lock_pb2_grpc.py \
  redlockd/v1/election_pb2.py redlockd/v1/election_pb2.pyi redlockd/v1/election_pb2_grpc.py \
  redlockd/celery.py redlockd/apscheduler.py redlockd/_fenced_redis.py redlockd/_leading.py; do
  grep -q " *$file " <<<"$listing" || { say "the wheel lacks $file"; exit 1; }
done
! grep -q "tests/\|conftest" <<<"$listing" || { say "the wheel ships the tests"; exit 1; }
pip_quiet=(--disable-pip-version-check -q)
make_venv "$fresh/wheel"
"$fresh/wheel/bin/pip" install "${pip_quiet[@]}" "$wheel"
make_venv "$fresh/sdist"
"$fresh/sdist/bin/pip" install "${pip_quiet[@]}" "$sdist"
(cd "$fresh" && "$fresh/sdist/bin/python" -c '
import sys, redlockd, redlockd.v1.lock_pb2_grpc, redlockd.v1.election_pb2_grpc
assert redlockd.__file__.startswith(sys.prefix), f"imported {redlockd.__file__}, not the installed sdist"
print("the sdist imports:", redlockd.__version__, redlockd.__file__)
import importlib
for extra in ("celery", "apscheduler"):
    try:
        importlib.import_module("redlockd." + extra)
    except ImportError as e:
        assert f"pip install \x27redlockd[{extra}]\x27" in str(e), e
    else:
        raise AssertionError(f"redlockd.{extra} imported without its extra installed")') >&2
awk '/^```python$/ { inside = 1; next } /^```$/ && inside { exit } inside' "$here/README.md" >"$fresh/first_lock.py"
[ "$(grep -c . "$fresh/first_lock.py")" -le 5 ] || { say "the README's first lock is over five lines"; exit 1; }
cd "$fresh"
"$root/scripts/with-dev-daemon" "$fresh/wheel/bin/python" first_lock.py | tee "$fresh/out" >&2
grep -Eq '^fencing token [0-9]+$' "$fresh/out"

say "7. redlockd.celery and redlockd.apscheduler: once per period, on a daemon of its own"
cd "$here/tests"
REDLOCKD__SERVER__KEEPALIVE=1s "$root/scripts/with-dev-daemon" "${pytest[@]}" -s -m schedulers test_celery_beat.py test_apscheduler.py
say "ok"
