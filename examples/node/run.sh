#!/usr/bin/env bash
# CI entry point for the Node.js example: installs its npm dependencies,
# then runs example.js against a throwaway `redlockd dev`
# (scripts/with-dev-daemon), twice: plain, then with mutual TLS and a bearer
# token. Fails if either run fails.
#
#   bash examples/node/run.sh        (from anywhere; uses target/debug/redlockd)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

cd "$here"
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi

# Once against a plain loopback sidecar, once with mutual TLS and a token.
"$root/scripts/with-dev-daemon" node "$here/example.js"
exec "$root/scripts/with-dev-daemon" --secure node "$here/example.js"
