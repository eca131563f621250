// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The agent's memory while it receives and writes a large live capture: N processes,
// each a GPU at 10^5 kernel records per second with their launch calls, for a span of S seconds,
// streamed to the agentd::CaptureManager as the processes send them (1 MiB chunks), then written as
// Perfetto. Reports the chunk bytes held, and the agent's resident memory: with the chunks held,
// and its peak while decoding and writing (VmHWM after resetting it through /proc/self/clear_refs),
// as a multiple of the chunk bytes (the bound in docs/agent.md, "Capture").

#include <benchmark/benchmark.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "src/agentd/capture.h"
#include "src/wire/capture_codec.h"
#include "tests/temp_dir.h"

namespace inferscope::bench {
namespace {

constexpr int64_t kNow = 1'700'000'000'000'000'000;
constexpr int64_t kRatePerSecond = 100'000;  // kernel records per second per GPU

uint64_t StatusKib(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(f, line))
    if (line.rfind(prefix, 0) == 0) return std::stoull(line.substr(prefix.size()));
  return 0;
}

// Resets VmHWM to the current RSS (Linux 4.0+); false when the kernel refuses.
bool ResetPeak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  return static_cast<bool>(f);
}

// One process's chunks: `seconds` of a GPU at 10^5 kernels/s, each with its cudaLaunchKernel.
std::vector<std::string> ProcessChunks(uint64_t capture_id, int64_t start_ns, int64_t seconds) {
  std::vector<std::string> chunks;
  wire::CaptureChunkWriter w;
  w.Begin(capture_id, 0);
  const char* stems[] = {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn_",
                         "void vllm::rms_norm_kernel<c10::BFloat16, 8, 3>(",
                         "ncclDevKernel_AllReduce_Sum_bf16_RING_LL_",
                         "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<"};
  for (uint32_t i = 0; i < 64; ++i) w.Name(i + 1, stems[i % 4] + std::to_string(i));
  w.Name(100, "cudaLaunchKernel");
  const int64_t period = 1'000'000'000 / kRatePerSecond;
  for (int64_t i = 0; i < seconds * kRatePerSecond; ++i) {
    const int64_t t = start_ns + i * period;
    model::ApiCallEvent a;
    a.start_ns = t - 4'000;
    a.end_ns = t - 1'000;
    a.tid = 4242;
    a.name = 100;
    a.kind = model::ApiKind::kKernelLaunch;
    a.correlation_id = static_cast<uint32_t>(i + 1);
    w.ApiCall(a);
    model::KernelEvent k;
    k.start_ns = t;
    k.end_ns = t + 3'000 + (i % 13) * 500;
    k.stream = static_cast<uint32_t>(7 + i % 4);
    k.name = static_cast<model::NameId>(1 + i % 64);
    k.correlation_id = static_cast<uint32_t>(i + 1);
    k.grid[0] = 132;
    k.block[0] = 128;
    w.Kernel(k);
    if (w.size() >= wire::kCaptureChunkTargetBytes) {
      chunks.push_back(w.Take());
      w.Begin(capture_id, static_cast<uint32_t>(chunks.size()));
    }
  }
  if (!w.empty()) chunks.push_back(w.Take());
  return chunks;
}

void BM_AgentWritesALargeCapture(benchmark::State& state) {
  const int processes = static_cast<int>(state.range(0));
  const int64_t seconds = state.range(1);
  const std::string format = state.range(2) == 0 ? "pftrace" : "json";
  uint64_t chunk_bytes = 0, events = 0;
  double held_mib = 0, peak_mib = 0, before_mib = 0;
  for (auto _ : state) {
    testing::TempDir dir;
    agentd::CaptureManager m(dir.path());
    agentd::CaptureSpec spec;
    spec.duration_ns = seconds * 1'000'000'000;
    spec.format = format;
    auto id = m.Start(spec);
    if (!id.ok()) {
      state.SkipWithError(id.status().message().c_str());
      return;
    }
    std::vector<agentd::CaptureTarget> targets;
    for (int p = 0; p < processes; ++p)
      targets.push_back(
          {static_cast<uint64_t>(p + 1), static_cast<uint32_t>(1000 + p), p, processes, true, {}});
    std::vector<std::pair<uint64_t, std::string>> frames;
    m.Dispatch(targets, kNow, &frames);
    before_mib = StatusKib("VmRSS") / 1024.0;
    chunk_bytes = 0;
    std::string error;
    // The processes' chunks arrive interleaved, as they stream them.
    std::vector<std::vector<std::string>> per_process;
    for (int p = 0; p < processes; ++p)
      per_process.push_back(ProcessChunks(*id, kNow + agentd::CaptureManager::kLeadNs, seconds));
    for (size_t i = 0;; ++i) {
      bool any = false;
      for (int p = 0; p < processes; ++p) {
        if (i >= per_process[p].size()) continue;
        any = true;
        chunk_bytes += per_process[p][i].size();
        m.OnFrame(static_cast<uint64_t>(p + 1),
                  static_cast<uint16_t>(wire::FrameType::kCaptureChunk), per_process[p][i], &error);
        std::string().swap(per_process[p][i]);  // the socket's copy is gone once received
      }
      if (!any) break;
    }
    per_process.clear();
    held_mib = StatusKib("VmRSS") / 1024.0;
    if (!ResetPeak()) {
      state.SkipWithError("cannot reset VmHWM (/proc/self/clear_refs)");
      return;
    }
    for (int p = 0; p < processes; ++p) {
      wire::CaptureEnd end;
      end.capture_id = *id;
      end.events = static_cast<uint64_t>(seconds * kRatePerSecond * 2);
      std::string payload;
      wire::EncodeCaptureEnd(end, &payload);
      m.OnFrame(static_cast<uint64_t>(p + 1), static_cast<uint16_t>(wire::FrameType::kCaptureEnd),
                payload, &error);
    }
    m.Poll(kNow + agentd::CaptureManager::kLeadNs + spec.duration_ns + 2'000'000'000);
    while (!m.TracePath(*id).ok()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    peak_mib = StatusKib("VmHWM") / 1024.0;
    events = static_cast<uint64_t>(processes * seconds * kRatePerSecond * 2);
  }
  const double chunks_mib = static_cast<double>(chunk_bytes) / (1 << 20);
  state.counters["events"] = static_cast<double>(events);
  state.counters["chunks_MiB"] = chunks_mib;
  state.counters["rss_before_MiB"] = before_mib;
  state.counters["rss_chunks_held_MiB"] = held_mib;
  state.counters["rss_peak_writing_MiB"] = peak_mib;
  state.counters["peak_growth_x_chunks"] = (peak_mib - before_mib) / chunks_mib;
}
// 4 GPUs x 5 s and 8 GPUs x 5 s at 10^5 kernels/s each (with launches), Perfetto protobuf.
BENCHMARK(BM_AgentWritesALargeCapture)
    ->Args({4, 5, 0})
    ->Args({8, 5, 0})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace inferscope::bench

BENCHMARK_MAIN();
