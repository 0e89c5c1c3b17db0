#!/usr/bin/env bash
# Installs every build and test dependency from Debian packages and PyPI.
# Safe to run any number of times: apt-get and pip skip what is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev librocksdb-dev libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev
  nlohmann-json3-dev libcpp-httplib-dev
  libzstd-dev liblz4-dev libssl-dev zlib1g-dev
  clang libclang-rt-14-dev clang-format
  systemd python3 python3-venv procps
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: nvcc not found (expected on PATH or /usr/local/cuda/bin)." >&2
  echo "install-deps: install the CUDA toolkit for this machine; every Wheelfarm host needs one." >&2
  exit 1
fi
