#!/usr/bin/env bash
# Checks the systemd units with systemd-analyze verify. The units name /usr/local/bin; here
# they are pointed at the freshly built binaries (BIN_DIR) so the check needs no install.
set -euo pipefail
bin_dir=${1:?usage: deploy/verify-units.sh BIN_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for unit in farm-coordinator.service farm-worker.service; do
  sed "s#/usr/local/bin/#${bin_dir}/#" "$here/systemd/$unit" > "$tmp/$unit"
done
out=$(systemd-analyze verify --man=no "$tmp"/farm-coordinator.service "$tmp"/farm-worker.service 2>&1) || {
  echo "$out"; exit 1; }
# verify also prints warnings without failing; treat any line about our units as an error.
if echo "$out" | grep -E "farm-(coordinator|worker)\.service" ; then exit 1; fi
echo "systemd units verified: farm-coordinator.service farm-worker.service"
