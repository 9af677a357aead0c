#!/usr/bin/env bash
# CI entry point for the Node.js example: installs its npm dependencies,
# starts `redlockd dev` (five local redis-server masters) on a free port,
# runs example.js against it and always stops the daemon. Exits with the
# example's status.
#
#   bash examples/node/run.sh        (from anywhere; uses target/debug/redlockd)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$root/target/debug/redlockd"
start_timeout=60

cd "$here"
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi

workdir="$(mktemp -d "${TMPDIR:-/tmp}/redlockd-node-example.XXXXXX")"
daemon_log="$workdir/redlockd.log"
daemon_pid=""

stop_daemon() {
  if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    # SIGTERM: the daemon releases its sessions and stops its redis-servers.
    kill -TERM "$daemon_pid" 2>/dev/null || true
    for _ in $(seq 1 150); do
      kill -0 "$daemon_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$daemon_pid" 2>/dev/null; then
      echo "run.sh: redlockd did not stop within 15s; killing it" >&2
      kill -KILL "$daemon_pid" 2>/dev/null || true
    fi
    wait "$daemon_pid" 2>/dev/null || true
  fi
  daemon_pid=""
}

cleanup() {
  local status=$?
  stop_daemon
  rm -rf "$workdir"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Starts the daemon; returns non-zero when it died before its port opened
# (binary being rebuilt, port taken meanwhile) or did not open it in time.
start_daemon() {
  if [ ! -x "$bin" ]; then
    echo "run.sh: $bin missing: building it" >&2
    (cd "$root" && cargo build --bin redlockd)
  fi
  port="$(free_port)"
  (
    cd "$root"
    REDLOCKD__SERVER__LISTEN="127.0.0.1:$port" \
    REDLOCKD__METRICS__LISTEN="127.0.0.1:0" NO_COLOR=1 \
    exec "$bin" dev
  ) >"$daemon_log" 2>&1 &
  daemon_pid=$!
  local deadline=$((SECONDS + start_timeout))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
      wait "$daemon_pid" 2>/dev/null || true
      daemon_pid=""
      echo "run.sh: redlockd exited before listening:" >&2
      tail -n 20 "$daemon_log" >&2
      return 1
    fi
    if port_open "$port"; then
      return 0
    fi
    sleep 0.1
  done
  echo "run.sh: redlockd did not listen on 127.0.0.1:$port within ${start_timeout}s:" >&2
  tail -n 20 "$daemon_log" >&2
  stop_daemon
  return 1
}

started=""
for attempt in 1 2 3; do
  if start_daemon; then
    started=yes
    break
  fi
  echo "run.sh: retrying the daemon's start ($attempt/3)" >&2
  sleep 2
done
[ -n "$started" ] || { echo "run.sh: could not start redlockd" >&2; exit 1; }
echo "run.sh: redlockd dev listening on 127.0.0.1:$port (pid $daemon_pid)"

status=0
node example.js "127.0.0.1:$port" || status=$?
if [ "$status" -ne 0 ]; then
  echo "run.sh: example.js failed with status $status; daemon log:" >&2
  tail -n 40 "$daemon_log" >&2
fi
exit "$status"
