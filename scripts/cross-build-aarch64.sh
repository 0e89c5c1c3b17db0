#!/usr/bin/env bash
# Cross-compiles farm-coordinator, farm-worker, farm-nvcc, farm-cc (with its masquerade
# directory, build-aarch64/bin/farm-cc-masquerade) and farmctl for aarch64 into
# build-aarch64/bin, against the arm64 Debian root of scripts/arm64-root.sh as sysroot.
# On a real aarch64 host use scripts/build.sh instead: the ordinary build works unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
root="$(bash scripts/arm64-root.sh)"
cmake -S . -B build-aarch64 -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DCMAKE_C_COMPILER_LAUNCHER="env;CCACHE_BASEDIR=$PWD;CCACHE_NOHASHDIR=1;ccache" \
  -DCMAKE_CXX_COMPILER_LAUNCHER="env;CCACHE_BASEDIR=$PWD;CCACHE_NOHASHDIR=1;ccache" \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" -DWHEELFARM_ARM64_ROOT="$root" \
  >/dev/null
ninja -C build-aarch64 farm-coordinator farm-worker farm-nvcc farm-cc farmctl
echo "cross-build-aarch64: aarch64 binaries in $PWD/build-aarch64/bin (sysroot $root)"
