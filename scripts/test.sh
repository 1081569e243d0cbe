#!/usr/bin/env bash
# The test command (README): installs what the tests need and runs every test.
#
# Needs only the Rust toolchain. The engine-core tests use embedded SQLite (no services to
# start). Formatting and lints are checked first so a failing style check fails fast.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== toolchain: $(cargo --version)"
if rustup component list --installed 2>/dev/null | grep -q rustfmt; then
  cargo fmt --all -- --check
else
  echo "rustfmt not installed; skipping format check"
fi
if rustup component list --installed 2>/dev/null | grep -q clippy; then
  cargo clippy --all-targets --locked -- -D warnings
else
  echo "clippy not installed; skipping lint check"
fi

echo "== unit and integration tests"
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
cargo test --locked 2>&1 | tee "$LOG"

echo "== benchmarks compile (they run with cargo bench, never as tests)"
cargo build --locked --benches

echo "== rule pack fixtures through the CLI"
cargo run --locked --quiet -- rules test

echo "== screening fixtures through the CLI (bundled lists)"
cargo run --locked --quiet -- screen test

# One closing line for the whole run (cargo's last summary is the doc-test one).
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' "$LOG"
