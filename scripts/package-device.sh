#!/usr/bin/env bash
# Packs what a lent GPU machine needs into target/device/ (ignored by git; name it in the
# device tool's `carry`): the CUDA build of quarry, the CUDA test binaries (kernel parity,
# golden embeddings), optionally the CPU build (to show the CPU-only binary serves a
# GPU-built snapshot), an fp16 copy of the model and the golden reference file.
# Binaries are stripped and xz-compressed; scripts/gpu-check.sh unpacks them there.
#
#   scripts/cuda-toolkit.sh && source .cuda/env.sh
#   cargo build --release --features cuda --target-dir target/cuda --bins --tests
#   cargo build --release                      # the CPU build, for --with-cpu
#   scripts/package-device.sh [--with-cpu] [--no-model]
#
# A device call carries at most 64 MiB (measured 2026-11-22: quarry.xz 15 MB, the test
# binaries 7 MB, the model 41 MB xz'd, quarry-cpu.xz 11 MB), so carry it in two calls while
# the machine stays warm (files written there in one call stay for the next):
#   1. carry target/device/model, target/device/shared, target/device/bin/quarry.xz,
#      target/device/bin/cuda_parity.xz, target/device/bin/golden_embeddings.xz;
#      command "scripts/gpu-check.sh tests embed kernels cpu e2e"
#   2. carry target/device/bin/quarry-cpu.xz; command "scripts/gpu-check.sh serve-cpu"
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
with_cpu=0
with_model=1
for arg in "$@"; do
  case "$arg" in
    --with-cpu) with_cpu=1 ;;
    --no-model) with_model=0 ;;
    *) echo "usage: $0 [--with-cpu] [--no-model]" >&2; exit 2 ;;
  esac
done
out=target/device
rm -rf "$out" && mkdir -p "$out/bin"
newest_test() { ls -t target/cuda/release/deps/"$1"-* 2>/dev/null | grep -v '\.d$' | head -1; }
pack() { # pack SRC NAME
  [ -x "$1" ] || { echo "error: $1 missing: build it first (see the top of this script)" >&2; exit 1; }
  cp "$1" "$out/bin/$2" && strip "$out/bin/$2" && xz -T2 -9 "$out/bin/$2"
}
pack target/cuda/release/quarry quarry
pack "$(newest_test cuda_parity)" cuda_parity
pack "$(newest_test golden_embeddings)" golden_embeddings
[ "$with_cpu" = 1 ] && pack target/release/quarry quarry-cpu
if [ "$with_model" = 1 ]; then
  python="${PYTHON:-.venv-bench/bin/python}"
  [ -x "$python" ] || python=python3
  "$python" scripts/fp16-model.py models/all-MiniLM-L6-v2 "$out/model"
  xz -T2 -6 "$out/model/model.safetensors"   # 45 MB -> 41 MB; gpu-check.sh unpacks it
fi
mkdir -p "$out/shared/reference"
cp ../shared/reference/minilm-golden.jsonl "$out/shared/reference/"
du -sh "$out" "$out"/bin/* "$out"/model 2>/dev/null
