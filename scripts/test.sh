#!/usr/bin/env bash
# The one test command (README and CI): builds with warnings as errors and runs every test.
#   scripts/test.sh            format and layering checks, then unit + integration + golden tests
#                              (ci preset)
#   scripts/test.sh --full     also ASan/UBSan and TSan runs, short fuzz runs and benchmark smoke
#                              runs (what CI does)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}

echo "== format check =="
bad=$(git ls-files '*.cc' '*.h' | while read -r f; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
if [[ -n "$bad" ]]; then
  echo "clang-format would change (run clang-format -i on them):"; echo "$bad"; exit 1
fi

echo "== layering check =="
# Dependencies run down the layers only (AGENTS.md); the offline path links no agent code.
python3 scripts/check_layering.py

# The OpenTelemetry SDK for the span tests (tests/otel, pinned by package-lock.json). Without it
# those tests skip, except in CI, where INFERSCOPE_REQUIRE_OTEL=1 makes a missing SDK a failure.
if command -v npm >/dev/null && [[ ! -d tests/otel/node_modules ]]; then
  echo "== npm ci (tests/otel) =="
  npm ci --prefix tests/otel --no-audit --no-fund --loglevel=error
fi
# The official MCP TypeScript SDK for the MCP server test (tests/mcp, pinned the same way; skips
# without npm, required in CI through INFERSCOPE_REQUIRE_MCP=1).
if command -v npm >/dev/null && [[ ! -d tests/mcp/node_modules ]]; then
  echo "== npm ci (tests/mcp) =="
  npm ci --prefix tests/mcp --no-audit --no-fund --loglevel=error
fi
# playwright-core for the dashboard's browser test (tests/ui, pinned the same way; it drives
# Debian's chromium; skips without either, required in CI through INFERSCOPE_REQUIRE_UI=1).
if command -v npm >/dev/null && [[ ! -d tests/ui/node_modules ]]; then
  echo "== npm ci (tests/ui) =="
  npm ci --prefix tests/ui --no-audit --no-fund --loglevel=error
fi
if ! command -v npm >/dev/null; then
  echo "note: npm not found: the OpenTelemetry and MCP SDK client tests and the dashboard's"
  echo "      browser test will skip, and /ui/ will say how to build the dashboard"
fi
if [[ "${CI:-}" == "true" ]]; then
  export INFERSCOPE_REQUIRE_OTEL=1
  export INFERSCOPE_REQUIRE_MCP=1
  export INFERSCOPE_REQUIRE_UI=1  # the dashboard in chromium (tests/ui)
  export INFERSCOPE_REQUIRE_PROTOC=1  # protoc checks `export`'s output (tests/perfetto)
  # Debian's clickhouse-server: the fleet sink and reads against a real server (docs/fleet.md).
  export INFERSCOPE_REQUIRE_CLICKHOUSE=1
fi
if [[ ! -x /usr/sbin/clickhouse-server && -z "${INFERSCOPE_CLICKHOUSE_SERVER:-}" ]]; then
  echo "note: clickhouse-server not found: the ClickHouse sink tests will skip"
fi

echo "== build (ci preset: -Werror) and test =="
cmake --preset ci >/dev/null
cmake --build build/ci -j"$JOBS"
ctest --test-dir build/ci --output-on-failure -j"$JOBS" --output-junit junit.xml
# Skipped tests, each with its reason (the test's SKIP/note line): a skip is never a silent pass.
python3 - build/ci/junit.xml <<'PY'
import sys, xml.etree.ElementTree as ET
skipped = []
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    if tc.find("skipped") is None and tc.get("status") not in ("notrun", "disabled"):
        continue
    out = tc.findtext("system-out") or ""
    why = next((l.strip() for l in out.splitlines() if "SKIP" in l or "skip" in l), "no reason given")
    skipped.append("  %s: %s" % (tc.get("name"), why[:160]))
print("%d tests skipped%s" % (len(skipped), ":" if skipped else ""))
print("\n".join(skipped))
PY

[[ "${1:-}" == "--full" ]] || exit 0

echo "== ASan/UBSan =="
cmake --preset asan-ubsan >/dev/null
cmake --build build/asan-ubsan -j"$JOBS"
ctest --test-dir build/asan-ubsan --output-on-failure -j"$JOBS" -E '^(live_load|replay_identity)$'
# Every trace replayed live under ASan, each under one CUPTI version in turn (all three versions
# still decoded): the ci stage replays every trace under every version; three times the replays
# here took 3 of the stage's 13 minutes.
python3 tests/live/replay_identity.py --inferscope build/asan-ubsan/src/cli/inferscope \
  --replay-engine build/asan-ubsan/tests/fakes/replay_engine --rotate-versions || [[ $? == 77 ]]
# The 64-process load test is a throughput and memory test: under ASan, 64 instrumented processes
# cannot keep their pace on 2 cores and ASan's quarantine is most of the agent's RSS. Its
# correctness checks (nothing lost, nothing dropped) still run here, on a quarter of the load,
# with the RSS bound at what ASan's allocator needs.
python3 tests/live/live_load.py --inferscope build/asan-ubsan/src/cli/inferscope \
  --replay-engine build/asan-ubsan/tests/fakes/replay_engine --processes 16 --seconds 20 \
  --rss-bound-mib 768 --rss-noise-mib 256 || [[ $? == 77 ]]

echo "== TSan (the concurrent parts: pipelines, gzip thread, split SQLite scan, buffer pool, fake CUPTI; the live path) =="
cmake --preset tsan >/dev/null
cmake --build build/tsan -j"$JOBS" --target import_tests kineto_importer_test nsys_importer_test \
  inject_tests inject_session_test cupti_binding_test fake_cupti_test inferscope inferscope_inject \
  replay_engine agentd_tests capture_tests \
  server_tests metrics_exporter_tests telemetry_otlp_tests telemetry_nvml_tests telemetry_scrape_tests \
  fake_nvml
ctest --test-dir build/tsan --output-on-failure -j"$JOBS" \
  -R 'PipelinedSink|KinetoImporter|SplitScan|BufferPool|AgentClient|FakeCupti|AgentTest|HttpServerTest|ApiRoutesTest|SpanCollectorTest|OtlpTestServerTest|GpuSamplerTest|EngineMetricsCollectorTest|SessionTest|GraphAttribution|CaptureManagerTest|EventCaptureTest|MetricsExporterTest'
# The live path across processes (injection drain thread, fake CUPTI worker, agent event loop and
# writer, fork after CUDA init): a subset of the replay identity traces and the fault cases on a
# light trace (pool exhaustion needs the heavy default one). Every TSan report of any process goes
# to $tsan_logs and fails the stage; 77 (no ../shared/traces) is a skip. ~40 s.
tsan_logs=$(mktemp -d)
live_tsan() {
  local rc=0
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$tsan_logs/tsan" python3 "$@" \
    --inferscope build/tsan/src/cli/inferscope --replay-engine build/tsan/tests/fakes/replay_engine \
    || rc=$?
  if compgen -G "$tsan_logs/tsan.*" >/dev/null; then cat "$tsan_logs"/tsan.*; rc=1; fi
  [[ $rc == 0 || $rc == 77 ]] || { echo "TSan live run failed: $*"; exit 1; }
}
live_tsan tests/live/replay_identity.py --cupti-versions 130001,22 \
  --traces benchmark_result_2869224_1695835535_trace.json.gz,\
Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz,sampled_rank-1.json.gz,mfu_2gpu_after.sqlite,\
perlmutter-cloverleaf-cuda.sqlite
live_tsan tests/live/live_faults.py --trace Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz \
  --cases no_agent,agent_restart,other_subscriber,fork_child,killed,bad_timestamps,cupti_errors,\
version_gate,stub_driver,cuda12_status,dead_agent
live_tsan tests/live/live_faults.py --cases pool_exhaustion
# Captures across the same threads (the agent's capture writer, the drain thread's socket reads).
live_tsan tests/live/live_capture.py --cases multi_rank,agent_dies,two_at_once
rm -rf "$tsan_logs"

echo "== fuzzers (short runs) =="
# Every parser of outside input: traces, rule files, the wire format, OTLP bodies, Prometheus
# text, stored telemetry JSON, the agent's API answers, diagnosis thresholds, price tables.
FUZZERS=(src/import/kineto/kineto_importer_fuzzer src/import/kineto/host_range_scanner_fuzzer
         src/import/nsys/nsys_importer_fuzzer
         src/model/taxonomy_fuzzer src/wire/window_codec_fuzzer src/wire/framing_fuzzer
         src/wire/capture_codec_fuzzer
         src/telemetry/otlp/otlp_decode_fuzzer src/telemetry/scrape/prometheus_text_fuzzer
         src/telemetry/nvml/gpu_metrics_window_fuzzer src/cli/status_parse_fuzzer
         src/analyze/diagnose_thresholds_fuzzer src/analyze/gpu_price_table_fuzzer
         src/fleet/sink/clickhouse_parse_fuzzer src/server/http_request_fuzzer)
cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j"$JOBS" --target "${FUZZERS[@]##*/}"
# Each fuzzer is one process on one core: $JOBS run at once. A fuzzer's output is printed whole
# when it ends (its last line on success, the last 40 with the crash otherwise); any failure fails
# the stage after the others are done.
fuzz_one() {
  local f=$1 corpus log rc=0
  corpus=$(mktemp -d)
  log=$(mktemp)
  # Seeds, where a test writes them (see below): the fuzzer starts from them, not from nothing.
  if [[ -d "$FUZZ_SEEDS/${f##*/}" ]]; then cp "$FUZZ_SEEDS/${f##*/}"/* "$corpus"/; fi
  "build/fuzz/$f" -max_total_time="${FUZZ_SECONDS:-30}" -max_len=16384 -timeout=10 \
    -rss_limit_mb=4096 "$corpus" >"$log" 2>&1 || rc=$?
  if [[ $rc == 0 ]]; then
    echo "-- ${f##*/} (${FUZZ_SECONDS:-30} s): $(tail -n 1 "$log")"
  else
    echo "-- ${f##*/} FAILED (exit $rc):"
    tail -n 40 "$log"
  fi
  rm -rf "$corpus" "$log"
  return $rc
}
# window_codec_fuzzer from full windows (every field, the current format): written by the ci
# build's wire_tests, which also checks that they round-trip.
FUZZ_SEEDS=$(mktemp -d)
export FUZZ_SEEDS
mkdir -p "$FUZZ_SEEDS/window_codec_fuzzer"
INFERSCOPE_FUZZ_SEEDS="$FUZZ_SEEDS/window_codec_fuzzer" build/ci/src/wire/wire_tests \
  --gtest_filter='WindowCodecTest.FuzzSeedsRoundTrip' >/dev/null
