#!/usr/bin/env bash
# farm-nvcc benchmark: the examples/cuda-kernels library (6 .cu files, CUB-heavy) built for
# 3 archs with plain nvcc, `nvcc --threads 2`, and farm-nvcc through local farms of 1 and 2
# workers, then cached rebuilds: in a new tree (action cache) and after `ninja clean` in the
# same tree (compile cache). Wall and total CPU time (the build and, for the farm,
# the coordinator and workers too) are printed as ratios to plain nvcc from the same run.
#
# Every variant runs the build at `ninja -j1`: one nvcc call at a time, so the only
# parallelism is inside a call (nvcc's threads, or farm-nvcc's per-arch actions).
# Usage: bench/run_nvcc_bench.sh [ARCHS]   (default "75;90;121")
set -euo pipefail
cd "$(dirname "$0")/.."
archs="${1:-75;90;121}"
ninja -C build farm-nvcc farmctl farm-coordinator farm-worker >/dev/null
bin="$PWD/build/bin"
work="$(mktemp -d /tmp/nvcc-bench-XXXXXX)"
trap '"$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
export XDG_STATE_HOME="$work/state"

# Sum of utime+stime (with waited-for children) of the local farm's processes, in seconds.
farm_cpu() {
  python3 - "$work/farm/farm.json" <<'PY'
import json, os, sys
tick = os.sysconf("SC_CLK_TCK")
total = 0
for p in json.load(open(sys.argv[1]))["processes"]:
    try:
        f = open(f"/proc/{p['pid']}/stat").read().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in f[11:15])
    except FileNotFoundError:
        pass
print(total / tick)
PY
}

# build NAME LAUNCHER CUDA_FLAGS [TREE]: configures a fresh tree (or cleans TREE, an earlier
# variant's) and times the build.
build() {
  local name="$1" launcher="$2" flags="$3" tree="$work/tree-${4:-$1}"
  if [ -n "${4:-}" ]; then
    ninja -C "$tree" clean >/dev/null
  else
    cmake -S examples/cuda-kernels -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES="$archs" -DCMAKE_CUDA_FLAGS="$flags" \
      ${launcher:+-DCMAKE_CUDA_COMPILER_LAUNCHER="$launcher"} >/dev/null
  fi
  local before=0
  if [ -f "$work/farm/farm.json" ]; then before="$(farm_cpu)"; fi
  /usr/bin/time -f "%e %U %S" -o "$work/time" ninja -C "$tree" -j1 >"$work/log-$name" 2>&1
  local after=0
  if [ -f "$work/farm/farm.json" ]; then after="$(farm_cpu)"; fi
  read -r wall user sys <"$work/time"
  cpu="$(python3 -c "print($user + $sys + $after - $before)")"
  if grep -q "running plain nvcc" "$work/log-$name"; then
    echo "warning: $name: some calls fell back to plain nvcc:" >&2
    grep "running plain nvcc" "$work/log-$name" | sort | uniq -c >&2
  fi
  echo "$name $wall $cpu" >>"$work/results"
}

start_farm() {
  "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true
  rm -rf "$work/farm"
  "$bin/farmctl" up --workers "$1" --slots 1 --data-dir "$work/farm" --listen 127.0.0.1:0 \
    --http-listen "" >/dev/null
}

build plain "" ""
build threads2 "" "--threads 2"
start_farm 1
build farm-1-worker "$bin/farm-nvcc" ""
start_farm 2
build farm-2-workers "$bin/farm-nvcc" ""
# A new tree: other paths, so only the per-arch action cache answers.
build farm-cached "$bin/farm-nvcc" ""
# The same tree after `ninja clean`: the compile cache restores every object.
build farm-clean-rebuild "$bin/farm-nvcc" "" farm-2-workers

echo "farm-nvcc bench: examples/cuda-kernels, archs $archs, ninja -j1, $(nproc) cores"
python3 - "$work/results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
base = {r[0]: (float(r[1]), float(r[2])) for r in rows}
pw, pc = base["plain"]
print(f"{'variant':<16}{'wall s':>9}{'cpu s':>9}{'wall/plain':>12}{'cpu/plain':>11}")
for name, wall, cpu in rows:
    w, c = float(wall), float(cpu)
    print(f"{name:<16}{w:>9.1f}{c:>9.1f}{w / pw:>12.2f}{c / pc:>11.2f}")
t2 = base["threads2"][0]
print(f"farm-2-workers vs nvcc --threads 2 (wall): {base['farm-2-workers'][0] / t2:.2f}")
PY
