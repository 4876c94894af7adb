#!/usr/bin/env bash
# One-time setup on a fresh Debian machine: system packages for the FAISS build,
# the default embedding model (from PyPI, checksum verified), and a release build.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

packages=(cmake g++ make libopenblas-dev pkg-config curl python3-venv)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing system packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

scripts/fetch-model.sh
cargo build --release --locked
echo "setup done: target/release/quarry"
