// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Import throughput of the streaming Kineto importer on a real trace, with a counting sink.
//   kineto_importer_benchmark                   the shared df_index_resolver trace (.json,
//   .json.gz) kineto_importer_benchmark --file=PATH       any trace file (e.g. a tiled 1 GB trace)
// The .json also runs with the ops view's operators delivered ("/ops:reader", the hand-written
// reader of host_range_scanner.h; "/ops:simdjson", every operator parsed by simdjson): what
// parsing the operators costs the import, without the view.

#include <benchmark/benchmark.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "src/import/kineto/kineto_importer.h"
#include "tests/trace_paths.h"

namespace {

using namespace inferscope;  // NOLINT

// Counts kernels; the cheapest possible downstream.
class CountingSink final : public model::EventSink {
 public:
  void OnProcess(const model::ProcessInfo&) override {}
  void OnDevice(const model::DeviceInfo&) override {}
  void OnKernel(const model::KernelEvent& e) override { kernels += e.end_ns > e.start_ns; }
  void OnMemcpy(const model::MemcpyEvent&) override { ++others; }
  void OnMemset(const model::MemsetEvent&) override { ++others; }
  void OnSync(const model::SyncEvent&) override { ++others; }
  void OnApiCall(const model::ApiCallEvent&) override { ++others; }
  void OnNvtx(const model::NvtxEvent&) override { ++others; }
  void OnViewRange(const model::ViewRangeEvent&) override { ++others; }
  void OnDataQuality(uint32_t, model::DataQuality, uint64_t) override {}
  uint64_t kernels = 0, others = 0;
};

void RunImport(benchmark::State& state, const std::string& path,
               const import::KinetoImportOptions& options) {
  if (path.empty()) {
    state.SkipWithError("trace not available (../shared/traces absent?)");
    return;
  }
  uint64_t bytes = 0;
  for (auto _ : state) {
    model::NameTable names;
    CountingSink sink;
    auto stats = import::ImportKinetoTrace(path, &names, &sink, options);
    if (!stats.ok()) {
      state.SkipWithError(stats.status().message().c_str());
      return;
    }
    bytes += stats->input_bytes;
    benchmark::DoNotOptimize(sink.kernels);
    state.counters["kernels"] = static_cast<double>(stats->kernels);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string file = testing::TakeFileFlag(&argc, argv);
  std::string temp_json;
  if (!file.empty()) {
    benchmark::RegisterBenchmark("BM_ImportKineto/file", RunImport, file,
                                 import::KinetoImportOptions())
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  } else {
    const std::string dir = testing::SharedTracesDir();
    if (dir.empty()) {
      std::fprintf(stderr,
                   "kineto_importer_benchmark: ../shared/traces not found (set "
                   "INFERSCOPE_SHARED_TRACES or pass --file=PATH); skipping\n");
      return 0;
    }
    const std::string gz =
        dir + "/HolisticTraceAnalysis/df_index_resolver/df_index_resolver.json.gz";
    temp_json = testing::DecompressToTemp(gz, "_kineto_bench.json");
    for (const char* ops : {"", "reader", "simdjson"}) {
      import::KinetoImportOptions options;
      options.host_ops = *ops != 0;
      options.host_range_scanner = std::string(ops) != "simdjson";
      const std::string suffix = *ops ? std::string("/ops:") + ops : "";
      benchmark::RegisterBenchmark(("BM_ImportKineto/df_index_resolver.json" + suffix).c_str(),
                                   RunImport, temp_json, options)
          ->Unit(benchmark::kMillisecond)
          ->MeasureProcessCPUTime()
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark("BM_ImportKineto/df_index_resolver.json.gz", RunImport, gz,
                                 import::KinetoImportOptions())
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!temp_json.empty()) std::remove(temp_json.c_str());
  return 0;
}
