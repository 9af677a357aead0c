#!/usr/bin/env bash
# The Node client's tests against a real daemon and five real masters
# (scripts/with-dev-daemon). Installs its npm dependencies, checks that the
# committed src/gen/ and lib/ are what the proto and src/ give, compiles the
# tests (TypeScript, `await using` lowered for Node 20), then runs the plain
# tests; the elections, observe and watch tests (a daemon of their own: they
# raise every fence counter); on a daemon each, the tests that kill three
# masters under a lock and under a leader, and the one that freezes the
# daemon (SIGSTOP: the client stops leading and holding on its own deadline);
# and the TLS + token test (the --secure daemon); the conformance scenarios
# (clients/conformance/README.md), a line each, and each one that kills
# masters on a daemon of its own; last, packs the package (`npm pack`,
# what a registry would get), installs the tarball into a fresh npm project
# outside the repository and takes a lock in five lines, from JavaScript
# (the README's, as written) and from TypeScript.
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
[ -z "${REDLOCKD_TEST_PREPARE:-}" ] || { say "prepared: the npm packages and the compiled tests"; exit 0; }
t() { for file in "$@"; do echo "test/.build/$file.test.js"; done; }
# A test that leaves a stream open fails after two minutes instead of hanging.
nodetest=(node --test --test-timeout=120000)
"$root/scripts/with-dev-daemon" "${nodetest[@]}" $(t locking lock-delay sessions sets tracing close)
"$root/scripts/with-dev-daemon" "${nodetest[@]}" $(t elections observe-watch)
"$root/scripts/with-dev-daemon" "${nodetest[@]}" $(t kills-masters)
"$root/scripts/with-dev-daemon" "${nodetest[@]}" $(t leader-loses-masters)
"$root/scripts/with-dev-daemon" "${nodetest[@]}" $(t frozen-daemon)
"$root/scripts/with-dev-daemon" --secure "${nodetest[@]}" $(t secure)
conformance=(node test/.build/conformance/main.js)
"$root/scripts/with-dev-daemon" "${conformance[@]}"
for id in $("${conformance[@]}" --own-daemon-ids); do
  "$root/scripts/with-dev-daemon" "${conformance[@]}" --only "$id"
done

# The tarball, as `npm publish` would upload it: the compiled lib/ (the
# generated gRPC code is compiled in; nothing reads a .proto file at run time)
# and a package.json that names the dependencies npm must install with it.
# Not `npm install <folder>`: npm links a folder and installs none of its
# dependencies, which resolve here only through this folder's node_modules.
packed="$fresh/packed"
mkdir -p "$packed"
tarball="$(npm pack --silent --pack-destination "$fresh" 2>/dev/null | tail -1)"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)"
[ "$tarball" = "redlockd-client-$version.tgz" ] || { say "npm pack made $tarball, not version $version (the daemon's)"; exit 1; }
listing="$(tar -tzf "$fresh/$tarball")"
for file in package.json README.md lib/index.js lib/index.d.ts lib/connection.js lib/leadership.js lib/gen/redlockd/v1/lock.js \
  lib/gen/redlockd/v1/election.js lib/gen/google/rpc/status.js; do
  grep -qx "package/$file" <<<"$listing" || { say "the tarball lacks $file"; exit 1; }
done
! grep -q '^package/test/' <<<"$listing" || { say "the tarball ships the tests"; exit 1; }
(cd "$packed" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "$fresh/$tarball" >/dev/null)
[ -d "$packed/node_modules/@grpc/grpc-js" ] || { say "installing the tarball did not install @grpc/grpc-js"; exit 1; }
# The README's first ```js block, as a user would paste it.
awk '/^```js$/ { on = 1; next } on && /^```$/ { exit } on' README.md >"$packed/five-lines.js"
[ "$(wc -l <"$packed/five-lines.js")" -le 5 ] || { say "the README's first lock is more than five lines"; exit 1; }
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
(cd "$packed" && "$root/scripts/with-dev-daemon" sh -c 'node five-lines.js && node out/five-lines.js') | tee "$fresh/out" >&2
[ "$(grep -c '^fencing token [0-9]*$' "$fresh/out")" -eq 2 ] || { say "the five lines (JavaScript, TypeScript) did not both print a fencing token"; exit 1; }
say "ok"
