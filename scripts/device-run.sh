#!/usr/bin/env bash
# Runs a CUDA build of quarry on a GPU host (no Rust there). Build here, then carry
# the binary and a model to the device (the device tool copies the working tree; ignored
# build outputs go in its `carry` list):
#
#   scripts/cuda-toolkit.sh && source .cuda/env.sh
#   cargo build --release --features cuda --target-dir target/cuda
#   mkdir -p target/device && cp target/cuda/release/quarry target/device/ && strip target/device/quarry
#   xz -T2 target/device/quarry          # 91 MB stripped -> 16 MB (measured 2026-11-22); unpacked on the device
#   # (or scripts/package-device.sh, which also packs bin/libs.tar.xz: FAISS's BLAS/LAPACK/OpenMP)
#   .venv-bench/bin/python scripts/fp16-model.py models/all-MiniLM-L6-v2 target/device/model   # 45 MB: both fit a 64 MiB call
#   # device tool: command "scripts/device-run.sh embed --model target/device/model --device cuda < texts.jsonl",
#   #              carry ["target/device"]
#
# On the device, this script points LD_LIBRARY_PATH at the CUDA libraries of the machine's
# Python environment (cuBLAS, cudart, NVRTC, cuRAND wheels) and the driver's libcuda.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${QUARRY_BIN:-$root/target/device/quarry}"
if [ ! -x "$bin" ] && [ -f "$bin.xz" ]; then
  xz -dk "$bin.xz" && chmod +x "$bin"
fi
[ -x "$bin" ] || { echo "error: $bin not found: build with --features cuda and carry target/device" >&2; exit 1; }
source "$root/scripts/device-libs.sh"
nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader >&2 || true
exec "$bin" "$@"
