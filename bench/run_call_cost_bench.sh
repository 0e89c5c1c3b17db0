#!/usr/bin/env bash
# What a remote compile adds to the compile itself, on an idle local farm (issue 45): this
# repository's own units (libfarm's, from the build tree's compile_commands.json), one call at
# a time, by plain g++, through farm-cc (a local farm of 2 sandboxed workers, 1 slot each)
# and through distcc 3.4 (two distccd on loopback, 1 job each), round after round
# (bench/call_cost.py). Prints the median and 90th percentile of the time each tool adds over
# plain g++'s compile of the same unit in the same round, farm-cc's own account of where its
# calls' time went (`farmctl build`), and how often the workers checked the toolchain.
#
# One 2-core machine: the farm and distccd share the build host's cores, so this measures
# what a call costs beyond its compile, not speed-up.
#
# Environment:
#   FARM_BENCH_UNITS    units (default 20)
#   FARM_BENCH_ROUNDS   rounds (default 3)
#   FARM_BENCH_BUILD_DIR  the CMake build dir: the farm's binaries and compile_commands.json
#                       (default build)
#   FARM_BENCH_KEEP=1   keep the work dir (samples, logs) and print where it is
# Installs Debian's distcc and bubblewrap (scripts/apt-ensure.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

die() {
  echo "error: $*" >&2
  exit 1
}

source bench/loopback_peers.sh
bash scripts/apt-ensure.sh call-cost-bench distcc bubblewrap g++ ninja-build
for tool in distcc distccd bwrap g++; do
  command -v "$tool" >/dev/null || die "$tool is missing after the install step. Fix: apt-get install distcc bubblewrap g++"
done
build_dir="${FARM_BENCH_BUILD_DIR:-build}"
[ -f "$build_dir/compile_commands.json" ] ||
  die "$build_dir has no compile_commands.json. Fix: bash scripts/build.sh (or set FARM_BENCH_BUILD_DIR)"
farm_bench_start call-cost-bench "$build_dir"
cleanup() {
  set +e
  for f in "$work"/distcc/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  farm_bench_finish
}
trap cleanup EXIT

local_farm_up "$work/farm" "$bin"
export FARM_CC_CACHE_DIR="$work/farm-cc-cache" FARM_BUILD_ID=call-cost-bench
distccd_up "$work/distcc"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/call_cost.py --compile-commands "$build_dir/compile_commands.json" --repo "$repo" \
  --units "${FARM_BENCH_UNITS:-20}" --rounds "${FARM_BENCH_ROUNDS:-3}" --farm-cc "$bin/farm-cc" \
  --out-dir "$work/objects" --distcc-hosts "127.0.0.1:36321/1 127.0.0.1:36322/1" \
  --distcc-dir "$work/distcc/client" --samples "$work/samples.jsonl"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "farm-cc's calls by its own account (farmctl build $FARM_BUILD_ID):"
"$bin/farmctl" build "$FARM_BUILD_ID" | grep -E '^(host cc|time) |^  +(slowest| ) '
"$bin/farmctl" --json build "$FARM_BUILD_ID" | python3 -c '
import json, sys
t = json.load(sys.stdin)["host_compiles"]["times"]
n = int(t["calls"])
per = ", ".join(f"{k} {v / n * 1000:.0f} ms" for k, v in t["phases"].items() if v / n >= 0.0005)
wall = t["wall_seconds"] / n * 1000
print(f"per call on average ({n} calls, the warm-up included): {wall:.0f} ms: {per}")
'
checks="$(cat "$work"/farm/logs/worker-*.log | grep -c 'runs here:' || true)"
echo "toolchain checks on the workers: $checks (for $(grep -c . "$work/samples.jsonl") counted calls and the warm-up)"
echo "distcc: $(cat "$work"/distcc/d*.log | grep -c 'COMPILE_OK') compiles on the two distccd"
