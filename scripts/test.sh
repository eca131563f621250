#!/usr/bin/env bash
# The one test command (README and CI): builds with warnings as errors and runs every test.
#   scripts/test.sh            unit + integration + golden tests (ci preset)
#   scripts/test.sh --full     also ASan/UBSan, short fuzz runs and benchmark smoke runs (CI does this)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}

cmake --preset ci >/dev/null
cmake --build build/ci -j"$JOBS"
ctest --test-dir build/ci --output-on-failure -j"$JOBS"

[[ "${1:-}" == "--full" ]] || exit 0

echo "== ASan/UBSan =="
cmake --preset asan-ubsan >/dev/null
cmake --build build/asan-ubsan -j"$JOBS"
ctest --test-dir build/asan-ubsan --output-on-failure -j"$JOBS" -LE slow

echo "== fuzzers (short runs) =="
cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j"$JOBS"
for f in build/fuzz/src/import/kineto/kineto_importer_fuzzer build/fuzz/src/import/nsys/nsys_importer_fuzzer; do
  if [[ -x "$f" ]]; then
    corpus=$(mktemp -d)
    "$f" -max_total_time="${FUZZ_SECONDS:-30}" -rss_limit_mb=4096 "$corpus" 2>&1 | tail -n 2
    rm -rf "$corpus"
  fi
done

echo "== benchmark smoke runs =="
for b in build/ci/src/aggregate/aggregator_benchmark build/ci/src/import/kineto/kineto_importer_benchmark \
         build/ci/src/import/nsys/nsys_importer_benchmark; do
  [[ -x "$b" ]] && "$b" --benchmark_min_time=0.01 2>&1 | tail -n 4
done
echo "scripts/test.sh --full: all stages passed"
