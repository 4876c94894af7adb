#!/usr/bin/env bash
# Installs the CUDA 13.0 toolkit (nvcc, headers, cuBLAS, NVRTC, cuRAND) from PyPI wheels into
# .cuda/ (ignored by git) so that `cargo build --release --features cuda` works on a machine
# without a GPU. Prints the environment to build with. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.cuda"
toolkit="$dir/toolkit"
curand="$dir/curand"
links="$dir/link"
if [ ! -x "$toolkit/nvidia/cu13/bin/nvcc" ]; then
  # One `pip install --target` for everything: a second one into the same folder replaces nvidia/.
  # nvvm is pinned: left free it resolves to 13.5, whose PTX (ISA 9.5) nvcc 13.0 and driver 580 reject.
  python3 -m pip install --quiet --disable-pip-version-check --target "$toolkit" \
    nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 \
    nvidia-cuda-crt==13.0.88 nvidia-cuda-nvrtc==13.0.88 nvidia-cublas==13.1.0.3
fi
if [ ! -d "$curand/nvidia" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$curand" nvidia-curand==10.4.0.35
fi
cu13="$toolkit/nvidia/cu13"
mkdir -p "$links"
# Unversioned names for the linker; the real libraries are found at run time on the GPU host.
for lib in cublas cublasLt cudart nvrtc; do
  real="$(ls "$cu13"/lib/lib$lib.so.* 2>/dev/null | head -n1 || true)"
  [ -n "$real" ] && ln -sf "$real" "$links/lib$lib.so"
done
real="$(find "$curand" -name 'libcurand.so.*' | head -n1 || true)"
[ -n "$real" ] && ln -sf "$real" "$links/libcurand.so"
# The driver (libcuda) ships with no wheel: link against a stub with its soname that defines
# every driver function cudarc declares; the GPU host's real libcuda.so.1 loads at run time.
if [ ! -f "$links/libcuda.so" ]; then
  (cd "$root" && cargo fetch --locked >/dev/null)
  version="$(awk '/^name = "cudarc"$/ {getline; gsub(/version = |"/, ""); print; exit}' "$root/Cargo.lock")"
  sys="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-"$version"/src/driver/sys/mod.rs | head -n1)"
  [ -f "$sys" ] || { echo "error: cudarc $version sources not found" >&2; exit 1; }
  grep -oE 'fn cu[A-Z][A-Za-z0-9_]*\(' "$sys" | sed -E 's/fn (.*)\(/void \1(void) {}/' | sort -u > "$dir/cuda_stub.c"
  cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$links/libcuda.so" "$dir/cuda_stub.c"
  echo "libcuda stub: $(wc -l < "$dir/cuda_stub.c") driver symbols from cudarc $version"
fi
cat > "$dir/env.sh" <<ENV
export PATH="$cu13/bin:\$PATH"
export CUDA_ROOT="$cu13"
export CUDA_PATH="$cu13"
export CUDA_COMPUTE_CAP=90
export RUSTFLAGS="\${RUSTFLAGS:-} -L native=$links"
export LIBRARY_PATH="$links:\${LIBRARY_PATH:-}"
ENV
echo "CUDA toolkit in $cu13; build with: source .cuda/env.sh && cargo build --release --features cuda --target-dir target/cuda"
