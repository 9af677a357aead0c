#!/usr/bin/env bash
# The Rust client as the registry would ship it. Its own tests are the
# daemon's (tests/it/client.rs) and its conformance runner
# (tests/conformance/, ../conformance's scenarios), both in scripts/test's
# cargo pass, and clippy and
# fmt cover it as a workspace member; this runs none of them again. It:
#   1. packs the crate with `cargo package`, which also builds the unpacked
#      copy (target/package/redlockd-client-<version>/) on its own: the proto
#      files it generates from must travel inside (proto/ is a link to the
#      repository's);
#   2. builds a fresh cargo project, outside the repository, that depends on
#      that unpacked copy by path, with the README's first lock (its first
#      ```rust block, as written) in its main, and runs it against a daemon.
# Builds go to target/packaged/ (CARGO_TARGET_DIR/packaged): the workspace's
# builds have other features, so nothing is shared with them, and this keeps
# out of their way; later runs reuse it.
#
#   bash clients/rust/test.sh        (from anywhere; REDLOCKD_BIN picks the daemon)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { echo "clients/rust/test.sh: $*" >&2; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || "$root/scripts/ensure-deps"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}/packaged"
# Line tables only, and dependencies without debuginfo, as in the
# workspace's dev profile (the root Cargo.toml), which neither the packaged
# crate nor the fresh project carries; but unoptimised: these builds only
# prove that the packed crate compiles and takes one lock, and unoptimised
# they cost about a third of the CPU time.
profile=(--config 'profile.dev.debug="line-tables-only"'
  --config 'profile.dev.package."*".opt-level=0' --config 'profile.dev.package."*".debug=false')
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/Cargo.toml" | head -1)"
packaged="$CARGO_TARGET_DIR/package/redlockd-client-$version"

say "1. cargo package, and the packaged copy built on its own"
# cargo refuses to pack uncommitted changes (a published crate must be a
# commit). A clean checkout (CI) is packed as it is; a working tree with
# edits in the crate is packed as it stands, with --allow-dirty, so that
# scripts/test tests what is being worked on.
dirty=()
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1 &&
  [ -n "$(git -C "$root" status --porcelain -- "$here" "$root/proto")" ]; then
  say "uncommitted changes in clients/rust or proto/: packing them (--allow-dirty)"
  dirty=(--allow-dirty)
fi
cd "$root"
cargo package "${profile[@]}" -p redlockd-client "${dirty[@]}"
for file in proto/redlockd/v1/lock.proto proto/redlockd/v1/admin.proto proto/redlockd/v1/election.proto; do
  cmp -s "$packaged/$file" "$root/$file" || { say "the packaged crate lacks $file, or it differs from the repository's"; exit 1; }
done

say "2. a fresh project depending on the packaged crate; the README's first lock"
fresh="$(mktemp -d -t redlockd-rust-user.XXXXXX)"
trap 'rm -rf "$fresh"' EXIT
mkdir "$fresh/src"
cat >"$fresh/Cargo.toml" <<TOML
[package]
name = "first-lock"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
redlockd-client = { path = "$packaged" }
# The crate's own tokio features (current_thread below): its build is shared.
tokio = { version = "1", features = ["rt", "macros"] }

[workspace]
TOML
five="$(awk '/^```rust$/ { on = 1; next } on && /^```$/ { exit } on' "$here/README.md")"
[ "$(grep -c . <<<"$five")" -le 5 ] || { say "the README's first lock is over five lines"; exit 1; }
{
  echo '#[tokio::main(flavor = "current_thread")]'
  echo 'async fn main() -> Result<(), Box<dyn std::error::Error>> {'
  echo "$five"
  echo '    Ok(())'
  echo '}'
} >"$fresh/src/main.rs"
# The versions the workspace tested (the packaged Cargo.lock) rather than
# whatever is newest today: the same build as step 1, nothing rebuilt.
cp "$packaged/Cargo.lock" "$fresh/Cargo.lock"
cargo build "${profile[@]}" -q --manifest-path "$fresh/Cargo.toml"
[ -z "${REDLOCKD_TEST_PREPARE:-}" ] || { say "prepared: the packaged crate and a user's project on it"; exit 0; }
"$root/scripts/with-dev-daemon" "$CARGO_TARGET_DIR/debug/first-lock" | tee "$fresh/out" >&2
grep -Eq '^fencing token [0-9]+$' "$fresh/out" || { say "the first lock printed no fencing token"; exit 1; }
say "ok"
