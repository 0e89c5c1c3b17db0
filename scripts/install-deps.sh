#!/usr/bin/env bash
# Installs what building and running the farm needs, from Debian packages (the demo needs no
# more), and the REAPI protocol definitions from a pinned PyPI wheel (scripts/fetch-reapi-protos.sh,
# cached under ~/.cache/wheelfarm). What only the test suite needs (Chromium, the tools venv, torch) is
# scripts/install-test-deps.sh. Safe to run any number of times: apt-get skips what is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev librocksdb-dev libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev
  nlohmann-json3-dev libcpp-httplib-dev
  libzstd-dev liblz4-dev libssl-dev zlib1g-dev openssl
  clang libclang-rt-14-dev clang-format
  systemd python3 python3-venv python3-pip procps bubblewrap
  libtomlplusplus-dev
)

bash "$(dirname "$0")/apt-ensure.sh" install-deps "${packages[@]}"
# The coordinator's REAPI services are generated from these (proto/CMakeLists.txt).
bash "$(dirname "$0")/fetch-reapi-protos.sh" >/dev/null

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: nvcc not found (expected on PATH or /usr/local/cuda/bin)." >&2
  echo "install-deps: install the CUDA toolkit for this machine; every Wheelfarm host needs one." >&2
  exit 1
fi
