#!/usr/bin/env bash
# Installs every build and test dependency from Debian packages and PyPI.
# Safe to run any number of times: apt-get and pip skip what is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev librocksdb-dev libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev
  nlohmann-json3-dev libcpp-httplib-dev
  libzstd-dev liblz4-dev libssl-dev zlib1g-dev openssl
  clang libclang-rt-14-dev clang-format
  systemd python3 python3-venv procps bubblewrap
  chromium chromium-driver libtomlplusplus-dev
)

bash "$(dirname "$0")/apt-ensure.sh" install-deps "${packages[@]}"

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: nvcc not found (expected on PATH or /usr/local/cuda/bin)." >&2
  echo "install-deps: install the CUDA toolkit for this machine; every Wheelfarm host needs one." >&2
  exit 1
fi

# Python tools the tests drive for real (twine, pip, pypiserver, selenium) live in one venv
# beside the checkout, built from Debian's python3 so every machine gets the same one.
venv="$(cd "$(dirname "$0")/.." && pwd)/.venv"
requirements="$(dirname "$0")/requirements-tools.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "install-deps: installing Python tools into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
  echo "$want" >"$stamp"
else
  echo "install-deps: Python tools present in $venv"
fi

# torch 2.9.1 for torch_cpp_extension_test, in a venv under ~/.cache/wheelfarm (a ~900 MB
# download the first time on a machine; a stamp check afterwards).
bash "$(dirname "$0")/install-torch.sh" >/dev/null
echo "install-deps: torch 2.9.1 present in ${WHEELFARM_TORCH_VENV:-$HOME/.cache/wheelfarm/torch-2.9.1-venv}"
