#!/usr/bin/env bash
# Makes an arm64 Debian 12 root once and prints its path: the sysroot for the aarch64 cross
# build (scripts/cross-build-aarch64.sh) and the emulated ARM64 hosts of the tests, which
# run under qemu-user inside it. Cached outside the clone, keyed by its package list, so CI
# and later runs reuse it; safe to run again. Also installs qemu-user-static, mmdebstrap
# (and arch-test, without which it refuses a foreign arch), bubblewrap and the cross
# compiler, and registers qemu for aarch64 binaries (scripts/binfmt-aarch64.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

host_packages=(qemu-user-static mmdebstrap arch-test g++-aarch64-linux-gnu binfmt-support bubblewrap)
# Inside the root: what the farm's binaries link against (the -dev packages, so the cross
# build finds headers and CMake packages), what an aarch64 build host needs to build a
# CUDA Python extension (compiler, CMake, ninja, Python with venv and headers), and
# protobuf-compiler-grpc because gRPC's CMake targets name its plugin, libbz2-dev because
# RocksDB's name libbz2.so.
root_packages=(
  g++ make cmake ninja-build pkg-config ca-certificates
  python3 python3-venv python3-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev librocksdb-dev libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev nlohmann-json3-dev libcpp-httplib-dev
  libzstd-dev liblz4-dev libssl-dev zlib1g-dev libtomlplusplus-dev
  libbz2-dev
)
suite=bookworm
mirror="${WHEELFARM_DEBIAN_MIRROR:-http://deb.debian.org}"

bash "$here/apt-ensure.sh" arm64-root "${host_packages[@]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
bash "$here/binfmt-aarch64.sh" >&2

key="$(printf '%s\n' "$suite" "${root_packages[@]}" | sha256sum | cut -c1-12)"
root="${WHEELFARM_ARM64_ROOT:-$HOME/.cache/wheelfarm/arm64-root-$key}"
# Mount points of scripts/arm64-host.sh, which binds into the root read-only.
mount_points=(host opt/wheelfarm/bin opt/cuda opt/native-bwrap)
if [ -f "$root/.wheelfarm-complete" ]; then
  for d in "${mount_points[@]}"; do [ -d "$root/$d" ] || $SUDO mkdir -p "$root/$d"; done
  echo "$root"
  exit 0
fi

echo "arm64-root: making $root (Debian $suite arm64, a few minutes the first time)" >&2
tmp="$root.partial"
$SUDO rm -rf "$tmp"
mkdir -p "$(dirname "$root")"
$SUDO mmdebstrap --arch=arm64 --variant=apt --quiet \
  --include="$(IFS=,; echo "${root_packages[*]}")" \
  "$suite" "$tmp" \
  "deb $mirror/debian $suite main" \
  "deb $mirror/debian $suite-updates main" \
  "deb $mirror/debian-security $suite-security main" >&2

# The root's CMake package files name their libraries and headers by absolute path
# (/usr/lib/aarch64-linux-gnu/libsnappy.so, /usr/include): as a sysroot those must point
# inside it. ${CMAKE_SYSROOT} is empty in a native build, so the files stay valid there.
$SUDO find "$tmp/usr/lib/aarch64-linux-gnu/cmake" "$tmp/usr/lib/cmake" "$tmp/usr/share/cmake" \
  -name '*.cmake' -type f -print0 2>/dev/null |
  $SUDO xargs -0 sed -i -E \
    -e 's#([" ;(])/usr/lib/aarch64-linux-gnu/#\1${CMAKE_SYSROOT}/usr/lib/aarch64-linux-gnu/#g' \
    -e 's#([" ;(])/usr/include([/";)])#\1${CMAKE_SYSROOT}/usr/include\2#g'
# Absolute symlinks (libbz2.so -> /lib/aarch64-linux-gnu/libbz2.so.1.0) would point at the
# build machine's own files: make them relative, valid both as sysroot and as a root.
$SUDO find "$tmp/usr/lib/aarch64-linux-gnu" -lname '/*' -print0 |
  while IFS= read -r -d '' link; do
    $SUDO ln -sfrn "$tmp$(readlink "$link")" "$link"
  done
for d in "${mount_points[@]}"; do $SUDO mkdir -p "$tmp/$d"; done
$SUDO touch "$tmp/.wheelfarm-complete"
$SUDO mv "$tmp" "$root"
echo "$root"
