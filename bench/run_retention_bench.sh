#!/usr/bin/env bash
# Builds and runs the retention benchmark: coordinator RSS over 100,000 no-op actions with the
# default retention and with --max-finished-actions 10000, and restart time with 1,000,000
# stored finished action records against an empty store, and its RSS then (peak and settled).
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build retention_bench farm-coordinator >/dev/null
exec build/bin/retention_bench "$@"
