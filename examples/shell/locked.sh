#!/usr/bin/env bash
# Runs a command while holding a redlockd lock, with curl alone: the lock is
# held through an NDJSON `:hold` stream (docs/http.md#streams) that the
# daemon keeps extending, and released when curl closes it.
#
#   locked.sh [--ttl 10s] [--wait 30s] RESOURCE -- COMMAND [ARG...]
#
# The command gets REDLOCKD_FENCING_TOKEN (pass it on to whatever you write
# to, which refuses a smaller one) and REDLOCKD_RESOURCE. If the lock is lost
# (LOST, or the stream ends) the command gets SIGTERM and this exits 3.
# Exit codes: the command's own; 1 not acquired within --wait; 2 an error
# (the daemon's answer is printed); 3 lost.
#
# The daemon: REDLOCKD_URL (default http://$REDLOCKD_ADDR, or
# http://127.0.0.1:7420); REDLOCKD_TOKEN for a bearer token; REDLOCKD_CA,
# REDLOCKD_CERT and REDLOCKD_KEY (PEM files) for TLS and mutual TLS.
set -euo pipefail

ttl=10s
wait=0s
resource=""
usage() {
  echo "usage: locked.sh [--ttl 10s] [--wait 30s] RESOURCE -- COMMAND [ARG...]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --ttl) ttl="${2:?--ttl needs a duration, e.g. 10s}"; shift 2 ;;
    --wait) wait="${2:?--wait needs a duration, e.g. 30s}"; shift 2 ;;
    --) shift; break ;;
    -*) usage ;;
    *) [ -z "$resource" ] || usage; resource="$1"; shift ;;
  esac
done
[ -n "$resource" ] && [ $# -gt 0 ] || usage

url="${REDLOCKD_URL:-http://${REDLOCKD_ADDR:-127.0.0.1:7420}}"
curl_args=(--silent --show-error --no-buffer)
[ -z "${REDLOCKD_TOKEN:-}" ] || curl_args+=(--header "authorization: Bearer $REDLOCKD_TOKEN")
[ -z "${REDLOCKD_CA:-}" ] || curl_args+=(--cacert "$REDLOCKD_CA")
[ -z "${REDLOCKD_CERT:-}" ] || curl_args+=(--cert "$REDLOCKD_CERT" --key "$REDLOCKD_KEY")

# The resource in the path: a name may hold '/', anything else is
# percent-encoded byte by byte.
encode() {
  local LC_ALL=C s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "$c" in
      [a-zA-Z0-9._~/-]) out+="$c" ;;
      *) printf -v c '%%%02X' "'$c"; out+="$c" ;;
    esac
  done
  printf '%s' "$out"
}

dir="$(mktemp -d -t locked.XXXXXX)"
curl_pid=""
watcher=""
cleanup() {
  # Closing the stream is what releases the lock.
  [ -z "$curl_pid" ] || kill "$curl_pid" 2>/dev/null || true
  [ -z "$watcher" ] || kill "$watcher" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
mkfifo "$dir/events"

owner="$(hostname)/$$"
curl "${curl_args[@]}" --request POST --header 'content-type: application/json' \
  --data "{\"ttl\":\"$ttl\",\"wait\":\"$wait\",\"owner\":\"$owner\"}" \
  "$url/v1/locks/$(encode "$resource"):hold" >"$dir/events" &
curl_pid=$!
exec 3<"$dir/events"

# The first line: ACQUIRED, NOT_ACQUIRED, or an error (a google.rpc.Status
# when refused before the stream began, as a bad TTL or a missing token).
if ! IFS= read -r line <&3; then
  echo "locked.sh: no answer from $url" >&2
  exit 2
fi
case "$line" in
  *'"HOLD_EVENT_ACQUIRED"'*) ;;
  *'"HOLD_EVENT_NOT_ACQUIRED"'*)
    echo "locked.sh: $resource not acquired within $wait" >&2
    exit 1
    ;;
  *)
    echo "locked.sh: $line" >&2
    exit 2
    ;;
esac
token="$(sed -n 's/.*"fencingToken":"\([0-9]*\)".*/\1/p' <<<"$line")"

REDLOCKD_FENCING_TOKEN="$token" REDLOCKD_RESOURCE="$resource" "$@" 3<&- &
command=$!

# Reads the stream while the command runs: EXTENDED lines and heartbeats
# pass; LOST (or the stream's end: the lock is no longer held) stops it.
(
  while IFS= read -r line; do
    case "$line" in
      *'"HOLD_EVENT_LOST"'* | *'"error"'* | *'"HOLD_EVENT_RELEASED"'*) break ;;
    esac
  done <&3
  echo "locked.sh: the lock on $resource is lost: ${line:-the stream ended}" >&2
  touch "$dir/lost"
  kill -TERM "$command" 2>/dev/null || true
) &
watcher=$!

status=0
wait "$command" || status=$?
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
watcher=""
[ ! -e "$dir/lost" ] || exit 3
exit "$status"
