#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this): installs what is
# missing, checks formatting and lints, runs every test (unit, doc, the multi-process
# conformance suite, the bench's own test) and the loom models at a small bound.
# Exits non-zero on the first failure. Slow checks live in scripts/slow-checks.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test (workspace)"
cargo test --workspace
echo "== loom models (memchan-core/tests/loom.rs)"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
  cargo test -p memchan-core --test loom --release
