#!/usr/bin/env bash
# Runs the Rust client's example (clients/rust/examples/fenced_write.rs)
# against a throwaway daemon, plain and then with mutual TLS and a token.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
cargo build -q -p redlockd-client --example fenced_write
example="${CARGO_TARGET_DIR:-$root/target}/debug/examples/fenced_write"
"$root/scripts/with-dev-daemon" "$example"
exec "$root/scripts/with-dev-daemon" --secure "$example"
