#!/usr/bin/env bash
# README command (b): install, build and run the whole test suite: unit and integration
# tests under ctest, then each libFuzzer target for a bounded time. Ends with where the time
# went: each step, and the slowest tests (also when a step fails).
set -euo pipefail
cd "$(dirname "$0")/.."
log_dir="build/test-times"
steps=()
started=$(date +%s)
# Free disk where the tests write (their temp dirs, pip's and the workers' caches), sampled
# every 10 s: the real builds need several GB each, and a full disk fails them mid-install.
mkdir -p "$log_dir"
df -Pk "${TMPDIR:-/tmp}" | awk 'NR==2 {print $4}' >"$log_dir/disk-free.log"
(while sleep 10; do df -Pk "${TMPDIR:-/tmp}" | awk 'NR==2 {print $4}'; done >>"$log_dir/disk-free.log") &
disk_sampler=$!

# Runs a step and notes its wall time.
step() {
  local name="$1"
  shift
  local t0
  t0=$(date +%s)
  "$@"
  steps+=("$(printf '%-24s %6ss' "$name" "$(($(date +%s) - t0))")")
}

split() {
  local rc=$?
  # A report: head closing its pipe early must not fail the run.
  set +e +o pipefail
  echo
  kill "$disk_sampler" 2>/dev/null
  echo "== time split ($(($(date +%s) - started)) s in all)"
  printf '%s\n' "${steps[@]}"
  awk 'NR==1 {first=$1; low=$1} $1<low {low=$1} END {printf "disk free %.1f GiB at the start, %.1f GiB at the lowest\n", first/1048576, low/1048576}' \
    "$log_dir/disk-free.log"
  if [ -f "$log_dir/ctest.log" ]; then
    echo "-- slowest tests"
    # ctest's lines: "  7/952 Test  #12: suite.Name ......   Passed   34.56 sec"
    sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+ *[^0-9]*([0-9.]+) sec$/\2 \1/p' \
      "$log_dir/ctest.log" | sort -rn | head -15 | awk '{printf "%8.1fs  %s\n", $1, $2}'
    echo "-- test time by suite (summed over cases; ctest runs two at once)"
    sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ .]+)\.[^ ]* \.+ *[^0-9]*([0-9.]+) sec$/\2 \1/p' \
      "$log_dir/ctest.log" | awk '{t[$2]+=$1} END {for (s in t) printf "%8.1fs  %s\n", t[s], s}' |
      sort -rn | head -15
    if grep -qE '^[0-9]+% tests passed, [1-9][0-9]* tests failed' "$log_dir/ctest.log"; then
      # Last, so that a report showing only the end of the run still says why.
      echo "-- what the failed tests said first (their whole output is above)"
      grep -E -A7 ': Failure$|\*\*\*(Exception|Timeout)|Segmentation fault' "$log_dir/ctest.log" |
        cut -c1-300 | head -60
    fi
  fi
  return $rc
}
trap split EXIT

# The test suite's own dependencies (Chromium, the tools venv, torch), then the build.
step install bash scripts/install-test-deps.sh
step build bash scripts/build.sh
# The lock annotations GCC ignores, checked by clang (-Wthread-safety -Werror).
step thread-safety python3 scripts/thread-safety.py build
# One library per libfarm folder, linking exactly what its files include; no cycles.
step libfarm-deps python3 scripts/check-libfarm-deps.py
# aarch64 binaries for the emulated ARM64 hosts of arm64_test (and the arm64 root they run in).
step cross-build bash scripts/cross-build-aarch64.sh
step ctest bash -c "cd build && ctest -j2 --output-on-failure --timeout 600 | tee test-times/ctest.log; exit \${PIPESTATUS[0]}"
step fuzz bash scripts/fuzz.sh "${FARM_FUZZ_SECONDS:-15}"
