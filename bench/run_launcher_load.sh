#!/usr/bin/env bash
# Builds and runs the launcher load bench: 1,000 launchers' calls (each one compile: Execute,
# then Wait polls until it ends) from three big builds of 330 and a small one of 10 started
# behind them, against one coordinator and 2 sleeping workers of 8 slots (100 ms a compile),
# with the coordinator's default --grpc-max-calls and with 64. Prints per build what its
# launchers saw, the coordinator's peak RSS and CPU, and the small build's wall against its
# own work alone. Extra arguments go to every run (e.g. --big 500 --big 500).
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build launcher_load farm-coordinator >/dev/null
for calls in 0 64; do
  echo "== --grpc-max-calls ${calls/#0/default (4096)}"
  build/bin/launcher_load --big 330 --big 330 --big 330 --small 10 --action-ms 100 --workers 2 \
    --slots 8 --grpc-max-calls "$calls" "$@"
  echo
done
