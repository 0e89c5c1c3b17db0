#!/usr/bin/env bash
# Builds and runs bench/cas_bench: a real farm-coordinator on loopback, a 1 GiB blob up
# and down, throughput as a ratio to sha256sum of the same file in the same run.
# Usage: bench/run_cas_bench.sh [BUILD_DIR]   (default: build-cas; SIZE_MIB=1024; ZSTD=1 for
# zstd on the wire, off by default)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-cas}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
ninja -C "$build" cas_bench farm-coordinator
args=(--size-mib "${SIZE_MIB:-1024}")
if [ "${ZSTD:-0}" = 1 ]; then args+=(--zstd); fi
"$build/bin/cas_bench" "${args[@]}"
