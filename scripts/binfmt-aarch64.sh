#!/usr/bin/env bash
# Lets this x86_64 host run aarch64 binaries through qemu-user-static: mounts binfmt_misc
# and registers Debian's qemu-aarch64 entry (flag F: the interpreter is opened now, so it
# works inside chroots too). Safe to run again; silent when nothing needed doing. Fails loudly with the fix when it cannot.
set -euo pipefail
binfmt=/proc/sys/fs/binfmt_misc
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
if [ ! -f "$conf" ]; then
  echo "binfmt-aarch64: $conf missing. Fix: apt-get install qemu-user-static" >&2
  exit 1
fi
if [ ! -e "$binfmt/register" ]; then
  if ! mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null; then
    echo "binfmt-aarch64: cannot mount binfmt_misc at $binfmt (needs root, or a container" \
      "started with it available). Fix: run 'mount -t binfmt_misc binfmt_misc $binfmt' as" \
      "root on the host, then 'cat $conf > $binfmt/register'" >&2
    exit 1
  fi
fi
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  echo "binfmt-aarch64: registering $conf"
  if ! cat "$conf" >"$binfmt/register" 2>/dev/null; then
    echo "binfmt-aarch64: cannot register $conf in $binfmt/register. Fix: as root," \
      "'cat $conf > $binfmt/register'" >&2
    exit 1
  fi
fi
if ! grep -q '^enabled' "$binfmt/qemu-aarch64"; then
  echo "binfmt-aarch64: qemu-aarch64 is registered but disabled. Fix: echo 1 >" \
    "$binfmt/qemu-aarch64" >&2
  exit 1
fi
