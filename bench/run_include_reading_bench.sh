#!/usr/bin/env bash
# What finding a compile's input files costs the build host, each way farm-cc can
# (docs/farm-cc.md, "Reading the includes instead of scanning"): bench/include_reading_bench
# on torch 2.9.1's two heavy units (<torch/extension.h> and <ATen/ATen.h>, with the flags
# torch.utils.cpp_extension passes) and on the units of this repository's libfarm/cc library
# (the farm_cc target's own, with the build's own lines). For each: the
# compiler's -M scan and its tree against farm-cc reading the includes, CPU and wall seconds
# and files, medians of FARM_BENCH_RUNS (default 3); then the sums over this repo's units.
# Needs torch (scripts/install-torch.sh, run when missing) and a configured build dir
# (FARM_BENCH_BUILD_DIR, default build: bash scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${FARM_BENCH_BUILD_DIR:-build}
runs=${FARM_BENCH_RUNS:-3}
[ -f "$build_dir/build.ninja" ] || {
  echo "error: $build_dir is not a configured build tree. Fix: bash scripts/build.sh" >&2
  exit 1
}
ninja -C "$build_dir" include_reading_bench farm_proto >/dev/null
bench="$(cd "$build_dir/bin" && pwd)/include_reading_bench"

source bench/torch_units.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
torch_units_write "$work"
echo "== torch 2.9.1's units (cpp_extension's flags), medians of $runs"
for unit in ext aten; do
  (cd "$work" && "$bench" --runs "$runs" -- /usr/bin/g++ "${torch_unit_flags[@]}" -c "$unit.cpp" \
    -o "$unit.o")
done

echo "== this repository's libfarm/cc units, the build's own lines, medians of $runs"
ninja -C "$build_dir" -t compdb >"$work/compdb.json"
python3 - "$work/compdb.json" "$bench" "$runs" <<'PY'
import json, os, re, shlex, subprocess, sys

compdb, bench, runs = sys.argv[1], sys.argv[2], sys.argv[3]
sums = {"scan": [0.0, 0.0, 0], "read": [0.0, 0.0, 0]}
units = scanned_only = 0
for e in json.load(open(compdb)):
    if "/farm_cc.dir/" not in e.get("output", e["command"]) or not e["file"].endswith(".cc"):
        continue
    argv = shlex.split(e["command"])
    # The build's launcher (env ... ccache) is not the compile: from the compiler on.
    while argv and (os.path.basename(argv[0]) in ("env", "ccache") or "=" in argv[0]):
        argv.pop(0)
    out = subprocess.run([bench, "--runs", runs, "--"] + argv, cwd=e["directory"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: {e['file']}: {out.stderr.strip()}")
    units += 1
    line = {}
    for kind, key in (("scan + tree", "scan"), ("includes read", "read")):
        m = re.search(re.escape(kind) + r":\s+cpu ([\d.]+) s\s+wall ([\d.]+) s\s+(\d+) files", out.stdout)
        if m:
            line[key] = (float(m.group(1)), float(m.group(2)), int(m.group(3)))
    if "read" not in line:
        scanned_only += 1
        print(out.stdout.rstrip())
        continue
    for key, (cpu, wall, files) in line.items():
        sums[key][0] += cpu; sums[key][1] += wall; sums[key][2] += files
    print(f"  {os.path.relpath(e['file'])}: scan {line['scan'][0]:.3f} s cpu, {line['scan'][2]} files;"
          f" includes read {line['read'][0]:.3f} s cpu, {line['read'][2]} files")
if units == 0:
    sys.exit("error: no unit of libfarm/cc in the build's compile commands. Fix: bash scripts/build.sh")
s, r = sums["scan"], sums["read"]
print(f"== {units} units, {scanned_only} of them only by the scan; over the other {units - scanned_only}:")
print(f"  scan + tree:   cpu {s[0]:.2f} s  wall {s[1]:.2f} s  {s[2]} files")
print(f"  includes read: cpu {r[0]:.2f} s  wall {r[1]:.2f} s  {r[2]} files")
if s[0] > 0:
    print(f"  includes read / scan: cpu {r[0] / s[0]:.2f}, files {r[2] / max(s[2], 1):.2f}")
PY
