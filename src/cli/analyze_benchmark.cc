// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// `inferscope analyze` end to end (import + aggregate + analyze + JSON report) on one core.
//   analyze_benchmark                 the largest shared Kineto trace (.json and .json.gz) and an
//                                     Nsight export; bytes/s counts uncompressed JSON
//   analyze_benchmark --file=PATH     any trace (e.g. a 1 GB trace from tools/tile_kineto_trace.py)
// Each input also runs with each `--views` view on (".../views:kernels"), to check what a view
// costs against the run without it (at most 10% of analyze throughput each).

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <string>

#include "src/aggregate/aggregator.h"
#include "src/cli/analyze_command.h"
#include "src/import/trace_importer.h"
#include "tests/trace_paths.h"

namespace {

using namespace inferscope;  // NOLINT

// Uncompressed bytes and kernel count of a trace, from one import (not timed).
import::ImportStats Measure(const std::string& path){model::NameTable names;
model::KernelClassifier classifier;
import::ImportStats stats;
aggregate::AggregateWholeTrace({}, &names, &classifier, [&](model::EventSink* sink) {
  auto s = import::ImportTrace(path, &names, sink);
  if (s.ok()) stats = *s;
});
return stats;
}  // namespace

// CPU time of the calling thread, in ms.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

void RunAnalyzeBenchmark(benchmark::State& state, const std::string& path,
                         const std::string& views) {
  if (path.empty()) {
    state.SkipWithError("trace not available (../shared/traces absent?)");
    return;
  }
  const import::ImportStats stats = Measure(path);
  cli::AnalyzeOptions options;
  options.paths = {path};
  options.format = report::ReportFormat::kJson;
  if (!views.empty() && !cli::ParseViewList(views, &options.views).ok()) {
    state.SkipWithError("bad view list");
    return;
  }
  double calling_thread_ms = 0;
  for (auto _ : state) {
    std::ostringstream out, err;
    const double before = ThreadCpuMs();
    if (cli::RunAnalyze(options, out, err) != 0) {
      state.SkipWithError(err.str().c_str());
      return;
    }
    calling_thread_ms += ThreadCpuMs() - before;
    benchmark::DoNotOptimize(out.str().size());
  }
  // The calling thread is the import's producer (scan and parse) and then runs the Aggregator's
  // finish and the report; the rest of the process CPU is the pipeline's consumer thread (the
  // Aggregator's and the views' per-event work) and the views' finish. Beside real time this
  // shows which side a view's cost lands on (what limits the wall-clock throughput).
  state.counters["calling_thread_cpu_ms"] =
      benchmark::Counter(calling_thread_ms, benchmark::Counter::kAvgIterations);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stats.input_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * stats.kernels));
  state.counters["kernels"] = static_cast<double>(stats.kernels);
}

}  // namespace

// The run without views, then one per view and all of them.
void Register(const std::string& name, const std::string& path) {
  for (const char* views : {"", "kernels", "streams", "steps", "ranges", "ops", "all"}) {
    const std::string suffix = *views ? std::string("/views:") + views : "";
    // Process CPU time (both pipeline threads) beside real time: on a shared machine real time
    // swings with the load, the CPU a view adds does not.
    benchmark::RegisterBenchmark((name + suffix).c_str(), RunAnalyzeBenchmark, path,
                                 std::string(views))
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
  }
}

int main(int argc, char** argv) {
  const std::string file = testing::TakeFileFlag(&argc, argv);
  std::string temp_json;
  if (!file.empty()) {
    Register("BM_Analyze/file", file);
  } else {
    const std::string gz =
        testing::SharedTrace("HolisticTraceAnalysis/df_index_resolver/df_index_resolver.json.gz");
    if (gz.empty()) {
      std::fprintf(stderr,
                   "analyze_benchmark: ../shared/traces not found (set INFERSCOPE_SHARED_TRACES "
                   "or pass --file=PATH); skipping\n");
      return 0;
    }
    temp_json = testing::DecompressToTemp(gz, "_analyze_bench.json");
    Register("BM_Analyze/df_index_resolver.json", temp_json);
    benchmark::RegisterBenchmark("BM_Analyze/df_index_resolver.json.gz", RunAnalyzeBenchmark, gz,
                                 std::string())
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    Register("BM_Analyze/mfu_2gpu_before.sqlite",
             testing::SharedTrace("nsys-ai/mfu_2gpu_before.sqlite"));
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!temp_json.empty()) std::remove(temp_json.c_str());
  return 0;
}
