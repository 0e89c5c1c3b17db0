#!/usr/bin/env bash
# README command (a): install, build, start a local farm (coordinator + 2 workers on
# loopback), then build the demo CUDA extension's wheel for sm_75, sm_90 and sm_121 on it:
# device compiles fan out over the workers, the wheel is verified and published to the
# coordinator's index, and the last lines say how to pip install it. The farm keeps
# running; `build/bin/farmctl down` stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
# The binaries alone: the demo runs no test, benchmark or fuzz target.
bash scripts/build.sh binaries
farmctl=build/bin/farmctl
echo
echo "== farmctl up --workers 2"
"$farmctl" down >/dev/null 2>&1 || true
"$farmctl" up --workers 2
echo
echo "== farmctl workers"
"$farmctl" workers
echo
echo "== farmctl submit demo-0.1.0 --archs \"7.5;9.0;12.1\" --dry-run"
"$farmctl" submit demo-0.1.0 --archs "7.5;9.0;12.1" --dry-run
echo
echo "== farmctl submit demo-0.1.0 --archs \"7.5;9.0;12.1\" --wait"
"$farmctl" submit demo-0.1.0 --archs "7.5;9.0;12.1" --wait
echo
echo "The farm is running: 'build/bin/farmctl builds', the dashboard at http://127.0.0.1:7421/"
echo "Stop it with: build/bin/farmctl down"
