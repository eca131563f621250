// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
//
// What a kernel slice costs in a .pftrace and how fast a trace exports. BM_KernelSlice* write
// slices of a few recurring kernels on one stream (as a decode loop has them) and report
// bytes_per_slice: bare (name, category, timestamps) and with every argument the export writes
// plus the launch flow. BM_ExportTrace exports a whole trace file (INFERSCOPE_EXPORT_TRACE, else
// the largest shared trace, else the bundled example; a .gz is inflated first, so the rate is of
// the trace's JSON, not of its compressed bytes) and reports its input bytes per second.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "src/model/taxonomy.h"
#include "src/perfetto/trace_export.h"
#include "src/perfetto/track_event_writer.h"
#include "tests/trace_paths.h"

namespace inferscope::perfetto {
namespace {

constexpr const char* kNames[] = {"flash_fwd_splitkv_kernel", "nvjet_tst_128x256_64x4_1x2_h",
                                  "rms_norm_kernel", "act_and_mul_kernel"};
constexpr const char* kLaunches[] = {
    "void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>, true>"
    "(Flash_fwd_params) <<<(4,32,1), (128,1,1)>>>",
    "nvjet_tst_128x256_64x4_1x2_h <<<(132,1,1), (384,1,1)>>>",
    "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, float, int) <<<(8,1,1), "
    "(1024,1,1)>>>",
    "void vllm::act_and_mul_kernel<c10::BFloat16>(c10::BFloat16*, int) <<<(8,1,1), "
    "(1024,1,1)>>>"};

void WriteSlices(benchmark::State& state, bool with_args) {
  uint64_t bytes = 0, slices = 0;
  for (auto _ : state) {
    TrackEventWriter writer([&](std::string_view b) { bytes += b.size(); });
    writer.BeginSequence(1);
    int64_t t = 1'000'000'000;
    for (uint32_t i = 0; i < 100'000; ++i) {
      Slice s;
      s.start_ns = t;
      s.end_ns = t + 7'000 + (i % 13) * 100;
      t = s.end_ns + 1'500;
      s.name = kNames[i % 4];
      s.category = i % 4 == 0 ? "attention" : "matmul";
      // As the export writes an eagerly launched kernel: one interned `launch` argument (full
      // name, grid, block) and the end of its launch flow (the export's flow ids are dense: 1,
      // 2, ...), which leaves the correlation id to the launching call. A graph's later kernels
      // carry their correlation id instead of a flow: the same 4-5 bytes.
      Arg args[1] = {Arg::String("launch", kLaunches[i % 4])};
      if (with_args) {
        s.args = args;
        s.arg_count = 1;
        s.flow_in = 1 + i;
      }
      writer.WriteSlice(s);
    }
    writer.Finish();
    slices += 100'000;
  }
  state.counters["bytes_per_slice"] =
      benchmark::Counter(static_cast<double>(bytes) / static_cast<double>(slices));
  state.SetItemsProcessed(static_cast<int64_t>(slices));
}

void BM_KernelSliceBare(benchmark::State& state) { WriteSlices(state, false); }
void BM_KernelSliceWithArgsAndFlow(benchmark::State& state) { WriteSlices(state, true); }
BENCHMARK(BM_KernelSliceBare)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KernelSliceWithArgsAndFlow)->Unit(benchmark::kMillisecond);

std::string TraceToExport() {
  if (const char* env = std::getenv("INFERSCOPE_EXPORT_TRACE"); env && *env) return env;
  const std::string shared = testing::SharedTracesDir();
  const std::string largest =
      shared.empty()
          ? ""
          : shared + "/HolisticTraceAnalysis/df_index_resolver/df_index_resolver.json.gz";
  std::error_code ec;
  if (!largest.empty() && std::filesystem::exists(largest, ec)) return largest;
  return std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode/rank0.json.gz";
}

void BM_ExportTrace(benchmark::State& state) {
  std::string path = TraceToExport();
  std::string inflated;
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    inflated = testing::DecompressToTemp(path, "_export_bench.json");
    if (inflated.empty()) {
      state.SkipWithError("cannot inflate the trace");
      return;
    }
  }
  const std::string input_path = inflated.empty() ? path : inflated;
  const std::string out =
      std::filesystem::temp_directory_path() / "inferscope_export_bench.pftrace";
  model::KernelClassifier classifier;
  uint64_t input = 0;
  for (auto _ : state) {
    std::string failed;
    auto stats = ExportTraces({input_path}, out, classifier, {}, &failed);
    if (!stats.ok()) {
      state.SkipWithError(stats.status().message().c_str());
      return;
    }
    input += stats->input_bytes;
    state.counters["bytes_per_kernel_slice"] =
        static_cast<double>(stats->kernel_bytes) / static_cast<double>(stats->kernels);
  }
  std::remove(out.c_str());
  if (!inflated.empty()) std::remove(inflated.c_str());
  state.SetBytesProcessed(static_cast<int64_t>(input));
  state.SetLabel(path);
}
BENCHMARK(BM_ExportTrace)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace inferscope::perfetto

BENCHMARK_MAIN();
