#!/usr/bin/env bash
# Installs dependencies (idempotent), configures and builds everything into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# ccache (cache under ~/.cache/ccache, outside the clone) makes rebuilds of a fresh clone cheap.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
ninja -C build
