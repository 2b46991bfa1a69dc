#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this): installs what is
# missing, checks formatting and lints, runs every test (unit, doc, the multi-process
# conformance suite, the bench's own test), the Python package's pytest suite, the
# scripts' own tests, and the loom models at a small bound.
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
echo "== Python package (one maturin build into target/py-venv, then pytest)"
rm -rf target/py-wheels
target/py-venv/bin/maturin build --quiet -m crates/memchan-py/Cargo.toml \
  -i target/py-venv/bin/python -o target/py-wheels
target/py-venv/bin/python -m pip install --quiet --disable-pip-version-check \
  --force-reinstall --no-deps target/py-wheels/memchan-*.whl
target/py-venv/bin/python -m pytest -q -p no:cacheprovider crates/memchan-py/tests
echo "== scripts' own tests (the many-hosts simulation)"
target/py-venv/bin/python -m pytest -q -p no:cacheprovider scripts/tests
echo "== loom models (memchan-core/tests/loom.rs)"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
  cargo test -p memchan-core --test loom --release
