#!/usr/bin/env bash
# Builds and runs bench/inspect_bench: farmctl inspect on a ~1 GiB library vs sha256sum.
# Entry headers come from a real nvcc-built object when nvcc is available.
# Usage: bench/run_inspect_bench.sh [BUILD_DIR]   (default: build-inspect)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-inspect}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
ninja -C "$build" inspect_bench
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
from=()
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
if [ -x "$nvcc" ]; then
  printf '__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n' > "$work/k.cu"
  "$nvcc" -c -Xcompiler -fPIC -gencode arch=compute_75,code=sm_75 \
    -gencode arch=compute_90,code=sm_90 -gencode arch=compute_120,code=sm_120 \
    "$work/k.cu" -o "$work/k.o"
  from=(--from "$work/k.o")
fi
"$build/bin/inspect_bench" "${from[@]}" --out "$work/libbench.so" --size-mib "${SIZE_MIB:-1024}"
