#!/usr/bin/env bash
# Installs those of the named Debian packages that are missing (apt-get, with sudo unless
# root); says which, or that all are present. Every message goes to stderr, so callers can
# print results on stdout.   apt-ensure.sh LABEL PACKAGE...
set -euo pipefail
label="$1"
shift
missing=()
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "$label: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
else
  echo "$label: all Debian packages present" >&2
fi
