#!/usr/bin/env bash
# Runs a command on an emulated ARM64 host: inside the cached arm64 Debian root
# (scripts/arm64-root.sh) under bubblewrap, every aarch64 binary through qemu-user (binfmt).
# Used by the test suite and bench/ to start aarch64 farm-workers and to install and run
# the wheels they build. Never used on real hosts.
#
#   arm64-host.sh HOST_DIR [--toolkit DIR] [--bin DIR] -- COMMAND [ARGS...]
#
# Inside: the root read-only; HOST_DIR (made if missing) writable at /host, with HOME at
# /host/home, /tmp at /host/tmp and /var/tmp at /host/var-tmp, so hosts started side by
# side share nothing; --bin DIR (aarch64 binaries, default build-aarch64/bin) at
# /opt/wheelfarm/bin; --toolkit DIR (an aarch64 CUDA toolkit, e.g. from `farmctl toolkit
# install --arch aarch64`) at /opt/cuda; the machine's network (loopback reaches the
# coordinator), DNS and CA bundle. A clean environment and its own PID namespace: the
# command and everything it started die with the caller.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
usage="usage: arm64-host.sh HOST_DIR [--toolkit DIR] [--bin DIR] -- COMMAND [ARGS...]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
host_dir="$1"
shift
bin_dir="$here/../build-aarch64/bin"
toolkit=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --toolkit) toolkit="$2"; shift 2 ;;
    --bin) bin_dir="$2"; shift 2 ;;
    *) echo "arm64-host: unknown option $1. $usage" >&2; exit 2 ;;
  esac
done
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }

if ! command -v bwrap >/dev/null; then
  echo "arm64-host: bwrap not found. Fix: apt-get install bubblewrap" >&2
  exit 1
fi
root="$(bash "$here/arm64-root.sh")"
if [ ! -x "$bin_dir/farm-worker" ]; then
  echo "arm64-host: no aarch64 farm-worker in $bin_dir. Fix: bash scripts/cross-build-aarch64.sh" >&2
  exit 1
fi
mkdir -p "$host_dir/home" "$host_dir/tmp" "$host_dir/var-tmp"
args=(
  --ro-bind "$root" /
  --proc /proc --dev /dev
  --bind "$(cd "$host_dir" && pwd)" /host
  --bind "$(cd "$host_dir/tmp" && pwd)" /tmp
  --bind "$(cd "$host_dir/var-tmp" && pwd)" /var/tmp
  --ro-bind "$(cd "$bin_dir" && pwd)" /opt/wheelfarm/bin
  --ro-bind /etc/resolv.conf /etc/resolv.conf
  --ro-bind /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
  --clearenv
  --setenv HOME /host/home
  --setenv LANG C.UTF-8
  --setenv PATH /opt/wheelfarm/bin:/usr/local/bin:/usr/bin:/bin
  --unshare-pid --die-with-parent
)
if [ -n "$toolkit" ]; then
  args+=(--ro-bind "$(cd "$toolkit" && pwd)" /opt/cuda)
fi
exec bwrap "${args[@]}" "$@"