export -f fuzz_one
printf '%s\n' "${FUZZERS[@]}" | xargs -P "$JOBS" -I{} bash -c 'fuzz_one "$@"' _ {}
rm -rf "$FUZZ_SEEDS"

echo "== benchmark smoke runs =="
for b in build/ci/src/aggregate/aggregator_benchmark \
         build/ci/src/import/kineto/kineto_importer_benchmark \
         build/ci/src/import/nsys/nsys_importer_benchmark \
         build/ci/src/cli/analyze_benchmark \
         build/ci/src/inject/drain_benchmark \
         build/ci/src/telemetry/otlp/otlp_decode_benchmark \
         build/ci/src/telemetry/scrape/prometheus_text_benchmark \
         build/ci/src/server/metrics_exporter_benchmark \
         build/ci/src/perfetto/export_benchmark; do
  "$b" --benchmark_min_time=0.01 \
    --benchmark_filter='^BM_(Aggregate|ImportKineto|NsysReal|Analyze|Drain|Decode|Parse|Scrape|OnWindow|Render|KernelSlice|ExportTrace)' \
    2>&1 | tail -n 3
done
# Range queries over a small store filled through the write path (rollups on); full-size figures
# in docs/benchmarks.md.
sqb_dir=$(mktemp -d)
build/ci/bench/store_query_benchmark --gpus 2 --days 1 --dir "$sqb_dir/store" \
  --ranges 5m,1h,24h
rm -rf "$sqb_dir"
# The fleet benchmark on 16 GPUs x 1 h into its own clickhouse-server (skips without one; full-size
# figures in docs/benchmarks.md).
build/ci/bench/fleet_benchmark --gpus 16 --hours 1 --runs 1 --cpu-seconds 0
# context/diff --source over the same kind of fleet (every fact table), 16 GPUs x 1 h.
build/ci/bench/fleet_profile_benchmark --gpus 16 --hours 1 --runs 1
echo "scripts/test.sh --full: all stages passed"
