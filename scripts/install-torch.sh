#!/usr/bin/env bash
# Installs torch 2.9.1 from PyPI (--no-deps: no nvidia-* wheels, no triton) and what
# torch.utils.cpp_extension needs to build an extension into a virtual environment cached
# outside the checkout, so the ~900 MB wheel is downloaded once per machine, not per clone.
#
# The PyPI wheel (2.9.1+cu128) links the CUDA 12 runtime libraries the nvidia-*-cu12 wheels
# would bring (~3 GB); `import torch` needs them to load, a build never calls them.
# scripts/cuda_runtime_stubs.py writes build-only stand-ins into VENV/cuda-runtime-stubs
# (each aborts, naming itself, if called): put that directory on LD_LIBRARY_PATH of anything
# that imports this torch.
#
#   WHEELFARM_TORCH_VENV   where the venv lives (default ~/.cache/wheelfarm/torch-2.9.1-venv)
#
# Safe to run any number of times: it does nothing when the venv's stamp matches this script
# and scripts/requirements-torch.txt. Prints the venv's path on its last line.
set -euo pipefail

torch_version=2.9.1
here="$(cd "$(dirname "$0")" && pwd)"
requirements="$here/requirements-torch.txt"
venv="${WHEELFARM_TORCH_VENV:-$HOME/.cache/wheelfarm/torch-$torch_version-venv}"
stamp="$venv/.wheelfarm-stamp"
want="$(cat "$here/install-torch.sh" "$here/cuda_runtime_stubs.py" "$requirements" | sha256sum | cut -d' ' -f1)"

if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -x "$venv/bin/python" ]; then
  echo "install-torch: torch $torch_version present in $venv"
  echo "$venv"
  exit 0
fi

mkdir -p "$(dirname "$venv")"
if [ ! -x "$venv/bin/python" ]; then
  # Debian's python3, like scripts/install-deps.sh, so every machine gets the same interpreter.
  /usr/bin/python3 -m venv "$venv"
fi
rm -f "$stamp"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
echo "install-torch: installing torch $torch_version (--no-deps) into $venv"
# What torch needs from PyPI first, then torch itself with --no-deps: pip checks the
# dependencies of what it installs, so the other order prints a dependency-conflict error
# for each nvidia-* wheel left out on purpose.
"${pip[@]}" install -r "$requirements"
"${pip[@]}" install --no-deps "torch==$torch_version"
rm -rf "$venv/cuda-runtime-stubs"
"$venv/bin/python" "$here/cuda_runtime_stubs.py" \
  "$("$venv/bin/python" -c 'import importlib.util as u; import os; print(os.path.dirname(u.find_spec("torch").origin))')" \
  "$venv/cuda-runtime-stubs"
# The import that every extension build does first; fails here rather than in a test.
LD_LIBRARY_PATH="$venv/cuda-runtime-stubs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$venv/bin/python" -W ignore -c 'import torch, torch.utils.cpp_extension; print("install-torch: torch", torch.__version__, "CUDA", torch.version.cuda)'
echo "$want" >"$stamp"
echo "$venv"
