// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The aggregator alone: kernel events in time order (as a CUPTI buffer delivers them), 64 distinct
// names on 4 streams, classification cached after first sight. Target: >= 20 M kernel events/s.

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"

namespace inferscope::aggregate {
namespace {

void BM_AggregateKernels(benchmark::State& state) {
  model::NameTable names;
  model::KernelClassifier classifier;
  std::vector<model::NameId> ids;
  const char* stems[] = {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
                         "void vllm::rms_norm_kernel<c10::BFloat16>",
                         "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
                         "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits>"};
  for (int i = 0; i < 64; ++i)
    ids.push_back(names.Intern(std::string(stems[i % 4]) + std::to_string(i)));
  // 100k kernels/s per GPU (the sizing target for LLM serving) into one long-lived Aggregator with
  // 10 s windows and the default 2 s lateness horizon: the steady state of the live drain thread.
  // Second argument 1: launch configurations on (as the injection library runs it): each name
  // runs with three grids, changing every 64 of its launches (as the batch size changes between
  // steps), and has its resources announced once, four names with a new dynamic shared-memory size
  // every 1,024 launches (as the decoder announces a change). 2: the grid changes every launch
  // of a name (no launch repeats its kernel's previous configuration: the worst case).
  const int64_t n = state.range(0);
  const int64_t mode = state.range(1);
  const bool configs = mode != 0;
  const int64_t grid_every = mode == 2 ? 64 : 64 * 64;
  std::vector<model::KernelEvent> events(static_cast<size_t>(n));
  AggregatorOptions options;
  options.window_ns = 10'000'000'000;
  options.launch_configs = configs;
  uint64_t windows = 0;
  Aggregator aggregator(options, &names, &classifier, [&](model::ProfileWindow&&) { ++windows; });
  auto announce = [&](model::NameId name, int32_t dynamic_shared) {
    model::KernelResourcesEvent r;
    r.pid = 1;
    r.name = name;
    r.resources = {128, 1024, dynamic_shared, 1024 + dynamic_shared};
    aggregator.OnKernelResources(r);
  };
  if (configs)
    for (model::NameId id : ids) announce(id, 0);
  int64_t t = 1'000'000;
  uint32_t correlation = 1;
  for (auto _ : state) {
    state.PauseTiming();
    for (int64_t i = 0; i < n; ++i) {
      auto& k = events[static_cast<size_t>(i)];
      k.pid = 1;
      k.stream = static_cast<uint32_t>(i % 4);
      k.start_ns = t;
      k.end_ns = t + 3'000 + (i % 13) * 1'000;
      k.name = ids[static_cast<size_t>(i % 64)];
      k.correlation_id = correlation++;
      k.grid[0] = 108 * static_cast<int32_t>(1 + (i / grid_every) % 3);
      k.grid[1] = k.grid[2] = 1;
      k.block[0] = 128;
      k.block[1] = k.block[2] = 1;
      t += 10'000;
    }
    state.ResumeTiming();
    for (size_t i = 0; i < events.size(); ++i) {
      if (configs && i % 1024 == 0) announce(ids[(i / 1024) % 4], static_cast<int32_t>(i % 8192));
      aggregator.OnKernel(events[i]);
    }
  }
  aggregator.Finish();
  benchmark::DoNotOptimize(windows);
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_AggregateKernels)
    ->Args({1 << 18, 0})
    ->Args({1 << 18, 1})
    ->Args({1 << 18, 2})
    ->Unit(benchmark::kMillisecond);

// The same kernels, each after its launch call on one host thread (what eager serving delivers:
// one runtime API record per kernel). Exercises the per-call bookkeeping of the causal idle split.
// Second argument 1: NVTX ranges too, with the live range table on (`run --nvtx`): emit_nvtx-style,
// one op range per launch ("aten::mm, seq = N", grouped by op), a layer range per 4 launches and a
// step range per 64, each delivered when it ends (as CUPTI's END marker record).
// 2: as 1, with the steps from the step ranges (AggregatorOptions::step_ranges, as `run --nvtx`
// does): the step range is named as TensorRT-LLM names iterations, each name distinct.
// 3: step ranges only (no range table), the step-range-heavy stream: a step range per 8 launches.
void BM_AggregateKernelsWithLaunches(benchmark::State& state) {
  model::NameTable names;
  model::KernelClassifier classifier;
  std::vector<model::NameId> ids;
  const char* stems[] = {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
                         "void vllm::rms_norm_kernel<c10::BFloat16>",
                         "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
                         "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits>"};
  for (int i = 0; i < 64; ++i)
    ids.push_back(names.Intern(std::string(stems[i % 4]) + std::to_string(i)));
  const model::NameId launch_name = names.Intern("cudaLaunchKernel");
  const int64_t n = state.range(0);
  const int64_t mode = state.range(1);
  const bool ranges = mode != 0;
  const int64_t step_every = mode == 3 ? 8 : 64;
  std::vector<model::NameId> op_names, layer_names;
  for (int i = 0; i < 1024; ++i)
    op_names.push_back(names.Intern("aten::op" + std::to_string(i % 8) + ", seq = " +
                                    std::to_string(i) + ", op_id = " + std::to_string(i * 3)));
  for (int i = 0; i < 8; ++i) layer_names.push_back(names.Intern("layer " + std::to_string(i)));
  const model::NameId step_name = names.Intern("step");
  std::vector<model::NameId> iteration_names;  // "[Executor] _forward_step N: ..." (TensorRT-LLM)
  for (int i = 0; i < 4096; ++i)
    iteration_names.push_back(names.Intern("[Executor] _forward_step " + std::to_string(i) + ": " +
                                           std::to_string(i % 16 == 0 ? 1 : 0) + " ctx reqs, " +
                                           "64 gen reqs"));
  std::vector<model::KernelEvent> events(static_cast<size_t>(n));
  std::vector<model::ApiCallEvent> calls(static_cast<size_t>(n));
  // Ranges to deliver after kernel i: (index of the kernel after which it ends, range).
  std::vector<std::vector<model::NvtxEvent>> ends(ranges ? static_cast<size_t>(n) : 0);
  AggregatorOptions options;
  options.window_ns = 10'000'000'000;
  options.ranges = mode == 1 || mode == 2;
  options.step_ranges = mode >= 2;
  uint64_t windows = 0;
  Aggregator aggregator(options, &names, &classifier, [&](model::ProfileWindow&&) { ++windows; });
  int64_t t = 1'000'000;
  uint32_t correlation = 1;
  for (auto _ : state) {
    state.PauseTiming();
    for (int64_t i = 0; i < n; ++i) {
      auto& c = calls[static_cast<size_t>(i)];
      c.pid = 1;
      c.tid = 7;
      c.start_ns = t - 5'000;
      c.end_ns = t - 1'000;
      c.correlation_id = correlation;
      c.name = launch_name;
      c.kind = model::ApiKind::kKernelLaunch;
      auto& k = events[static_cast<size_t>(i)];
      k.pid = 1;
      k.stream = static_cast<uint32_t>(i % 4);
      k.start_ns = t;
      k.end_ns = t + 3'000 + (i % 13) * 1'000;
      k.name = ids[static_cast<size_t>(i % 64)];
      k.correlation_id = correlation++;
      if (ranges) {
        auto range = [&](model::NameId name, int64_t span) {
          model::NvtxEvent r;
          r.pid = 1;
          r.tid = 7;
          r.name = name;
          r.start_ns = t - 6'000 - (span - 1) * 10'000;  // opens before the first call it holds
          r.end_ns = t - 500;
          return r;
        };
        auto& out = ends[static_cast<size_t>(i)];
        out.clear();
        if (mode != 3) {
          out.push_back(range(op_names[static_cast<size_t>(i % 1024)], 1));
          if (i % 4 == 3) out.push_back(range(layer_names[static_cast<size_t>((i / 4) % 8)], 4));
        }
        if (i % step_every == step_every - 1)
          out.push_back(range(
              mode >= 2 ? iteration_names[static_cast<size_t>((i / step_every) % 4096)] : step_name,
              step_every));
      }
      t += 10'000;
    }
    state.ResumeTiming();
    for (int64_t i = 0; i < n; ++i) {
      aggregator.OnApiCall(calls[static_cast<size_t>(i)]);
      aggregator.OnKernel(events[static_cast<size_t>(i)]);
      if (ranges)
        for (const model::NvtxEvent& r : ends[static_cast<size_t>(i)]) aggregator.OnNvtx(r);
    }
  }
  aggregator.Finish();
  benchmark::DoNotOptimize(windows);
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_AggregateKernelsWithLaunches)
    ->Args({1 << 18, 0})
    ->Args({1 << 18, 1})
    ->Args({1 << 18, 2})
    ->Args({1 << 18, 3})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace inferscope::aggregate

BENCHMARK_MAIN();
