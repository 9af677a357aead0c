#!/usr/bin/env bash
# Runs the Rust client's example (clients/rust/examples/fenced_write.rs)
# against a throwaway daemon, plain and then with mutual TLS and a token.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
# The workspace's features (not the client's alone, which would build
# tokio, tonic and the rest again): scripts/test built it already.
cargo build -q --workspace --example fenced_write
example="${CARGO_TARGET_DIR:-$root/target}/debug/examples/fenced_write"
"$root/scripts/with-dev-daemon" "$example"
exec "$root/scripts/with-dev-daemon" --secure "$example"
