// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The capture's cost inside a serving process: a GPU at 10^5 kernel records per second,
// each launched by a CUDA call, recorded for the capture's span. Reports the encoded bytes per
// event, the memory held by the recorder and its queue (the open chunk plus sealed chunks waiting
// for the drain thread's 500 ms tick) against the default cap (256 MiB for the whole capture; an
// 8-GPU host gives each process 32 MiB), and the CPU per recorded event (on CUPTI's completion
// path, under the session's lock).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/inject/event_capture.h"

namespace inferscope::inject {
namespace {

constexpr int64_t kStart = 1'700'000'000'000'000'000;
constexpr int64_t kRatePerSecond = 100'000;  // kernel records per second per GPU
constexpr int64_t kTickNs = 500'000'000;     // the drain thread hands chunks out every flush

// Records `seconds` of a GPU at 10^5 kernels/s (and their launch calls) into a capture with
// `cap_bytes`; returns the peak bytes held (open chunk + sealed, not yet handed out).
void RecordSpan(benchmark::State& state, int64_t seconds, uint64_t cap_bytes) {
  model::NameTable names;
  std::vector<model::NameId> kernels;
  const char* stems[] = {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn_",
                         "void vllm::rms_norm_kernel<c10::BFloat16, 8, 3>(",
                         "ncclDevKernel_AllReduce_Sum_bf16_RING_LL_",
                         "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<"};
  for (int i = 0; i < 64; ++i) kernels.push_back(names.Intern(stems[i % 4] + std::to_string(i)));
  const model::NameId launch = names.Intern("cudaLaunchKernel");
  const int64_t period = 1'000'000'000 / kRatePerSecond;
  uint64_t events = 0, peak = 0, bytes = 0;
  for (auto _ : state) {
    EventCapture capture(&names);
    capture.Request({1, kStart, seconds * 1'000'000'000, cap_bytes, 100'000'000});
    std::vector<std::string> frames;
    int64_t next_tick = kStart + kTickNs;
    events = 0;
    bytes = 0;
    peak = 0;
    for (int64_t i = 0; i < seconds * kRatePerSecond; ++i) {
      const int64_t t = kStart + i * period;
      model::ApiCallEvent a;
      a.start_ns = t - 4'000;
      a.end_ns = t - 1'000;
      a.tid = 4242;
      a.name = launch;
      a.kind = model::ApiKind::kKernelLaunch;
      a.correlation_id = static_cast<uint32_t>(i + 1);
      if (capture.Wants(a.start_ns)) capture.Add(a);
      model::KernelEvent k;
      k.start_ns = t;
      k.end_ns = t + 3'000 + (i % 13) * 500;
      k.stream = static_cast<uint32_t>(7 + i % 4);
      k.name = kernels[static_cast<size_t>(i) % kernels.size()];
      k.correlation_id = static_cast<uint32_t>(i + 1);
      k.grid[0] = 128;
      k.grid[1] = k.grid[2] = 1;
      k.block[0] = 256;
      k.block[1] = k.block[2] = 1;
      if (capture.Wants(k.start_ns)) capture.Add(k);
      if (t >= next_tick) {
        // The drain thread's tick: sealed chunks leave for the socket's bulk queue.
        frames.clear();
        capture.Poll(t, 1'500'000'000, &frames);
        for (const auto& f : frames) bytes += f.size();
        next_tick += kTickNs;
      }
      peak = std::max<uint64_t>(peak, capture.held_bytes() + capture.sealed_bytes());
    }
    frames.clear();
    capture.Poll(kStart + (seconds + 2) * 1'000'000'000, 1'500'000'000, &frames);
    for (const auto& f : frames) bytes += f.size();
    events = capture.recorded_events();
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["bytes_per_event"] = static_cast<double>(bytes) / static_cast<double>(events);
  state.counters["MB_per_s_per_GPU"] =
      static_cast<double>(bytes) / 1e6 / static_cast<double>(seconds);
  state.counters["peak_held_MB"] = static_cast<double>(peak) / 1e6;
  state.counters["sent_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["cap_MB"] = static_cast<double>(cap_bytes) / 1e6;
  state.counters["ns_per_event"] = benchmark::Counter(
      static_cast<double>(events),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// A 2 s capture on an 8-GPU host (32 MiB per process).
void BM_Capture2sAt1e5KernelsPerSecond(benchmark::State& state) {
  RecordSpan(state, 2, (256ull << 20) / 8);
}
BENCHMARK(BM_Capture2sAt1e5KernelsPerSecond)->Unit(benchmark::kMillisecond)->Iterations(3);

// 20 s: more than the 8-GPU share holds; the cap stops recording and memory stays under it.
void BM_Capture20sAt1e5KernelsPerSecondHitsTheCap(benchmark::State& state) {
  RecordSpan(state, 20, (256ull << 20) / 8);
}
BENCHMARK(BM_Capture20sAt1e5KernelsPerSecondHitsTheCap)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace inferscope::inject

BENCHMARK_MAIN();
