#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz and runs each for a
# bounded time. Exits non-zero if a target fails to build or finds a crash, leak or hang.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 20)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-20}"
targets=(elf_fuzzer fatbin_fuzzer zip_fuzzer arch_list_fuzzer)

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DFARM_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
ninja -C "$build" -j"${FUZZ_JOBS:-2}" "${targets[@]}"

# Seeds: small real inputs so the fuzzers start from valid structure.
corpus_root="$build/fuzz-corpus"
mkdir -p "$corpus_root"/{elf_fuzzer,fatbin_fuzzer,zip_fuzzer,arch_list_fuzzer}
for f in "$build"/fuzz/CMakeFiles/farm_parsers_fuzz.dir/__/libfarm/elf/*.o; do
  [ -f "$f" ] && cp -n "$f" "$corpus_root/elf_fuzzer/" 2>/dev/null || true
done
fixtures="$root/build/libfarm/testing/nvcc_fixtures"
[ -d "$fixtures" ] || fixtures="$root/build-inspect/libfarm/testing/nvcc_fixtures"
if [ -d "$fixtures" ]; then
  cp -n "$fixtures"/tu_a.o "$fixtures"/k.cubin "$fixtures"/libtu.a "$corpus_root/elf_fuzzer/" 2>/dev/null || true
  cp -n "$fixtures"/k.fatbin "$corpus_root/fatbin_fuzzer/" 2>/dev/null || true
  find "$fixtures" -name '*.whl' -size -64k -exec cp -n {} "$corpus_root/zip_fuzzer/" \; 2>/dev/null || true
fi
printf '7.5;9.0;12.1' > "$corpus_root/arch_list_fuzzer/seed1"
printf '"sm_90a 8.0+PTX 12.0f"' > "$corpus_root/arch_list_fuzzer/seed2"
python3 - "$corpus_root/zip_fuzzer/seed.zip" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("demo/__init__.py", "x = 1\n")
    z.writestr("demo-1.0.dist-info/RECORD", "demo/__init__.py,sha256=abc,6\n")
PY

status=0
for t in "${targets[@]}"; do
  echo "fuzz.sh: running $t for ${seconds}s"
  artifacts="$build/fuzz-artifacts/$t/"
  mkdir -p "$artifacts"
  if ! "$build/bin/$t" "$corpus_root/$t" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -max_len=1048576 -artifact_prefix="$artifacts" -print_final_stats=1 \
      > "$build/fuzz-$t.log" 2>&1; then
    echo "fuzz.sh: $t FAILED; reproducer in $artifacts, log in $build/fuzz-$t.log" >&2
    tail -40 "$build/fuzz-$t.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "$build/fuzz-$t.log" | tail -2 || true
  fi
done
exit "$status"
