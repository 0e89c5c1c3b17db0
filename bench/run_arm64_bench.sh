#!/usr/bin/env bash
# ARM64 build host benchmark: the demo's aarch64 wheel (farmctl submit demo-0.1.0 --archs
# "7.5;9.0;12.1" --cpu-arch aarch64 --wait) on an emulated ARM64 build host (qemu-user,
# scripts/arm64-host.sh) whose device compiles run
#   (a) only on that aarch64 host's own worker, or
#   (b) on two x86_64 workers as well (same toolkit release, any CPU).
# Each variant gets a fresh farm and a fresh host directory (no action cache, no compile
# cache, a new build environment), so both pay the same fixed costs. Prints both wall times
# and the ratio b/a from this run. The real-world shape: a slow ARM build host helped by a
# bigger fleet.
# Usage: bench/run_arm64_bench.sh   (needs scripts/cross-build-aarch64.sh's binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build farm-nvcc farmctl farm-coordinator farm-worker >/dev/null
if [ ! -x build-aarch64/bin/farm-worker ]; then
  echo "run_arm64_bench: no aarch64 binaries. Fix: bash scripts/cross-build-aarch64.sh" >&2
  exit 1
fi
bin="$PWD/build/bin"
release=13.0.88
toolkit="$HOME/.cache/wheelfarm/toolkits/$release-aarch64"
"$bin/farmctl" toolkit install "$release" --arch aarch64 --prefix "$toolkit" >/dev/null
work="$(mktemp -d /tmp/arm64-bench-XXXXXX)"
host_pid=""
cleanup() {
  [ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null || true
  "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export XDG_STATE_HOME="$work/state"

# variant NAME X86_WORKERS: a fresh farm with that many x86_64 workers plus the emulated
# aarch64 worker "arm1", then the timed submit.
variant() {
  local name="$1" x86="$2"
  [ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null && wait "$host_pid" 2>/dev/null || true
  "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1 || true
  rm -rf "$work/farm" "$work/host"
  "$bin/farmctl" up --workers "$x86" --slots 1 --data-dir "$work/farm" --listen 127.0.0.1:0 \
    --http-listen 127.0.0.1:0 >/dev/null
  local address token
  address="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["grpc"])' \
    "$work/farm/farm.json")"
  token="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token_file"])' \
    "$work/farm/farm.json")"
  mkdir -p "$work/host"
  cp "$token" "$work/host/token"
  bash scripts/arm64-host.sh "$work/host" --toolkit "$toolkit" -- \
    /opt/wheelfarm/bin/farm-worker --coordinator "$address" --token-file /host/token \
    --name arm1 --work-dir /host/arm1 --cuda-path /opt/cuda --slots 1 \
    >"$work/arm1-$name.log" 2>&1 &
  host_pid=$!
  for _ in $(seq 1 180); do
    if "$bin/farmctl" --coordinator "$address" --token-file "$token" workers 2>/dev/null |
      grep -q "^arm1 .*online"; then break; fi
    sleep 1
  done
  local start end
  start="$(date +%s.%N)"
  "$bin/farmctl" --coordinator "$address" --token-file "$token" submit demo-0.1.0 \
    --archs "7.5;9.0;12.1" --cpu-arch aarch64 --wait >"$work/submit-$name.log" 2>&1 || {
    echo "run_arm64_bench: $name failed:" >&2
    cat "$work/submit-$name.log" "$work/arm1-$name.log" >&2
    exit 1
  }
  end="$(date +%s.%N)"
  grep -E "^sm_|nvcc " "$work/submit-$name.log" | sed "s/^/  $name: /" >&2 || true
  echo "$name $(python3 -c "print(round($end - $start, 1))")" >>"$work/results"
}

variant arm-only 0
variant arm-plus-2-x86 2

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
