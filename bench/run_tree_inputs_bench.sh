#!/usr/bin/env bash
# What a compile with a PyTorch-sized header closure sends (issue 45, item 5): torch 2.9.1's
# <torch/extension.h> unit (~5,600 headers) and its <ATen/ATen.h> unit (bench/torch_units.sh)
# through farm-cc on a local farm of 2 sandboxed workers, cold and warm, each call with its own
# -D salt so no cache answers: the time farm-cc spent finding the inputs and sending them, and
# the bytes it sent by farm-cc's own account (FARM_CC_LOG=debug): the digests it asked the CAS
# about, the tree blobs (the input tree as directories by digest) and files it uploaded, and
# the size the same tree has as one flat blob, as the farm sent it before.
#
# Runs, in this order, on one fresh farm and an empty farm-cc cache:
#   cold            ext.cpp: the toolchain, every header and every directory sent
#   same unit       ext.cpp again
#   another unit    aten.cpp: the same headers, most of them, from the same directories
#   another tree    ext.cpp copied to another directory (a second checkout)
# Environment: FARM_BENCH_BUILD_DIR (default build), FARM_BENCH_KEEP=1 keeps the work dir.
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  echo "error: $*" >&2
  exit 1
}

source bench/loopback_peers.sh
source bench/torch_units.sh
bash scripts/apt-ensure.sh tree-inputs-bench bubblewrap g++
build_dir="${FARM_BENCH_BUILD_DIR:-build}"
farm_bench_start tree-inputs-bench "$build_dir"
cleanup() {
  set +e
  farm_bench_finish
}
trap cleanup EXIT

local_farm_up "$work/farm" "$bin"
mkdir -p "$work/a" "$work/b"
torch_units_write "$work/a"
cp "$work/a/ext.cpp" "$work/b/ext.cpp"
export FARM_CC_CACHE_DIR="$work/farm-cc-cache" FARM_BUILD_ID=tree-inputs-bench FARM_CC_LOG=debug
export FARM_CC_STRICT=1 # a compile that ran locally would measure nothing

run() {
  local name=$1 dir=$2 unit=$3 salt=$4 start end
  start=$(date +%s.%N)
  (cd "$dir" && "$bin/farm-cc" g++ "${torch_unit_flags[@]}" -DFARM_TREE_BENCH_SALT="$salt" \
    -o "$work/$name.o" -c "$unit") 2>"$work/$name.log" ||
    die "$name: farm-cc failed; its output: $(cat "$work/$name.log")"
  end=$(date +%s.%N)
  echo "$name	$(python3 -c "print(f'{$end - $start:.2f}')")	$work/$name.log"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
{
  run cold "$work/a" ext.cpp 1
  run same-unit "$work/a" ext.cpp 2
  run another-unit "$work/a" aten.cpp 3
  run another-tree "$work/b" ext.cpp 4
} >"$work/runs.tsv"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/runs.tsv" <<'PY'
import re, sys
print(f"{'run':<13} {'wall s':>7} {'inputs s':>8} {'upload s':>8} {'entries':>8} {'blobs':>6} "
      f"{'flat':>10} {'asked':>18} {'tree blobs sent':>17} {'files sent':>17} {'toolchain':>10}")
for line in open(sys.argv[1]):
    name, wall, log = line.rstrip("\n").split("\t")
    text = open(log).read()
    sent = re.search(r"a tree of (\d+) entries in (\d+) blobs \(([^)]+) flat\); asked about "
                     r"(\d+) blobs \(([^)]+)\); sent (\d+) tree blobs \(([^)]+)\), (\d+) files "
                     r"\(([^)]+)\) and the toolchain \(([^)]+)\)", text)
    times = re.search(r"(?:includes read|scan|kept scan) and input tree ([\d.]+) s.*"
                      r"upload ([\d.]+) s", text)
    if not sent or not times:
        sys.exit(f"{name}: farm-cc's debug lines are not there; its output:\n{text}")
    entries, blobs, flat, asked, asked_b, tsent, tbytes, files, fbytes, tool = sent.groups()
    print(f"{name:<13} {wall:>7} {times.group(1):>8} {times.group(2):>8} {entries:>8} {blobs:>6} "
          f"{flat:>10} {asked + ' (' + asked_b + ')':>18} {tsent + ' (' + tbytes + ')':>17} "
          f"{files + ' (' + fbytes + ')':>17} {tool:>10}")
PY
