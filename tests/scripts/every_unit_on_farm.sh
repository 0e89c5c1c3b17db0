#!/usr/bin/env bash
# Every C++ translation unit of this repository's own build, compiled through farm-cc on a
# local farm of 2 sandboxed workers and again with the local compiler, with the build's own
# flags (RelWithDebInfo: -O2 -g, -MD -MT -MF, -Werror and the rest), in the build's own
# directory: each object, dependency file and diagnostic output must be byte-identical
# (issue 25). Strict mode: a unit that would compile on this host fails the check, naming why.
#
# Not part of .ci/run: on 2 cores it compiles the whole tree twice (about 40 minutes). Run it
# after `bash scripts/build.sh` (the build dir must be configured; generated sources must exist):
#   bash tests/scripts/every_unit_on_farm.sh
# Environment: FARM_CHECK_BUILD_DIR (default build), FARM_CHECK_JOBS (default cores + 2),
# FARM_CHECK_ONLY (a regex: only the units whose source matches), FARM_CHECK_KEEP=1 (keep the
# work dir: each unit's outputs and diagnostics).
set -euo pipefail
cd "$(dirname "$0")/../.."

build_dir="${FARM_CHECK_BUILD_DIR:-build}"
jobs="${FARM_CHECK_JOBS:-$(($(nproc) + 2))}"
die() {
  echo "every-unit-on-farm: $*" >&2
  exit 1
}
[ -f "$build_dir/build.ninja" ] ||
  die "$build_dir is not a configured build tree. Fix: bash scripts/build.sh"
command -v bwrap >/dev/null || die "bwrap is missing. Fix: bash scripts/install-test-deps.sh"
# The generated sources (protobuf, gRPC) must exist for their units to compile.
ninja -C "$build_dir" farm-cc farmctl farm-coordinator farm-worker >/dev/null
bin="$(cd "$build_dir/bin" && pwd)"

work="$(mktemp -d /var/tmp/every-unit-on-farm-XXXXXX)"
export XDG_STATE_HOME="$work/state"  # a local farm of our own
cleanup() {
  "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true
  if [ "${FARM_CHECK_KEEP:-0}" = 1 ]; then echo "work dir kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
"$bin/farmctl" up --workers 2 --slots 1 --data-dir "$work/farm" --listen 127.0.0.1:0 \
  --http-listen "" >"$work/farm-up.log" 2>&1 || {
  cat "$work/farm-up.log" >&2
  die "farmctl up failed"
}
export FARM_DIR="$work/farm" FARM_CC_STRICT=1 FARM_CC_CACHE_DIR="$work/farm-cc-cache" \
  FARM_BUILD_ID=every-unit-on-farm
"$bin/farmctl" workers | grep -q yes ||
  die "the local farm's workers do not sandbox, so they take no farm-cc compile." \
    "Fix: make bwrap run here (docs/security.md#sandboxed-actions)"

ninja -C "$build_dir" -t compdb >"$work/compdb.json"
rc=0
(python3 - "$work" "$bin/farm-cc" "$jobs" "${FARM_CHECK_ONLY:-}" <<'EOF'
import concurrent.futures, json, os, re, shlex, subprocess, sys, time

work, farm_cc, jobs, only = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
units = []
for e in json.load(open(os.path.join(work, "compdb.json"))):
    argv = shlex.split(e["command"])
    if "-c" not in argv or not e["file"].endswith((".c", ".cc", ".cpp", ".cxx")):
        continue
    if only and not re.search(only, e["file"]):
        continue
    # The build's launcher (env ... ccache) is not the compile: from the compiler on.
    while argv and os.path.basename(argv[0]) in ("env", "ccache") or (argv and "=" in argv[0]):
        argv.pop(0)
    units.append((e["directory"], argv, e["file"]))
print(f"every-unit-on-farm: {len(units)} units, {jobs} at a time", flush=True)

def outputs_to(argv, where):
    """argv with -o and -MF into `where`; -MT keeps the target, so the depfile's text is the build's."""
    out, named = list(argv), {}
    for flag in ("-o", "-MF"):
        i = out.index(flag) if flag in out else -1
        if i >= 0:
            named[flag] = os.path.join(where, flag.strip("-") + "." + os.path.basename(out[i + 1]))
            out[i + 1] = named[flag]
    return out, named

def check(n, unit):
    cwd, argv, source = unit
    here = os.path.join(work, "units", str(n))
    results = {}
    for kind, prefix in (("farm", [farm_cc]), ("local", [])):
        d = os.path.join(here, kind)
        os.makedirs(d)
        a, named = outputs_to(argv, d)
        r = subprocess.run(prefix + a, cwd=cwd, capture_output=True)
        results[kind] = (r, {k: open(p, "rb").read() if os.path.exists(p) else None for k, p in named.items()})
    (fr, fo), (lr, lo) = results["farm"], results["local"]
    problems = []
    if fr.returncode != 0 or lr.returncode != 0:
        problems.append(f"exit {fr.returncode} (farm-cc) / {lr.returncode} (local): "
                        + (fr.stderr.decode(errors="replace").strip().splitlines() or [""])[-1])
    for k in fo:
        if fo[k] is None or fo[k] != lo.get(k):
            problems.append(f"{'object' if k == '-o' else 'dependency file'} differs")
    if fr.stderr != lr.stderr or fr.stdout != lr.stdout:
        problems.append("diagnostics differ")
    return source, problems

t0 = time.time()
bad = []
with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
    for done, (source, problems) in enumerate(pool.map(lambda p: check(*p), enumerate(units)), 1):
        if problems:
            bad.append((source, problems))
            print(f"  DIFFERS {source}: {'; '.join(problems)}", flush=True)
        if done % 50 == 0:
            print(f"  {done}/{len(units)} checked, {time.time() - t0:.0f} s", flush=True)
same = len(units) - len(bad)
print(f"every-unit-on-farm: {same} of {len(units)} units byte-identical (object, dependency file,"
      f" diagnostics) to the local compile, in {time.time() - t0:.0f} s")
sys.exit(1 if bad or not units else 0)
EOF
) || rc=$?
echo "what ran where: $("$bin/farmctl" build every-unit-on-farm | grep '^host cc')"
exit "$rc"
