#!/usr/bin/env bash
# CI entry point for the Python example: makes examples/python/.venv (once),
# installs requirements.txt, generates the stubs, starts `redlockd dev` (five
# local redis-server masters) on a free loopback port, runs example.py against
# it and always stops the daemon. Exits with example.py's status.
#
#   bash examples/python/run.sh        (from anywhere)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
BIN="$ROOT/target/debug/redlockd"
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

# --- the daemon ---------------------------------------------------------------
WORK="$(mktemp -d -t redlockd-example-python.XXXXXX)"
DAEMON_PID=""
stop_daemon() {
  local status=$?
  if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
    # SIGTERM: the daemon releases its sessions and stops its redis-servers.
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    for _ in $(seq 1 150); do
      kill -0 "$DAEMON_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$DAEMON_PID" 2>/dev/null; then
      say "daemon $DAEMON_PID ignored SIGTERM for 15s; killing it and its redis-servers"
      local children
      children="$(pgrep -P "$DAEMON_PID" || true)"
      kill -KILL "$DAEMON_PID" $children 2>/dev/null || true
    fi
    wait "$DAEMON_PID" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -s "$WORK/redlockd.log" ]; then
    say "daemon log (last 40 lines):"
    tail -n 40 "$WORK/redlockd.log" >&2
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap stop_daemon EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The debug binary may be missing (a fresh clone) or being relinked by a
# concurrent `cargo build`: wait a little, then build it (cargo waits for
# any build in progress).
ensure_binary() {
  for _ in $(seq 1 10); do
    [ -x "$BIN" ] && return 0
    sleep 1
  done
  say "no $BIN: cargo build --bin redlockd"
  cargo build --bin redlockd
}

# Starts the daemon and waits (60s at most) until its port accepts
# connections. Fails when the daemon exits first (a busy binary, a port taken
# in the meantime): the caller tries again.
start_daemon() {
  PORT="$(free_port)"
  ensure_binary || return 1
  REDLOCKD__SERVER__LISTEN="127.0.0.1:$PORT" REDLOCKD__METRICS__LISTEN="127.0.0.1:0" \
    "$BIN" dev >"$WORK/redlockd.log" 2>&1 &
  DAEMON_PID=$!
  local deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
      wait "$DAEMON_PID" 2>/dev/null || true
      DAEMON_PID=""
      say "the daemon exited before serving:"
      tail -n 20 "$WORK/redlockd.log" >&2
      return 1
    fi
    accepts "$PORT" && return 0
    sleep 0.2
  done
  say "the daemon did not accept connections on 127.0.0.1:$PORT within 60s"
  return 1
}

started=""
for attempt in 1 2 3 4 5; do
  if start_daemon; then
    started=1
    break
  fi
  [ -n "$DAEMON_PID" ] && break # running but not listening: give up
  say "retrying ($attempt/5)"
  sleep 2
done
if [ -z "$started" ]; then
  say "could not start the daemon"
  exit 1
fi
say "redlockd dev (pid $DAEMON_PID) serving on 127.0.0.1:$PORT"

# --- the example --------------------------------------------------------------
set +e
timeout 180 "$PY" "$HERE/example.py" "127.0.0.1:$PORT"
status=$?
set -e
if [ "$status" -eq 0 ]; then
  say "example passed"
else
  say "example FAILED (exit $status)"
fi
exit "$status"
