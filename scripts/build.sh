#!/usr/bin/env bash
# Installs dependencies (idempotent), configures and builds into build/: everything, or the
# ninja targets named as arguments (`bash scripts/build.sh binaries`: only what the product
# ships, as the demo does).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# ccache (cache under ~/.cache/ccache, outside the clone) makes rebuilds of a fresh clone cheap,
# wherever it is: paths under the clone are hashed relative to it, and the working directory
# is not hashed (so debug info may name the clone that filled the cache).
launcher="env;CCACHE_BASEDIR=$PWD;CCACHE_NOHASHDIR=1;ccache"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null
ninja -C build "$@"
