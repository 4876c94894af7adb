#!/usr/bin/env bash
# Packs what a lent GPU machine needs into target/device/ (ignored by git; name it in the
# device tool's `carry`): the CUDA build of quarry, the CUDA test binaries (kernel parity,
# golden embeddings), optionally the CPU build (to show the CPU-only binary serves a
# GPU-built snapshot), an fp16 copy of the model and the golden reference file.
# Binaries are stripped and xz-compressed; scripts/gpu-check.sh unpacks them there.
#
#   scripts/cuda-toolkit.sh && source .cuda/env.sh
#   cargo build --release --features cuda --target-dir target/cuda
#   cargo build --release --target-dir target/cuda -p quarry-indexer -p quarry-kernels \
#     --features quarry-indexer/cuda,quarry-kernels/cuda --test golden_embeddings --test cuda_encoder_parity --test cuda_parity
#   cargo build --release                      # the CPU build, for --with-cpu
#   scripts/package-device.sh [--with-cpu] [--no-model]
#
# A call to a GPU host carries at most 64 MiB, the working tree included (measured
# 2026-11-27: quarry.xz 17.4 MB, quarry-cpu.xz 13.0 MB, cuda_encoder_parity.xz 5.7 MB,
# cuda_parity.xz 0.5 MB, libs.tar.xz 5.6 MB, the model 39 MB xz'd, the tree 4.1 MB), so the
# binaries and the model go in separate calls to one machine (files carried or written in one
# call stay for the next while it is held); the script prints each call's total against the
# limit. The GPU host's time is counted from its start (under a minute to two) to its return,
# and it is returned 30 s after a call ends: issue the next call at once. The two calls of
# 2026-11-27 (about 8 minutes of an H200 in all):
#   1. carry target/device/shared and target/device/bin/{quarry,libs.tar,cuda_parity,
#      cuda_encoder_parity,quarry-cpu}.xz; command "scripts/gpu-check.sh parity hnsw" (95 s:
#      neither step needs the model)
#   2. carry target/device/model; command "CPU_EMBED_CHUNKS=500 EMBED_CHUNKS=20000 FUSED_MODES=1
#      PRECISIONS=f16 E2E_INDEX=auto scripts/gpu-check.sh e2e serve-cpu hnsw-real cpu embed" (340 s)
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
newest_test() { ls -t target/cuda/release/deps/"$1"-* 2>/dev/null | grep -v '\.d$' | head -1 || true; }
pack() { # pack SRC NAME
  [ -x "$1" ] || { echo "error: $1 missing: build it first (see the top of this script)" >&2; exit 1; }
  cp "$1" "$out/bin/$2" && strip "$out/bin/$2" && xz -T2 -9 "$out/bin/$2"
}
pack target/cuda/release/quarry quarry
# Each CUDA test binary that was built (a call that runs only the shipped binary needs none).
for test in cuda_parity golden_embeddings cuda_encoder_parity; do
  built="$(newest_test "$test")"
  if [ -n "$built" ]; then pack "$built" "$test"; else echo "note: no $test test binary built: not packed" >&2; fi
done
[ "$with_cpu" = 1 ] && pack target/release/quarry quarry-cpu
# The shared libraries both builds link that a CUDA image need not have (FAISS's BLAS and
# LAPACK through OpenBLAS, its Fortran runtime, OpenMP): gpu-check.sh puts them on
# LD_LIBRARY_PATH. The CUDA libraries are that machine's own (scripts/device-libs.sh).
mkdir -p "$out/lib"
for lib in $(ldd target/cuda/release/quarry | awk '/=> \// { print $1 }'); do
  case "$lib" in
    libc.so*|libm.so*|libgcc_s.so*|libstdc++.so*|ld-linux*|libcuda.so*|libcu*|libnvrtc*) ;;
    *) cp -L "$(ldd target/cuda/release/quarry | awk -v l="$lib" '$1 == l { print $3 }')" "$out/lib/$lib" ;;
  esac
done
tar -C "$out/lib" -cf - . | xz -T2 -9 > "$out/bin/libs.tar.xz" && rm -rf "$out/lib"
if [ "$with_model" = 1 ]; then
  python="${PYTHON:-.venv-bench/bin/python}"
  [ -x "$python" ] || python=python3
  if ! "$python" -c "import numpy" 2>/dev/null; then
    # A fresh machine's python3 has no numpy: a venv of its own (git-ignored) for the conversion.
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/python -c "import numpy" 2>/dev/null || .venv/bin/pip install -q numpy
    python=.venv/bin/python
  fi
  "$python" scripts/fp16-model.py models/all-MiniLM-L6-v2 "$out/model"
  xz -T2 -6 "$out/model/model.safetensors"   # 45 MB -> 41 MB; gpu-check.sh unpacks it
fi
mkdir -p "$out/shared/reference"
cp ../shared/reference/minilm-golden.jsonl "$out/shared/reference/"
du -sh "$out" "$out"/bin/* "$out"/model 2>/dev/null
# What each call carries, with the working tree (tracked files) that always travels.
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
limit=$((64 * 1024 * 1024))
check_call() { # check_call NAME PATH...
  local name="$1"; shift
  local bytes
  bytes=$(( $(du -cb "$@" 2>/dev/null | tail -1 | cut -f1) + tree ))
  awk -v name="$name" -v bytes="$bytes" 'BEGIN { printf "%s: %.1f MiB of 64 MiB (tree included)\n", name, bytes / 1048576 }'
  [ "$bytes" -le "$limit" ] || echo "warning: $name carries more than the 64 MiB one call to a GPU host takes: move a file to the other call" >&2
}
# Call 1: the binaries, for the steps that need no model (parity, kernels, hnsw); call 2: the
# model (and the golden test binary) for the rest. What call 1 unpacked stays for call 2 while
# the machine is held.
call1=("$out/shared" "$out/bin/quarry.xz" "$out/bin/libs.tar.xz")
for binary in cuda_parity cuda_encoder_parity quarry-cpu; do
  [ -f "$out/bin/$binary.xz" ] && call1+=("$out/bin/$binary.xz")
done
check_call "call 1 (shared, quarry, libs, cuda_parity, cuda_encoder_parity, quarry-cpu)" "${call1[@]}"
call2=()
[ "$with_model" = 1 ] && call2+=("$out/model")
[ -f "$out/bin/golden_embeddings.xz" ] && call2+=("$out/bin/golden_embeddings.xz")
[ ${#call2[@]} -eq 0 ] || check_call "call 2 (model, golden_embeddings)" "${call2[@]}"
