#!/usr/bin/env bash
# Runs locked.sh (a command under a lock, with curl alone) against a
# throwaway daemon, plain and then with mutual TLS and a bearer token
# (scripts/with-dev-daemon --secure): the command gets its fencing token,
# a second run waiting 0s is refused while the first holds, the lock is free
# the moment the first ends, and a command whose lock is lost (three masters
# paused) gets SIGTERM while locked.sh exits 3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v curl >/dev/null || apt-get install -y -qq curl >/dev/null ||
  { apt-get update -qq && apt-get install -y -qq curl >/dev/null; }

if [ "${1:-}" != "--against-daemon" ]; then
  "$root/scripts/with-dev-daemon" "$0" --against-daemon
  exec "$root/scripts/with-dev-daemon" --secure "$0" --against-daemon
fi

# With --secure, the daemon wants TLS and a token, and the tenant may lock
# only under examples/.
if [ -n "${REDLOCKD_TOKEN:-}" ]; then
  export REDLOCKD_URL="https://$REDLOCKD_ADDR"
  curl_args=(--cacert "$REDLOCKD_CA" --cert "$REDLOCKD_CERT" --key "$REDLOCKD_KEY"
    --header "authorization: Bearer $REDLOCKD_TOKEN")
else
  export REDLOCKD_URL="http://$REDLOCKD_ADDR"
  curl_args=()
fi
api() { curl --silent --show-error "${curl_args[@]}" --header 'content-type: application/json' "$@"; }
locked="$here/locked.sh"
tmp="$(mktemp -d -t shell-example.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "examples/shell: $*" >&2
  exit 1
}
held() { api "$REDLOCKD_URL/v1/locks/$1" | grep -q '"held":true'; }
until_held() {
  for _ in $(seq 1 100); do
    held "$1" && return 0
    sleep 0.1
  done
  fail "$1 was never held"
}

# 1. The command runs under the lock and gets its fencing token.
"$locked" examples/shell/report -- sh -c 'echo "$REDLOCKD_FENCING_TOKEN $REDLOCKD_RESOURCE" >"$0"' "$tmp/got"
read -r token resource <"$tmp/got"
[[ "$token" =~ ^[0-9]+$ ]] || fail "no fencing token: '$token'"
[ "$resource" = examples/shell/report ] || fail "REDLOCKD_RESOURCE is '$resource'"
echo "ran under examples/shell/report with fencing token $token"

# 2. While one run holds the lock, another that does not wait is refused
# (exit 1); once the first ends, the lock is free at once.
"$locked" --ttl 2s examples/shell/nightly -- sleep 3 &
first=$!
until_held examples/shell/nightly
status=0
"$locked" --wait 0s examples/shell/nightly -- true 2>"$tmp/refused" || status=$?
[ "$status" -eq 1 ] || fail "a second run exited $status, not 1: $(cat "$tmp/refused")"
wait "$first" || fail "the first run failed"
api --request POST --data '{"ttl":"5s"}' "$REDLOCKD_URL/v1/locks/examples/shell/nightly:acquire" >"$tmp/acquired"
grep -q '"acquired":true' "$tmp/acquired" || fail "still held after the run ended: $(cat "$tmp/acquired")"
value="$(sed -n 's/.*"value":"\([0-9a-f]*\)".*/\1/p' "$tmp/acquired")"
api --request POST --data "{\"value\":\"$value\"}" "$REDLOCKD_URL/v1/locks/examples/shell/nightly:release" |
  grep -q '"released":true' || fail "the release by curl failed"
echo "a second run was refused while the first held; the lock was free when it ended"

# 3. Three masters paused: the lock is lost, the command gets SIGTERM and
# locked.sh exits 3 (well before the command's own 30 s).
victim='sleep 30 & trap "kill $!; echo terminated >$0; exit 143" TERM; wait'
"$locked" --ttl 1s examples/shell/paused -- sh -c "$victim" "$tmp/term" &
run=$!
until_held examples/shell/paused
read -r -a masters <<<"$REDLOCKD_DEV_MASTER_PIDS"
kill -STOP "${masters[@]:0:3}"
started=$SECONDS
status=0
wait "$run" || status=$?
kill -CONT "${masters[@]:0:3}"
[ "$status" -eq 3 ] || fail "locked.sh exited $status after the lock was lost, not 3"
[ "$(cat "$tmp/term" 2>/dev/null)" = terminated ] || fail "the command was not sent SIGTERM"
[ $((SECONDS - started)) -lt 10 ] || fail "the loss took $((SECONDS - started)) s to reach the command"
echo "lost when three masters paused: the command got SIGTERM, locked.sh exited 3"
