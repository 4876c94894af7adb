# Sourced on a GPU host: points LD_LIBRARY_PATH at the CUDA libraries of that
# machine's Python wheels (cuBLAS, cudart, NVRTC, cuRAND), the driver's libcuda, and the
# libraries scripts/package-device.sh carried in DEVICE_DIR/bin/libs.tar.xz (OpenBLAS,
# LAPACK, OpenMP, which FAISS links and a CUDA image need not have).
libs=""
for site in $(python3 -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
  for dir in "$site"/nvidia/*/lib "$site"/nvidia/cu13/lib; do
    [ -d "$dir" ] && libs="$libs:$dir"
  done
done
export LD_LIBRARY_PATH="${libs#:}:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
# The driver's libcuda.so.1 where the image mounts it outside the loader's default paths.
for dir in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  if [ -d "$dir" ]; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir"; fi
done
device_dir="${DEVICE_DIR:-$root/target/device}"
if [ -f "$device_dir/bin/libs.tar.xz" ] && [ ! -d "$device_dir/lib" ]; then
  mkdir -p "$device_dir/lib" && xz -dc "$device_dir/bin/libs.tar.xz" | tar -C "$device_dir/lib" -xf -
fi
if [ -d "$device_dir/lib" ]; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$device_dir/lib"; fi
