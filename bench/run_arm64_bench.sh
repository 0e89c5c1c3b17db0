#!/usr/bin/env bash
# ARM64 build host benchmarks, on an emulated ARM64 build host (qemu-user,
# scripts/arm64-host.sh) beside x86_64 workers. Each variant gets a fresh farm and a fresh host
# directory (no action cache, no compile cache, a new build environment).
#
#   bench/run_arm64_bench.sh [demo]        the demo's aarch64 wheel (farmctl submit demo-0.1.0
#       --archs "7.5;9.0;12.1" --cpu-arch aarch64 --wait), its device compiles run
#         (a) only on that aarch64 host's own worker, or
#         (b) on two x86_64 workers as well (same toolkit release, any CPU);
#       prints both wall times and the ratio b/a. The real-world shape: a slow ARM build host
#       helped by a bigger fleet.
#   bench/run_arm64_bench.sh bitsandbytes  a real package (issue 44 item 6): bitsandbytes
#       0.50.1 (tests/data/sources) for "7.5;9.0;12.1" on the emulated aarch64 build host with
#       two x86_64 workers, then the same source on x86_64; prints each build's wall time,
#       calls, wheel and device code per arch. The aarch64 host's toolkit carries cuBLAS
#       (farmctl toolkit install --libraries cublas), which bitsandbytes links.
#
# Needs scripts/cross-build-aarch64.sh's binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
package="${1:-demo}"
case "$package" in
  demo | bitsandbytes) ;;
  *) echo "usage: bench/run_arm64_bench.sh [demo|bitsandbytes]" >&2; exit 2 ;;
esac
ninja -C build farm-nvcc farmctl farm-coordinator farm-worker >/dev/null
if [ ! -x build-aarch64/bin/farm-worker ]; then
  echo "run_arm64_bench: no aarch64 binaries. Fix: bash scripts/cross-build-aarch64.sh" >&2
  exit 1
fi
bin="$PWD/build/bin"
release=13.0.88
# bitsandbytes links cuBLAS: its host's toolkit carries it, in a prefix of its own.
libraries=()
toolkit="$HOME/.cache/wheelfarm/toolkits/$release-aarch64"
if [ "$package" = bitsandbytes ]; then
  libraries=(--libraries cublas)
  toolkit="$toolkit-cublas"
fi
"$bin/farmctl" toolkit install "$release" --arch aarch64 "${libraries[@]}" --prefix "$toolkit" \
  >/dev/null
work="$(mktemp -d /tmp/arm64-bench-XXXXXX)"
host_pid=""
cleanup() {
  [ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null || true
  "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export XDG_STATE_HOME="$work/state"

# farm X86_WORKERS: a fresh farm with that many x86_64 workers plus the emulated aarch64
# worker "arm1" (--no-sandbox, as the tests' emulated workers: Debian's aarch64 bwrap cannot
# run under qemu-user, scripts/arm64-host.sh); sets address and token.
farm() {
  local x86="$1"
  [ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null && wait "$host_pid" 2>/dev/null || true
  "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true
  rm -rf "$work/farm" "$work/host"
  "$bin/farmctl" up --workers "$x86" --slots 1 --data-dir "$work/farm" --listen 127.0.0.1:0 \
    --http-listen 127.0.0.1:0 >/dev/null
  address="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["grpc"])' \
    "$work/farm/farm.json")"
  token="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token_file"])' \
    "$work/farm/farm.json")"
  mkdir -p "$work/host"
  cp "$token" "$work/host/token"
  bash scripts/arm64-host.sh "$work/host" --toolkit "$toolkit" -- \
    /opt/wheelfarm/bin/farm-worker --coordinator "$address" --token-file /host/token \
    --name arm1 --work-dir /host/arm1 --cuda-path /opt/cuda --slots 1 --no-sandbox \
    >"$work/arm1.log" 2>&1 &
  host_pid=$!
  for _ in $(seq 1 180); do
    if "$bin/farmctl" --coordinator "$address" --token-file "$token" workers 2>/dev/null |
      grep -q "^arm1 .*online"; then break; fi
    sleep 1
  done
}

# submit NAME ARGS...: a timed `farmctl submit ARGS --wait`; its wall time goes to results.
submit() {
  local name="$1" start end
  shift
  start="$(date +%s.%N)"
  "$bin/farmctl" --coordinator "$address" --token-file "$token" submit "$@" --wait \
    >"$work/submit-$name.log" 2>&1 || {
    echo "run_arm64_bench: $name failed:" >&2
    cat "$work/submit-$name.log" "$work/arm1.log" >&2
    exit 1
  }
  end="$(date +%s.%N)"
  echo "$name $(python3 -c "print(round($end - $start, 1))")" >>"$work/results"
}

if [ "$package" = demo ]; then
  for variant in "arm-only 0" "arm-plus-2-x86 2"; do
    set -- $variant
    farm "$2"
    submit "$1" demo-0.1.0 --archs "7.5;9.0;12.1" --cpu-arch aarch64
    grep -E "^sm_|nvcc " "$work/submit-$1.log" | sed "s/^/  $1: /" >&2 || true
  done
  echo "arm64 bench: demo-0.1.0 aarch64 wheel, archs 7.5;9.0;12.1, emulated ARM64 build host," \
    "$(nproc) cores"
  python3 - "$work/results" <<'PY'
import sys
rows = dict(line.split() for line in open(sys.argv[1]))
a, b = float(rows["arm-only"]), float(rows["arm-plus-2-x86"])
print(f"(a) device compiles on the aarch64 host only : {a:7.1f} s")
print(f"(b) ... and on 2 x86_64 workers             : {b:7.1f} s")
print(f"ratio b/a                                    : {b / a:7.2f}")
PY
  exit 0
fi

# bitsandbytes: a checkout of its tag (the snapshot unpacked; an archive source is built
# without network, which needs a sandboxed build host, and arm1 runs without one). Debian 12's
# glibc and Python on every host (the recipe asks 2.35 and 3.10).
tar -C "$work" -xzf tests/data/sources/bitsandbytes-0.50.1-src.tar.gz
farm 2
echo "arm64 bench: bitsandbytes-0.50.1, archs 7.5;9.0;12.1, emulated ARM64 build host arm1" \
  "and 2 x86_64 workers, $(nproc) cores"
for cpu in aarch64 x86_64; do
  submit "$cpu" bitsandbytes-0.50.1 --archs "7.5;9.0;12.1" --cpu-arch "$cpu" \
    --glibc-max 2.36 --python 3.11 --source "bitsandbytes=$work/bitsandbytes-0.50.1"
  id="$(sed -n 's/^submitted build //p' "$work/submit-$cpu.log" | head -1)"
  "$bin/farmctl" --coordinator "$address" --token-file "$token" build "$id" >"$work/build-$cpu.txt"
  sha="$("$bin/farmctl" --coordinator "$address" --token-file "$token" --json build "$id" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["wheel"]["sha256"])')"
  "$bin/farmctl" --coordinator "$address" --token-file "$token" cas get "$sha" \
    -o "$work/$cpu.whl" >/dev/null
  echo "== $cpu: $(grep "^$cpu " "$work/results" | cut -d' ' -f2) s"
  grep -E "^(build host|nvcc|host cc|wheel) " "$work/build-$cpu.txt" | sed 's/^/  /'
  "$bin/farmctl" inspect "$work/$cpu.whl" | sed 's/^/  /'
done
