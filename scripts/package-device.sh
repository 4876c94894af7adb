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
# 2026-11-26: quarry.xz 16.8 MB, cuda_parity.xz 0.5 MB, cuda_encoder_parity.xz 5.7 MB,
# golden_embeddings.xz 7.7 MB (2026-11-22), the model 41 MB xz'd, libs.tar.xz 5.6 MB, the
# tree 1.3 MB), so the model and the test binaries go in separate calls to one machine
# (files carried or written in one call stay for the next while it is held); the script
# prints each call's total against the limit. The GPU host's time is counted from its start
# (a minute or two) to its return, and it is returned 30 s after a call ends: issue the next
# call at once. The three calls of 2026-11-26 (about 7 minutes of an H200 in all):
#   1. carry target/device/bin/quarry.xz, target/device/bin/cuda_parity.xz,
#      target/device/bin/cuda_encoder_parity.xz, target/device/bin/libs.tar.xz; command
#      "scripts/gpu-check.sh parity" (15 s; parity needs no model)
#   2. carry target/device/model, target/device/shared, target/device/bin/quarry.xz,
#      target/device/bin/libs.tar.xz (63.4 MiB); command "EMBED_CHUNKS=20000 FUSED_MODES=1
#      PRECISIONS='f16 bf16' POOLING_MODES='0 1' scripts/gpu-check.sh golden-cli embed
#      cpu-scaling search profile" (200 s)
#   3. carry nothing; command "E2E_INDEX=auto scripts/gpu-check.sh e2e" (137 s)
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
call1=("$out/shared" "$out/bin/quarry.xz" "$out/bin/libs.tar.xz")
[ -f "$out/bin/cuda_parity.xz" ] && call1+=("$out/bin/cuda_parity.xz")
[ "$with_model" = 1 ] && call1+=("$out/model")
check_call "call 1 (model, shared, quarry, cuda_parity, libs)" "${call1[@]}"
call2=()
for test in golden_embeddings cuda_encoder_parity; do
  [ -f "$out/bin/$test.xz" ] && call2+=("$out/bin/$test.xz")
done
[ "$with_cpu" = 1 ] && call2+=("$out/bin/quarry-cpu.xz")
[ ${#call2[@]} -eq 0 ] || check_call "call 2 (golden_embeddings, cuda_encoder_parity, quarry-cpu)" "${call2[@]}"
