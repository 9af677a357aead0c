#!/usr/bin/env bash
# The Node client's tests against a real daemon and five real masters
# (scripts/with-dev-daemon). Installs its npm dependencies, checks that the
# committed src/gen/ and lib/ are what the proto and src/ give, compiles the
# tests (TypeScript, `await using` lowered for Node 20), then runs the plain
# tests, the test that kills three masters (a daemon of its own) and the TLS
# + token test (the --secure daemon); last, installs the package from the
# repository path into a fresh npm project and takes a lock in five lines,
# from JavaScript and from TypeScript.
#
#   bash clients/node/test.sh        (from anywhere; REDLOCKD_BIN picks the daemon)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { echo "clients/node/test.sh: $*" >&2; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || "$root/scripts/ensure-deps"

cd "$here"
# Quick when already installed: npm ci only when package-lock.json changed.
if ! cmp -s package-lock.json node_modules/.installed-from-lock; then
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.installed-from-lock
fi

# What is committed must be what the sources give: users never run protoc or tsc.
fresh="$(mktemp -d -t redlockd-node.XXXXXX)"
trap 'rm -rf "$fresh"' EXIT
bash scripts/gen.sh "$fresh/gen" >/dev/null
# protoc's version line aside: another pip may bring another protoc.
diff -r -I '^//   protoc ' src/gen "$fresh/gen" >/dev/null ||
  { say "src/gen/ is stale: run bash clients/node/scripts/gen.sh, then npm run build"; exit 1; }
npx --no-install tsc -p tsconfig.build.json --outDir "$fresh/lib"
diff -r lib "$fresh/lib" >/dev/null || { say "lib/ is stale: run npm run build in clients/node"; exit 1; }

rm -rf test/.build
npx --no-install tsc -p tsconfig.json
"$root/scripts/with-dev-daemon" node --test test/.build/locking.test.js test/.build/sessions.test.js test/.build/sets.test.js
"$root/scripts/with-dev-daemon" node --test test/.build/kills-masters.test.js
"$root/scripts/with-dev-daemon" --secure node --test test/.build/secure.test.js

# A user installs it from the repository path and takes a lock in five
# lines (npm links a folder), and from a packed tarball (what `files` ships)
# with TypeScript's `await using`.
linked="$fresh/linked" packed="$fresh/packed"
mkdir -p "$linked" "$packed"
(cd "$linked" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "$here" >/dev/null)
# The README's first ```js block, as a user would paste it.
awk '/^```js$/ { on = 1; next } on && /^```$/ { exit } on' README.md >"$linked/five-lines.js"
[ "$(wc -l <"$linked/five-lines.js")" -le 5 ] || { say "the README's first lock is more than five lines"; exit 1; }
tarball="$(npm pack --silent --pack-destination "$fresh" 2>/dev/null | tail -1)"
(cd "$packed" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "$fresh/$tarball" >/dev/null)
cat >"$packed/five-lines.ts" <<'TS'
import { Client } from '@redlockd/client';
const client = new Client();
(async () => {
  await using lock = await client.hold('examples/five-lines-ts', { ttl: 10_000, wait: 5_000 });
  console.log(`fencing token ${lock.fencingToken satisfies bigint}`);
})().finally(() => client.close());
TS
cat >"$packed/tsconfig.json" <<JSON
{ "compilerOptions": { "target": "es2022", "module": "node16", "strict": true, "outDir": "out",
    "lib": ["es2022", "esnext.disposable"], "types": ["node"], "typeRoots": ["$here/node_modules/@types"] },
  "files": ["five-lines.ts"] }
JSON
"$here/node_modules/.bin/tsc" -p "$packed/tsconfig.json"
(cd "$linked" && "$root/scripts/with-dev-daemon" node five-lines.js) | grep "^fencing token [0-9]*$"
(cd "$packed" && "$root/scripts/with-dev-daemon" node out/five-lines.js) | grep "^fencing token [0-9]*$"
say "ok"
