#!/usr/bin/env bash
# The Python client's tests against a real daemon and five real masters
# (scripts/with-dev-daemon): installs the package from this folder into
# .venv (once), then runs pytest three times — the plain suite; the test
# that kills three masters, against a daemon of its own; and the TLS +
# token test against the --secure daemon. Also checks that the package
# installs from the repository path into a fresh venv and takes a lock.
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
    apt-get install -y python3-venv >/dev/null || { apt-get update && apt-get install -y python3-venv >/dev/null; }
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
cd "$here/tests"
"$root/scripts/with-dev-daemon" "$py" -m pytest -q -p no:cacheprovider -m "not kills_masters and not secure" .
"$root/scripts/with-dev-daemon" "$py" -m pytest -q -p no:cacheprovider -m kills_masters .
"$root/scripts/with-dev-daemon" --secure "$py" -m pytest -q -p no:cacheprovider -m "secure" .

# A user installs it from the repository path and takes a lock in five lines.
fresh="$(mktemp -d -t redlockd-py.XXXXXX)"
trap 'rm -rf "$fresh"' EXIT
make_venv "$fresh/venv"
"$fresh/venv/bin/pip" install --disable-pip-version-check -q "$here"
cat >"$fresh/five_lines.py" <<'PY'
import redlockd
client = redlockd.Client()
with client.hold("examples/five-lines", ttl=10, wait=5) as lease:
    print("fencing token", lease.fencing_token)
client.close()
PY
"$root/scripts/with-dev-daemon" "$fresh/venv/bin/python" "$fresh/five_lines.py" | grep -q "fencing token"
say "ok"
