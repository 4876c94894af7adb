# Sourced on a lent GPU machine: points LD_LIBRARY_PATH at the CUDA libraries of that
# machine's Python wheels (cuBLAS, cudart, NVRTC, cuRAND) and the driver's libcuda.
libs=""
for site in $(python3 -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
  for dir in "$site"/nvidia/*/lib "$site"/nvidia/cu13/lib; do
    [ -d "$dir" ] && libs="$libs:$dir"
  done
done
export LD_LIBRARY_PATH="${libs#:}:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
