#!/usr/bin/env bash
# README command (a) installs only what the farm needs: scripts/install-deps.sh (which
# scripts/build.sh runs) must not reach torch, Chromium or the tests' Python tools, and
# scripts/install-torch.sh must install torch last, after what it needs, so pip reports no
# dependency conflict for the nvidia-* wheels it leaves out on purpose.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
trace="$(bash -x "$root/scripts/install-deps.sh" 2>&1 >/dev/null)"
failed=0
for word in chromium install-torch install-test-deps requirements-tools "-m pip" "pip install"; do
  if grep -q -- "$word" <<<"$trace"; then
    echo "FAIL: scripts/install-deps.sh reaches '$word':" >&2
    grep -- "$word" <<<"$trace" | head -5 >&2
    failed=1
  fi
done
# The torch install: the requirements line comes before the --no-deps torch line.
req_line="$(grep -n 'install -r "$requirements"' "$root/scripts/install-torch.sh" | cut -d: -f1)"
torch_line="$(grep -n 'install --no-deps "torch==' "$root/scripts/install-torch.sh" | cut -d: -f1)"
if [ -z "$req_line" ] || [ -z "$torch_line" ] || [ "$req_line" -gt "$torch_line" ]; then
  echo "FAIL: scripts/install-torch.sh must install its requirements before torch --no-deps" >&2
  failed=1
fi
if [ "$failed" = 0 ]; then echo "demo_install_test: install-deps reaches no test dependency"; fi
exit "$failed"
