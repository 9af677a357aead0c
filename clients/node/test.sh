#!/usr/bin/env bash
# The Node client's tests against a real daemon and five real masters
# (scripts/with-dev-daemon): installs its npm dependencies, type-checks
# test/types.ts against lib/index.d.ts (`await using` included), then runs
# the plain tests, the test that kills three masters (a daemon of its own)
# and the TLS + token test (the --secure daemon); and checks that the
# package installs from the repository path and takes a lock.
#
#   bash clients/node/test.sh        (from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { echo "clients/node/test.sh: $*" >&2; }
command -v redis-cli >/dev/null || "$root/scripts/ensure-deps"

cd "$here"
# The API contract ships inside the package: it must be the repository's.
cmp -s proto/redlockd/v1/lock.proto "$root/proto/redlockd/v1/lock.proto" ||
  { say "proto/redlockd/v1/lock.proto differs from the repository's: copy it again"; exit 1; }
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi
# Type-checks test/types.ts and compiles test/dispose.test.ts (`await using`).
npx --no-install tsc -p tsconfig.json

"$root/scripts/with-dev-daemon" node --test test/client.test.js test/dispose.test.js
"$root/scripts/with-dev-daemon" node --test test/kills_masters.test.js
"$root/scripts/with-dev-daemon" --secure node --test test/secure.test.js

# A user installs it from the repository path and takes a lock in five lines.
fresh="$(mktemp -d -t redlockd-node.XXXXXX)"
trap 'rm -rf "$fresh"' EXIT
(cd "$fresh" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "$here" >/dev/null)
cat >"$fresh/five-lines.js" <<'JS'
const { Client } = require('@redlockd/client');
const client = new Client();
client.using('examples/five-lines', { ttl: 10000, wait: 5000 }, async (signal, lock) => {
  console.log('fencing token', lock.fencingToken);
}).finally(() => client.close());
JS
(cd "$fresh" && "$root/scripts/with-dev-daemon" node five-lines.js) | grep -q "fencing token"
say "ok"
