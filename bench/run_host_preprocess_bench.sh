#!/usr/bin/env bash
# What a remote C++ compile leaves on the build host (issue 25, item 3): on heavy real
# translation units (torch 2.9.1's <torch/extension.h> and <ATen/ATen.h>, the headers every
# cpp_extension and PyTorch TU reads) it times, with the same flags cpp_extension passes:
#   -c           the whole local compile (the baseline),
#   -E           full preprocessing (sccache's and distcc's client step),
#   -E -fdirectives-only   icecream's client step,
#   -M           the dependency scan farm-cc runs before shipping sources and headers,
# and prints each as a fraction of the compile, plus the bytes each would ship per TU.
# Medians of FARM_BENCH_RUNS (default 3) runs each. Needs torch (scripts/install-torch.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/torch_units.sh
runs=${FARM_BENCH_RUNS:-3}
cxx=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
torch_units_write "$work"
flags=("${torch_unit_flags[@]}")
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
time_of() {  # seconds, median of $runs
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
  done | median
}
printf '%-10s %-22s %9s %9s %12s\n' unit step seconds "of -c" "bytes shipped"
for tu in ext aten; do
  src="$work/$tu.cpp"
  c=$(time_of "$cxx" "${flags[@]}" -c "$src" -o "$work/$tu.o")
  e=$(time_of "$cxx" "${flags[@]}" -E "$src" -o "$work/$tu.ii")
  d=$(time_of "$cxx" "${flags[@]}" -E -fdirectives-only "$src" -o "$work/$tu.dii")
  m=$(time_of "$cxx" "${flags[@]}" -M "$src" -MF "$work/$tu.d")
  deps=$(sed -e 's/\\$//' "$work/$tu.d" | tr ' ' '\n' | grep -v ':$' | grep -v '^$' | sort -u)
  dep_files=$(echo "$deps" | wc -l)
  dep_bytes=$(echo "$deps" | xargs stat -L -c %s | paste -sd+ | bc)
  printf '%-10s %-22s %9.2f %9s %12s\n' "$tu" "-c (local compile)" "$c" "1.00" "-"
  printf '%-10s %-22s %9.2f %9.3f %12s\n' "$tu" "-E" "$e" "$(echo "$e / $c" | bc -l)" \
    "$(stat -c %s "$work/$tu.ii")"
  printf '%-10s %-22s %9.2f %9.3f %12s\n' "$tu" "-E -fdirectives-only" "$d" \
    "$(echo "$d / $c" | bc -l)" "$(stat -c %s "$work/$tu.dii")"
  printf '%-10s %-22s %9.2f %9.3f %12s\n' "$tu" "-M (farm-cc)" "$m" "$(echo "$m / $c" | bc -l)" \
    "$dep_bytes"
  echo "$tu: -M lists $dep_files files ($dep_bytes bytes): shipped once per worker through the CAS, the .ii files once per TU"
done
