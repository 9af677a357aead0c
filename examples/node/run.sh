#!/usr/bin/env bash
# Installs the Node client from the repository path (a copy, as a user's
# install would be) and runs example.js against a throwaway daemon, plain
# and then with mutual TLS and a bearer token.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
npm install --install-links --no-audit --no-fund --loglevel=error >/dev/null
"$root/scripts/with-dev-daemon" node "$here/example.js"
exec "$root/scripts/with-dev-daemon" --secure node "$here/example.js"
