#!/usr/bin/env bash
# Installs the Wheelfarm binaries and systemd units on this host (run as root).
#   deploy/install.sh BUILD_BIN_DIR [coordinator|worker|both]
# Creates the wheelfarm user, /etc/wheelfarm/{token,*.env} (never overwriting), the units,
# and /etc/wheelfarm/tls for the certificates FARM_TLS_ARGS names (docs/security.md, TLS).
set -euo pipefail
bin_dir=${1:?usage: deploy/install.sh BUILD_BIN_DIR [coordinator|worker|both]}
role=${2:-both}
here=$(cd "$(dirname "$0")" && pwd)

# Workers run actions in a bubblewrap sandbox and refuse to start without it.
if [ "$role" != coordinator ] && ! command -v bwrap >/dev/null; then
  echo "install.sh: bwrap not found; farm-worker needs it to sandbox actions." \
    "Fix: apt-get install bubblewrap (dnf install bubblewrap)" >&2
  exit 2
fi

install -m 0755 "$bin_dir"/farm-coordinator "$bin_dir"/farm-worker "$bin_dir"/farm-nvcc \
  "$bin_dir"/farm-cc "$bin_dir"/farmctl /usr/local/bin/
# farm-cc's masquerade links (gcc, g++, cc, c++, clang, clang++), beside it as the worker
# expects them for its wheel builds.
install -d /usr/local/bin/farm-cc-masquerade
for n in gcc g++ cc c++ clang clang++; do ln -sf ../farm-cc "/usr/local/bin/farm-cc-masquerade/$n"; done
install -D -m 0644 "$here/config/wheelfarm.sysusers.conf" /usr/lib/sysusers.d/wheelfarm.conf
systemd-sysusers /usr/lib/sysusers.d/wheelfarm.conf
install -d -m 0750 -o root -g wheelfarm /etc/wheelfarm
for f in coordinator.env worker.env; do
  [ -e "/etc/wheelfarm/$f" ] || install -m 0640 -g wheelfarm "$here/config/$f" "/etc/wheelfarm/$f"
done
# Keys in here must be owned by wheelfarm with mode 0600: the daemons refuse any other.
install -d -m 0750 -o root -g wheelfarm /etc/wheelfarm/tls
for key in /etc/wheelfarm/tls/*.key; do
  [ -e "$key" ] || continue
  chown wheelfarm:wheelfarm "$key" && chmod 0600 "$key"
done
if [ ! -e /etc/wheelfarm/token ]; then
  (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > /etc/wheelfarm/token)
  echo "created /etc/wheelfarm/token (the admin token). Give each worker host its own" \
    "worker token as its /etc/wheelfarm/token: farmctl token create --role worker --name HOST"
fi
install -m 0644 "$here"/systemd/farm-*.service /etc/systemd/system/
systemctl daemon-reload
case "$role" in
  coordinator) systemctl enable --now farm-coordinator.service ;;
  worker) systemctl enable --now farm-worker.service ;;
  both) systemctl enable --now farm-coordinator.service farm-worker.service ;;
  *) echo "unknown role '$role': use coordinator, worker or both" >&2; exit 2 ;;
esac
