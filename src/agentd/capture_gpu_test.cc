// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// A capture's GPUs: NVML's samples of the captured seconds (through the fake libnvidia-ml.so.1)
// become counter tracks on each captured GPU, matched by UUID to the process's CUDA ordinal, and
// the GPU tracks carry the device's name.

#include "src/agentd/capture_gpu.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "src/agentd/capture.h"
#include "src/telemetry/nvml/gpu_sampler.h"
#include "src/wire/capture_codec.h"
#include "src/wire/framing.h"
#include "tests/temp_dir.h"

namespace inferscope::agentd {
namespace {

constexpr int64_t kNow = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;
// The fake NVML's GPU UUIDs ("GPU-fa4e0000-0000-0000-0000-00000000000N" for index N).
const char kUuid0[] = "GPU-fa4e0000-0000-0000-0000-000000000000";
const char kUuid1[] = "GPU-fa4e0000-0000-0000-0000-000000000001";

class ScopedScenario {
 public:
  explicit ScopedScenario(const std::string& spec) {
    setenv("FAKE_NVML_SCENARIO", spec.c_str(), 1);
  }
  ~ScopedScenario() { unsetenv("FAKE_NVML_SCENARIO"); }
};

std::string Kernels(uint64_t capture_id, int64_t start_ns) {
  wire::CaptureChunkWriter w;
  w.Begin(capture_id, 0);
  w.Name(3, "_Z4gemmv");
  for (int i = 0; i < 100; ++i) {
    model::KernelEvent k;
    k.start_ns = start_ns + i * 10 * kMs;
    k.end_ns = k.start_ns + 5 * kMs;
    k.name = 3;
    k.stream = 7;
    k.device = 0;  // CUDA 0 in both processes
    w.Kernel(k);
  }
  return w.Take();
}

std::string StateOf(CaptureManager& m, uint64_t id) {
  simdjson::dom::parser parser;
  std::string_view state;
  auto json = m.StatusJson(id);
  EXPECT_TRUE(json.ok());
  EXPECT_EQ(parser.parse(*json)["state"].get(state), simdjson::SUCCESS);
  return std::string(state);
}

TEST(CaptureGpuTest, NvmlMetricsOfTheCapturedSecondsAreCounterTracksOnEachGpu) {
  ScopedScenario scenario("devices=2");
  telemetry::GpuSampler sampler(FAKE_NVML_PATH);
  ASSERT_TRUE(sampler.enabled()) << sampler.health();
  testing::TempDir dir;
  CaptureManager m(dir.path() + "/captures");
  m.SetGpuSamples([&](int64_t from, int64_t to) { return sampler.Samples(from, to); });
  CaptureSpec spec;
  spec.format = "json";
  auto id = m.Start(spec);
  ASSERT_TRUE(id.ok());
  // Rank 0 sees NVML's GPU 1 as its CUDA 0 (CUDA_VISIBLE_DEVICES=1) and its windows said so before
  // the capture; rank 1's first window arrives during the capture.
  std::vector<CaptureTarget> targets = {
      {11, 100, 0, 2, true, {{0, "NVIDIA H100 80GB HBM3", kUuid1}}},
      {12, 101, 1, 2, true, {}},
  };
  std::vector<std::pair<uint64_t, std::string>> frames;
  m.Dispatch(targets, kNow, &frames);
  ASSERT_EQ(frames.size(), 2u);
  const int64_t start = kNow + CaptureManager::kLeadNs, end = start + spec.duration_ns;
  m.OnDevices(12, {{0, "NVIDIA H100 80GB HBM3", kUuid0}});
  // The agent samples every 500 ms, from 750 ms before the span to 750 ms after it. The fake's
  // utilization on GPU d at its n-th sample is 20 + 10 * (n % 4) + d.
  for (int64_t t = start - 750 * kMs; t <= end + 750 * kMs; t += 500 * kMs) sampler.Sample(t);
  std::string error;
  for (uint64_t session : {11, 12}) {
    ASSERT_TRUE(m.OnFrame(session, static_cast<uint16_t>(wire::FrameType::kCaptureChunk),
                          Kernels(*id, start), &error));
    m.OnGone(session);
  }
  m.Poll(end);
  for (int i = 0; i < 500 && StateOf(m, *id) == "writing"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(StateOf(m, *id), "done");
  auto path = m.TracePath(*id);
  ASSERT_TRUE(path.ok());

  simdjson::dom::parser parser;
  simdjson::dom::element trace;
  ASSERT_EQ(parser.load(*path).get(trace), simdjson::SUCCESS);
  // The GPU tracks (processes in Chrome JSON) by their names; then each one's counters.
  std::map<int64_t, std::string> process_names;
  std::map<std::pair<int64_t, std::string>, std::vector<std::pair<double, double>>> counters;
  for (simdjson::dom::element e : trace["traceEvents"].get_array()) {
    std::string_view ph = e["ph"].get_string().value();
    const int64_t pid = e["pid"].get_int64().value();
    if (ph == "M" && e["name"].get_string().value() == "process_name")
      process_names[pid] = std::string(e["args"]["name"].get_string().value());
    if (ph == "C")
      counters[{pid, std::string(e["name"].get_string().value())}].emplace_back(
          e["ts"].get_double().value(), e["args"]["value"].get_double().value());
  }
  std::map<int32_t, int64_t> gpu_of_rank;
  for (const auto& [pid, name] : process_names) {
    if (name == "GPU 0 NVIDIA H100 80GB HBM3, rank 0 (pid 100)") gpu_of_rank[0] = pid;
    if (name == "GPU 0 NVIDIA H100 80GB HBM3, rank 1 (pid 101)") gpu_of_rank[1] = pid;
  }
  ASSERT_EQ(gpu_of_rank.size(), 2u) << "the GPU tracks carry the device's name";
  for (const auto& [rank, pid] : gpu_of_rank) {
    SCOPED_TRACE(rank);
    const double nvml_index = rank == 0 ? 1 : 0;
    // Timestamps are microseconds from the span's start (its kernels are the earliest events),
    // plus the 1 µs every Chrome JSON output starts at (a Kineto reader takes 0 for missing).
    // The sample in force at the start (750 ms before the first in the span), then each sample
    // of the span; none after it.
    const std::vector<std::pair<double, double>> expected = {
        {1, 30 + nvml_index},         {250'001, 40 + nvml_index},   {750'001, 50 + nvml_index},
        {1'250'001, 20 + nvml_index}, {1'750'001, 30 + nvml_index},
    };
    EXPECT_EQ((counters[{pid, "nvml: gpu_util_pct"}]), expected);
    for (const char* metric : {"nvml: mem_util_pct", "nvml: mem_used_bytes", "nvml: power_w",
                               "nvml: temperature_c", "nvml: sm_clock_mhz"})
      EXPECT_EQ((counters[{pid, metric}]).size(), 5u) << metric;
    EXPECT_EQ(counters.count({pid, "nvml: mem_total_bytes"}), 0u);  // a constant
    bool busy_share = false;  // beside the category busy shares
    for (const auto& [key, values] : counters)
      busy_share |= key.first == pid && key.second.rfind("busy share: ", 0) == 0;
    EXPECT_TRUE(busy_share);
  }
}

TEST(CaptureGpuTest, AGpuWithoutAKnownUuidGetsNoNvmlTracks) {
  telemetry::GpuSampleSeries nvml;
  nvml.index = 0;
  nvml.uuid = kUuid0;
  nvml.points = {{kNow, telemetry::kGpuUtilPct, "%", 50}};
  perfetto::EventSet set;
  model::KernelEvent k;
  k.pid = 100;
  k.start_ns = kNow;
  k.end_ns = kNow + 1;
  set.events.kernels.push_back(k);
  CaptureTarget target{11, 100, 0, 1, true, {}};
  AddCaptureGpus(target, {nvml}, kNow, kNow + 1000, &set);
  EXPECT_TRUE(set.gpu_counters.empty());
  EXPECT_TRUE(set.events.devices.empty());
  target.devices = {{0, "NVIDIA H100 80GB HBM3", kUuid0}};
  AddCaptureGpus(target, {nvml}, kNow, kNow + 1000, &set);
  ASSERT_EQ(set.gpu_counters.size(), 1u);
  EXPECT_EQ(set.gpu_counters[0].name, "nvml: gpu_util_pct");
  EXPECT_EQ(set.gpu_counters[0].unit, "%");
  EXPECT_EQ(set.gpu_counters[0].points, (std::vector<std::pair<int64_t, double>>{{kNow, 50}}));
  EXPECT_EQ(set.events.devices.size(), 1u);
}

}  // namespace
}  // namespace inferscope::agentd
