#!/usr/bin/env bash
# Installs what the test suite needs beyond scripts/install-deps.sh: headless Chromium for the
# dashboard test, the Python tools the tests drive for real (twine, pip, pypiserver, selenium,
# BuildGrid's bgd as a REAPI client) in .venv beside the checkout, and torch 2.9.1 for
# torch_cpp_extension_test. Safe to run any number of times.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/install-deps.sh"
# g++-11 beside Debian 12's g++-12: farm_cc_test's two toolchains that must never answer each other.
bash "$here/apt-ensure.sh" install-test-deps chromium chromium-driver g++-11
# libpng's headers: wheel_repair_test's extension links the host's libpng, a library outside the
# manylinux policy that the repair step must carry into the wheel.
bash "$here/apt-ensure.sh" install-test-deps libpng-dev
# torchvision's image codecs (torch_stack_test builds it on the local farm): PNG, JPEG, WebP
# headers, whose libraries the repair step carries into its wheel.
bash "$here/apt-ensure.sh" install-test-deps libjpeg-dev libwebp-dev
# Debian's Bazel 4.2 (REAPI 2.0), the real client reapi_bazel_test points at the farm's action
# cache and CAS with --remote_cache.
bash "$here/apt-ensure.sh" install-test-deps bazel-bootstrap
# GCC's German messages and a German locale: farm-cc reads the compiler's include search list
# under a translated GCC (dependency_scan_test).
bash "$here/apt-ensure.sh" install-test-deps gcc-12-locales locales
if ! locale -a 2>/dev/null | grep -qx 'de_DE.utf8'; then
  echo "install-test-deps: generating the de_DE.UTF-8 locale"
  if [ "$(id -u)" = 0 ]; then localedef -i de_DE -f UTF-8 de_DE.UTF-8; else sudo localedef -i de_DE -f UTF-8 de_DE.UTF-8; fi
fi

# One venv beside the checkout, built from Debian's python3 so every machine gets the same one.
venv="$(cd "$here/.." && pwd)/.venv"
requirements="$here/requirements-tools.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "install-test-deps: installing Python tools into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
  echo "$want" >"$stamp"
else
  echo "install-test-deps: Python tools present in $venv"
fi

# torch 2.9.1 in a venv under ~/.cache/wheelfarm (a ~900 MB download the first time on a
# machine; a stamp check afterwards).
bash "$here/install-torch.sh" >/dev/null
echo "install-test-deps: torch 2.9.1 present in ${WHEELFARM_TORCH_VENV:-$HOME/.cache/wheelfarm/torch-2.9.1-venv}"
