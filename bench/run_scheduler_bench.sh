#!/usr/bin/env bash
# Builds and runs the scheduler benchmark: no-op actions end to end through a real
# coordinator with 50 simulated workers. Prints actions/s and submit-to-lease p50/p99.
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build scheduler_bench farm-coordinator >/dev/null
exec build/bin/scheduler_bench "$@"
