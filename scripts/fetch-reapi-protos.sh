#!/usr/bin/env bash
# Fetches the REAPI v2 protocol definitions the coordinator's REAPI services are generated from
# (proto/CMakeLists.txt, reapi_proto): PyPI's buildstream 2.8.1 wheel ships a self-consistent
# set under buildstream/_protos/ (REAPI v2, ByteStream, longrunning, google.rpc, google.api).
# The wheel is pinned by version and SHA-256; only the eight .proto files the services need
# are extracted, into a cache outside the checkout (nothing is copied into the tree).
#
#   WHEELFARM_REAPI_PROTOS   where they go (default ~/.cache/wheelfarm/reapi-protos/buildstream-2.8.1)
#
# Safe to run any number of times: it does nothing when the stamp matches this script and
# every file is there. Prints the directory on its last line.
set -euo pipefail

version=2.8.1
sha256=aa3412ebc8e650c9241c6b33bb8d00148052000010cb990d821fe324e01f9701
wheel="buildstream-$version-cp311-cp311-manylinux_2_28_x86_64.whl"
files=(
  build/bazel/remote/execution/v2/remote_execution.proto
  build/bazel/semver/semver.proto
  google/api/annotations.proto
  google/api/http.proto
  google/bytestream/bytestream.proto
  google/longrunning/operations.proto
  google/rpc/status.proto
  google/rpc/code.proto
)
here="$(cd "$(dirname "$0")" && pwd)"
dest="${WHEELFARM_REAPI_PROTOS:-$HOME/.cache/wheelfarm/reapi-protos/buildstream-$version}"
stamp="$dest/.wheelfarm-stamp"
want="$(sha256sum "$here/fetch-reapi-protos.sh" | cut -d' ' -f1)"

present=1
for f in "${files[@]}"; do [ -f "$dest/$f" ] || present=0; done
if [ "$present" = 1 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "fetch-reapi-protos: REAPI protos present in $dest" >&2
  echo "$dest"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-reapi-protos: downloading buildstream $version from PyPI for its REAPI protos" >&2
# The wheel's own platform and Python, whatever this machine is: only its .proto files are used.
/usr/bin/python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.11 --platform manylinux_2_28_x86_64 "buildstream==$version" -d "$tmp" >&2
got="$(sha256sum "$tmp/$wheel" | cut -d' ' -f1)"
if [ "$got" != "$sha256" ]; then
  echo "fetch-reapi-protos: $wheel has SHA-256 $got, expected $sha256: refusing to use it." >&2
  echo "fetch-reapi-protos: Fix: check the package index pip uses (PIP_INDEX_URL, pip.conf); PyPI's file for buildstream $version has the expected digest" >&2
  exit 1
fi
/usr/bin/python3 - "$tmp/$wheel" "$tmp/protos" "${files[@]}" <<'PY'
import os, sys, zipfile
wheel, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for name in names:
        target = os.path.join(out, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open("buildstream/_protos/" + name) as src, open(target, "wb") as dst:
            dst.write(src.read())
PY
echo "$want" >"$tmp/protos/.wheelfarm-stamp"
mkdir -p "$(dirname "$dest")"
rm -rf "$dest"
mv "$tmp/protos" "$dest"
echo "fetch-reapi-protos: REAPI protos of buildstream $version in $dest" >&2
echo "$dest"
