// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// What the drain path costs per CUPTI kernel record, end to end: walk a completed 4 MiB activity
// buffer with cuptiActivityGetNextRecord (the fake CUPTI's, which walks real record structs),
// decode each record (name interning through the pointer cache) straight into a live-mode
// Aggregator (10 s windows, 1 s lateness), as Session::Complete does, then zero the buffer as the
// pool does before handing it back. Target: at most 50 ns per
// kernel record, on both record layouts (CUDA 13's Kernel10 and CUDA 12's Kernel9: the fake
// walks the layout of the CUPTI version it is told to be). Argument 1: launch configurations on, as
// Session runs the Aggregator (registers and shared memory per name, the decoder announcing a
// change; the grid follows a batch size that changes every 64 launches of a name); 0: off.

#include <benchmark/benchmark.h>
#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/inject/cupti_decoder.h"
#include "tests/fakes/fake_cupti/fake_cupti_control.h"

namespace inferscope::inject {
namespace {

template <typename KernelRecord, uint32_t kCuptiVersion, CuptiLayout kLayout>
void BM_DrainKernelRecords(benchmark::State& state) {
  fake_cupti_set_version(kCuptiVersion);
  CuptiApi api;  // only what decoding calls, straight from the (fake) library
  api.ActivityGetNextRecord = &cuptiActivityGetNextRecord;
  api.GetCallbackName = &cuptiGetCallbackName;
  // 64 kernel names (stable pointers, like a module's), 4 streams, 100 k kernels/s.
  std::vector<std::string> names;
  const char* stems[] = {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn_",
                         "void vllm::rms_norm_kernel<c10::BFloat16, 8, 3>(",
                         "ncclDevKernel_AllReduce_Sum_bf16_RING_LL_",
                         "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<"};
  for (int i = 0; i < 64; ++i) names.push_back(std::string(stems[i % 4]) + std::to_string(i));
  const size_t record_bytes = sizeof(KernelRecord);
  const size_t records = (4u << 20) / record_bytes;
  std::vector<uint8_t> buffer(records * record_bytes + 8);
  uint8_t* base = buffer.data() + ((8 - reinterpret_cast<uintptr_t>(buffer.data()) % 8) % 8);

  model::NameTable table;
  model::KernelClassifier classifier;
  aggregate::AggregatorOptions options;
  options.window_ns = 10'000'000'000;
  options.lateness_ns = 1'000'000'000;
  options.launch_configs = state.range(0) != 0;
  uint64_t windows = 0;
  aggregate::Aggregator aggregator(options, &table, &classifier,
                                   [&](model::ProfileWindow&&) { ++windows; });
  CuptiDecoder decoder(&table, 1, &api, kLayout);
  // As Session wires it: eager kernels teach the graph attribution their durations.
  GraphAttribution graphs(1, options.window_ns, &table, &classifier);
  // DRAIN_GRAPHS=learning: a captured graph not sampled yet, so every eager kernel's duration is
  // learned (a server's first minute); unset: none (steady state); off: no graph attribution.
  const char* mode = getenv("DRAIN_GRAPHS");
  if (mode == nullptr || std::string(mode) != "off") decoder.set_graph_attribution(&graphs);
  if (mode != nullptr && std::string(mode) == "learning")
    graphs.SetComposition(1, std::vector<model::NameId>{table.Intern(names[0])});
  uint64_t t = 1'700'000'000'000'000'000ull;
  uint32_t correlation = 1;
  for (auto _ : state) {
    state.PauseTiming();  // CUPTI writes the records; we only pay for reading them
    for (size_t i = 0; i < records; ++i) {
      KernelRecord k;
      std::memset(&k, 0, sizeof(k));
      k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k.start = t;
      k.end = t + 3'000 + (i % 13) * 1'000;
      k.deviceId = 0;
      k.contextId = 1;
      k.streamId = static_cast<uint32_t>(7 + i % 4);
      k.correlationId = correlation++;
      k.name = names[i % names.size()].c_str();
      k.gridX = static_cast<int32_t>(1 + (i / (64 * 64)) % 3);
      k.gridY = k.gridZ = 1;
      k.blockX = 128;
      k.registersPerThread = 96;
      k.staticSharedMemory = 1024;
      k.dynamicSharedMemory = (i % 64) < 4 ? 49152 : 0;
      k.blockY = k.blockZ = 1;
      std::memcpy(base + i * record_bytes, &k, sizeof(k));
      t += 10'000;
    }
    state.ResumeTiming();
    decoder.Decode(base, records * record_bytes, &aggregator);
    // The pool zeroes what CUPTI wrote before the buffer goes back (ZEROED_OUT_ACTIVITY_BUFFER=1).
    std::memset(base, 0, records * record_bytes);
    aggregator.AdvanceTo(static_cast<int64_t>(t));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records));
  state.counters["ns_per_record"] =
      benchmark::Counter(static_cast<double>(state.iterations() * records),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  benchmark::DoNotOptimize(windows);
}
BENCHMARK(BM_DrainKernelRecords<CUpti_ActivityKernel10, 130001, CuptiLayout::kCuda13_0>)
    ->Name("BM_DrainKernelRecords/cuda13")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DrainKernelRecords<CUpti_ActivityKernel9, 22, CuptiLayout::kCuda12_0>)
    ->Name("BM_DrainKernelRecords/cuda12")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace inferscope::inject

BENCHMARK_MAIN();
