#!/usr/bin/env bash
# README command (b): install, build and run the whole test suite (unit + integration).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest -j2 --output-on-failure --timeout 600
