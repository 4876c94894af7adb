#!/usr/bin/env bash
# The project's test command: installs what the tests need (model, Python tools, a browser), checks the
# formatting and clippy's lints, then runs every test of the workspace in the release profile
# (the same build as the binary).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/fetch-model.sh
scripts/python-tools.sh
scripts/browser-tools.sh
if command -v rustup >/dev/null && ! (cargo fmt --version && cargo clippy --version) >/dev/null 2>&1; then
    rustup component add rustfmt clippy
fi
cargo fmt --all --check
cargo clippy --workspace --all-targets --release --quiet -- -D warnings
# FAISS uses OpenMP; passive waiting keeps parallel tests from spinning on 2 cores.
export OMP_WAIT_POLICY=PASSIVE
cargo nextest run --release --workspace --no-fail-fast "$@"
