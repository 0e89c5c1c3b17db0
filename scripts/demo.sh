#!/usr/bin/env bash
# README command (a): install, build, start a local farm (coordinator + 2 workers on
# loopback) and show it working. The farm keeps running; `build/bin/farmctl down` stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
farmctl=build/bin/farmctl
echo
echo "== farmctl up --workers 2"
"$farmctl" up --workers 2
echo
echo "== farmctl status"
"$farmctl" status
echo
echo "== farmctl workers"
"$farmctl" workers
echo
echo "The farm is running. Try: build/bin/farmctl workers --json"
echo "Stop it with: build/bin/farmctl down"
