#!/usr/bin/env bash
# Installs the Wheelfarm binaries and systemd units on this host (run as root).
#   deploy/install.sh BUILD_BIN_DIR [coordinator|worker|both]
# Creates the wheelfarm user, /etc/wheelfarm/{token,*.env} (never overwriting), the units.
set -euo pipefail
bin_dir=${1:?usage: deploy/install.sh BUILD_BIN_DIR [coordinator|worker|both]}
role=${2:-both}
here=$(cd "$(dirname "$0")" && pwd)

install -m 0755 "$bin_dir"/farm-coordinator "$bin_dir"/farm-worker "$bin_dir"/farm-nvcc \
  "$bin_dir"/farmctl /usr/local/bin/
install -D -m 0644 "$here/config/wheelfarm.sysusers.conf" /usr/lib/sysusers.d/wheelfarm.conf
systemd-sysusers /usr/lib/sysusers.d/wheelfarm.conf
install -d -m 0750 -o root -g wheelfarm /etc/wheelfarm
for f in coordinator.env worker.env; do
  [ -e "/etc/wheelfarm/$f" ] || install -m 0640 -g wheelfarm "$here/config/$f" "/etc/wheelfarm/$f"
done
if [ ! -e /etc/wheelfarm/token ]; then
  (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > /etc/wheelfarm/token)
  echo "created /etc/wheelfarm/token: copy it to every worker host"
fi
install -m 0644 "$here"/systemd/farm-*.service /etc/systemd/system/
systemctl daemon-reload
case "$role" in
  coordinator) systemctl enable --now farm-coordinator.service ;;
  worker) systemctl enable --now farm-worker.service ;;
  both) systemctl enable --now farm-coordinator.service farm-worker.service ;;
  *) echo "unknown role '$role': use coordinator, worker or both" >&2; exit 2 ;;
esac
