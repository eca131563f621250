// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Import throughput of the streaming Kineto importer on a real trace, with a counting sink.
//   kineto_importer_benchmark                   the shared df_index_resolver trace (.json,
//   .json.gz) kineto_importer_benchmark --file=PATH       any trace file (e.g. a tiled 1 GB trace)

#include <benchmark/benchmark.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "src/import/kineto/kineto_importer.h"

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
  void OnDataQuality(uint32_t, model::DataQuality, uint64_t) override {}
  uint64_t kernels = 0, others = 0;
};

void RunImport(benchmark::State& state, const std::string& path) {
  if (path.empty()) {
    state.SkipWithError("trace not available (../shared/traces absent?)");
    return;
  }
  uint64_t bytes = 0;
  for (auto _ : state) {
    model::NameTable names;
    CountingSink sink;
    auto stats = import::ImportKinetoTrace(path, &names, &sink);
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

std::string SharedTracesDir() {
  if (const char* env = std::getenv("INFERSCOPE_SHARED_TRACES"); env && *env) return env;
  std::filesystem::path p =
      std::filesystem::path(INFERSCOPE_SOURCE_DIR) / ".." / "shared" / "traces";
  std::error_code ec;
  return std::filesystem::is_directory(p, ec) ? p.string() : std::string();
}

// Decompresses the shared trace once into a temp file, so the .json case reads plain JSON.
std::string Decompressed(const std::string& gz_path) {
  const std::string out = std::filesystem::temp_directory_path().string() +
                          "/inferscope_kineto_bench_" + std::to_string(::getpid()) + ".json";
  gzFile in = gzopen(gz_path.c_str(), "rb");
  FILE* f = std::fopen(out.c_str(), "wb");
  if (!in || !f) {
    if (in) gzclose(in);
    if (f) std::fclose(f);
    return {};
  }
  std::string buf(1 << 20, '\0');
  int n;
  while ((n = gzread(in, buf.data(), static_cast<unsigned>(buf.size()))) > 0) {
    std::fwrite(buf.data(), 1, static_cast<size_t>(n), f);
  }
  gzclose(in);
  std::fclose(f);
  return n < 0 ? std::string() : out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--file=", 7) == 0) {
      file = argv[i] + 7;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  }
  std::string temp_json;
  if (!file.empty()) {
    benchmark::RegisterBenchmark("BM_ImportKineto/file", RunImport, file)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  } else {
    const std::string dir = SharedTracesDir();
    if (dir.empty()) {
      std::fprintf(stderr,
                   "kineto_importer_benchmark: ../shared/traces not found (set "
                   "INFERSCOPE_SHARED_TRACES or pass --file=PATH); skipping\n");
      return 0;
    }
    const std::string gz =
        dir + "/HolisticTraceAnalysis/df_index_resolver/df_index_resolver.json.gz";
    temp_json = Decompressed(gz);
    benchmark::RegisterBenchmark("BM_ImportKineto/df_index_resolver.json", RunImport, temp_json)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark("BM_ImportKineto/df_index_resolver.json.gz", RunImport, gz)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!temp_json.empty()) std::remove(temp_json.c_str());
  return 0;
}
