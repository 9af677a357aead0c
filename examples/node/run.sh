#!/usr/bin/env bash
# CI entry point for the Node.js example: installs its npm dependencies,
# then runs example.js against a throwaway `redlockd dev`
# (scripts/with-dev-daemon). Exits with the example's status.
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

exec "$root/scripts/with-dev-daemon" node "$here/example.js"
