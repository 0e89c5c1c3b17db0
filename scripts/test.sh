#!/usr/bin/env bash
# README command (b): install, build and run the whole test suite: unit and integration
# tests under ctest, then each libFuzzer target for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
# The test suite's own dependencies (Chromium, the tools venv, torch), then the build.
bash scripts/install-test-deps.sh
bash scripts/build.sh
# The lock annotations GCC ignores, checked by clang (-Wthread-safety -Werror).
python3 scripts/thread-safety.py build
# One library per libfarm folder, linking exactly what its files include; no cycles.
python3 scripts/check-libfarm-deps.py
# aarch64 binaries for the emulated ARM64 hosts of arm64_test (and the arm64 root they run in).
bash scripts/cross-build-aarch64.sh
(cd build && ctest -j2 --output-on-failure --timeout 600)
bash scripts/fuzz.sh "${FARM_FUZZ_SECONDS:-15}"
