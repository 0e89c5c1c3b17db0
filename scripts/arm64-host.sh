#!/usr/bin/env bash
# Runs a command on an emulated ARM64 host: inside the cached arm64 Debian root
# (scripts/arm64-root.sh) under bubblewrap, every aarch64 binary through qemu-user (binfmt).
# Used by the test suite and bench/ to start aarch64 farm-workers and to install and run
# the wheels they build. Never used on real hosts.
#
#   arm64-host.sh HOST_DIR [--toolkit DIR] [--bin DIR] [--nested-sandbox] -- COMMAND [ARGS...]
#
# Inside: the root read-only; HOST_DIR (made if missing) writable at /host, with HOME at
# /host/home, /tmp at /host/tmp and /var/tmp at /host/var-tmp, so hosts started side by
# side share nothing; --bin DIR (aarch64 binaries, default build-aarch64/bin) at
# /opt/wheelfarm/bin; --toolkit DIR (an aarch64 CUDA toolkit, e.g. from `farmctl toolkit
# install --arch aarch64`) at /opt/cuda; the machine's network (loopback reaches the
# coordinator), DNS and CA bundle. A clean environment and its own PID namespace: the
# command and everything it started die with the caller.
#
# --nested-sandbox lets a farm-worker inside sandbox its actions (filesystem image actions,
# farm-cc's compiles, need that). Two things stand in the way, both measured:
#  - Debian's aarch64 bwrap cannot run under qemu-user: qemu 7.2's clone() emulation
#    refuses namespace flags itself (QEMU_STRACE shows clone(CLONE_NEWNS|SIGCHLD) = EINVAL;
#    the kernel never sees the call, and unshare(2), which qemu passes through, works). So
#    this machine's x86_64 bwrap, with its loader and libraries, is put first on PATH
#    (/opt/native-bwrap/bin): only the sandbox tool is native; what it runs stays aarch64
#    under qemu (binfmt's F flag reaches into every mount namespace), as a real aarch64
#    host's own bwrap would run it.
#  - The kernel mounts a nested sandbox's /proc in a user namespace only when every /proc
#    already mounted is fully visible; bwrap's --proc covers /proc/sys and others read-only
#    ("Can't mount proc on /newroot/proc: Operation not permitted"). The command gets a
#    /proc of its own PID namespace mounted plainly (by unshare(1): needs root), /proc/sys
#    included. For test hosts only.
# On an emulated host a process's command line starts with its loader (this bwrap's) or
# qemu's binfmt interpreter (every aarch64 program's), so a restarted worker's sweep of
# stale sandboxes, which looks for processes named bwrap, finds none there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
usage="usage: arm64-host.sh HOST_DIR [--toolkit DIR] [--bin DIR] [--nested-sandbox] -- COMMAND [ARGS...]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
host_dir="$1"
shift
bin_dir="$here/../build-aarch64/bin"
toolkit=""
nested_sandbox=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --toolkit) toolkit="$2"; shift 2 ;;
    --bin) bin_dir="$2"; shift 2 ;;
    --nested-sandbox) nested_sandbox=1; shift ;;
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
path=/opt/wheelfarm/bin:/usr/local/bin:/usr/bin:/bin
args=(
  --ro-bind "$root" /
  --dev /dev
  --bind "$(cd "$host_dir" && pwd)" /host
  --bind "$(cd "$host_dir/tmp" && pwd)" /tmp
  --bind "$(cd "$host_dir/var-tmp" && pwd)" /var/tmp
  --ro-bind "$(cd "$bin_dir" && pwd)" /opt/wheelfarm/bin
  --ro-bind /etc/resolv.conf /etc/resolv.conf
  --ro-bind /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
  --clearenv
  --setenv HOME /host/home
  --setenv LANG C.UTF-8
  --die-with-parent
)
if [ -n "$toolkit" ]; then
  args+=(--ro-bind "$(cd "$toolkit" && pwd)" /opt/cuda)
fi
if [ "$nested_sandbox" = 0 ]; then
  exec bwrap "${args[@]}" --setenv PATH "$path" --proc /proc --unshare-pid "$@"
fi

if [ "$(id -u)" != 0 ]; then
  echo "arm64-host: --nested-sandbox mounts a /proc and needs root. Fix: run as root, or start" \
    "the worker inside with --no-sandbox" >&2
  exit 1
fi
# The native bwrap, runnable inside the arm64 root: its loader and libraries beside it, run
# through the loader (the root has no /lib64/ld-linux-x86-64.so.2).
native="$(cd "$host_dir" && pwd)/native-bwrap"
bwrap_bin="$(readlink -f "$(command -v bwrap)")"
rm -rf "$native"
mkdir -p "$native/bin" "$native/lib"
cp "$bwrap_bin" "$native/lib/bwrap"
loader=""
while read -r line; do
  case "$line" in
    *"=> /"*) lib="${line#*=> }"; cp -L "${lib%% (*}" "$native/lib/" ;;
    /*) loader="${line%% (*}"; cp -L "$loader" "$native/lib/" ;;
  esac
done < <(ldd "$bwrap_bin")
if [ -z "$loader" ]; then
  echo "arm64-host: ldd $bwrap_bin names no loader" >&2
  exit 1
fi
printf '#!/bin/sh\nexec /opt/native-bwrap/lib/%s --library-path /opt/native-bwrap/lib /opt/native-bwrap/lib/bwrap "$@"\n' \
  "$(basename "$loader")" >"$native/bin/bwrap"
chmod +x "$native/bin/bwrap"
proc_dir="$(cd "$host_dir" && pwd)/proc"
mkdir -p "$proc_dir"
args+=(--ro-bind "$native" /opt/native-bwrap --setenv PATH "/opt/native-bwrap/bin:$path"
  --bind "$proc_dir" /proc)
# A PID namespace whose processes die with the caller (--kill-child), its /proc mounted
# plainly in a mount namespace of its own; bwrap runs as its PID 1 and shows that /proc.
exec unshare --pid --fork --kill-child --mount --propagation private \
  sh -c 'mount -t proc proc "$0" && exec bwrap "$@"' "$proc_dir" "${args[@]}" "$@"
