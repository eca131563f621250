// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/nvml/gpu_sampler.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <thread>

namespace inferscope::telemetry {
namespace {

// The fake's values (tests/fakes/fake_nvml, docs/gpu-metrics.md) cycle over 4 calls, so 4 samples
// one second apart give known min/mean/max.
constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kSecond = 1'000'000'000;
constexpr double kGiB = 1024.0 * 1024 * 1024;

// Sets FAKE_NVML_SCENARIO for one test (the fake reads it in nvmlInit).
class ScopedScenario {
 public:
  explicit ScopedScenario(const std::string& spec) {
    setenv("FAKE_NVML_SCENARIO", spec.c_str(), 1);
  }
  ~ScopedScenario() { unsetenv("FAKE_NVML_SCENARIO"); }
};

GpuMetricsWindow SampleN(GpuSampler& s, int n, int64_t start = kT0) {
  for (int i = 0; i < n; ++i) s.Sample(start + i * kSecond);
  return s.TakeWindow(start, start + n * kSecond);
}

const GpuMetricStats& M(const GpuDeviceWindow& d, const std::string& metric) {
  static const GpuMetricStats kNone;
  auto it = d.metrics.find(metric);
  return it == d.metrics.end() ? kNone : it->second;
}

void ExpectStats(const GpuDeviceWindow& d, const std::string& metric, uint64_t samples, double min,
                 double mean, double max) {
  SCOPED_TRACE(metric);
  const GpuMetricStats& m = M(d, metric);
  EXPECT_EQ(m.samples, samples);
  EXPECT_EQ(m.min, min);
  EXPECT_EQ(m.mean(), mean);
  EXPECT_EQ(m.max, max);
}

std::string MissingReason(const GpuDeviceWindow& d, const std::string& metric) {
  auto it = d.missing.find(metric);
  return it == d.missing.end() ? "" : it->second;
}

TEST(LoadNvmlTest, MissingLibrary) {
  auto by_name = LoadNvml("libnvidia-ml-inferscope-absent.so.1");
  ASSERT_FALSE(by_name.ok());
  EXPECT_EQ(by_name.status().code(), base::StatusCode::kUnavailable);
  EXPECT_EQ(by_name.status().message().rfind(
                "libnvidia-ml-inferscope-absent.so.1 not found: no NVIDIA driver on this host", 0),
            0u)
      << by_name.status().message();
  auto by_path = LoadNvml("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(by_path.ok());
  EXPECT_EQ(by_path.status().message(), "/nonexistent/libnvidia-ml.so.1 not found");
}

TEST(LoadNvmlTest, NotAnNvmlLibrary) {
  // A real shared library without NVML's symbols (the C library is always there).
  auto r = LoadNvml("libc.so.6");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "libc.so.6 lacks nvmlInit_v2: not a usable NVML library");
}

TEST(GpuSamplerTest, NoLibraryIsOffAndSampleIsANoOp) {
  GpuSampler s("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(s.enabled());
  EXPECT_EQ(s.health(), "off: /nonexistent/libnvidia-ml.so.1 not found");
  s.Sample(kT0);
  GpuMetricsWindow w = s.TakeWindow(kT0, kT0 + 10 * kSecond);
  EXPECT_TRUE(w.devices.empty());
  EXPECT_EQ(w.unavailable, "/nonexistent/libnvidia-ml.so.1 not found");
  EXPECT_EQ(w.start_unix_ns, kT0);
}

TEST(GpuSamplerTest, DefaultLibraryOnThisHost) {
  void* real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (real != nullptr) {
    dlclose(real);
    GTEST_SKIP() << "this host has an NVIDIA driver";
  }
  GpuSampler s;
  EXPECT_EQ(s.health().rfind("off: libnvidia-ml.so.1 not found: no NVIDIA driver on this host", 0),
            0u)
      << s.health();
}

TEST(GpuSamplerTest, InitFailureIsOffWithTheReason) {
  ScopedScenario scenario("init=driver_not_loaded");
  GpuSampler s(FAKE_NVML_PATH);
  EXPECT_FALSE(s.enabled());
  EXPECT_EQ(s.health(),
            "off: nvmlInit failed: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED): the NVIDIA "
            "kernel driver is not loaded (does nvidia-smi work?)");
  s.Sample(kT0);
  EXPECT_TRUE(s.TakeWindow(kT0, kT0 + kSecond).devices.empty());
}

TEST(GpuSamplerTest, InitNoPermission) {
  ScopedScenario scenario("init=no_permission");
  GpuSampler s(FAKE_NVML_PATH);
  EXPECT_EQ(s.health().rfind("off: nvmlInit failed: Insufficient Permissions "
                             "(NVML_ERROR_NO_PERMISSION): no permission to open /dev/nvidia*",
                             0),
            0u)
      << s.health();
}

// What a capture reads (Samples): each value as sampled, the one in force at the range's start
// first, independently of the windows taken meanwhile; older than kHistoryNs is forgotten.
TEST(GpuSamplerTest, SamplesKeepsTheRecentValuesForACapture) {
  ScopedScenario scenario("devices=2");
  GpuSampler s(FAKE_NVML_PATH);
  for (int i = 0; i < 5; ++i) s.Sample(kT0 + i * kSecond);
  (void)s.TakeWindow(kT0, kT0 + 10 * kSecond);  // the windows do not consume the history
  const std::vector<GpuSampleSeries> series =
      s.Samples(kT0 + 1500 * kSecond / 1000, kT0 + 3 * kSecond);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[1].index, 1);
  EXPECT_EQ(series[1].uuid, "GPU-fa4e0000-0000-0000-0000-000000000001");
  std::vector<std::pair<int64_t, double>> util;
  for (const auto& p : series[1].points) {
    if (std::string(p.metric) != kGpuUtilPct) continue;
    EXPECT_STREQ(p.unit, "%");
    util.emplace_back(p.unix_ns, p.value);
  }
  // The fake's utilization on GPU 1 at its n-th sample: 21 + 10 * (n % 4).
  EXPECT_EQ(util, (std::vector<std::pair<int64_t, double>>{
                      {kT0 + kSecond, 31}, {kT0 + 2 * kSecond, 41}, {kT0 + 3 * kSecond, 51}}));
  // Every point in time order, none after the range.
  for (size_t i = 1; i < series[1].points.size(); ++i)
    EXPECT_LE(series[1].points[i - 1].unix_ns, series[1].points[i].unix_ns);
  EXPECT_LE(series[1].points.back().unix_ns, kT0 + 3 * kSecond);

  s.Sample(kT0 + GpuSampler::kHistoryNs + 5 * kSecond);
  for (const auto& d : s.Samples(kT0, kT0 + 4 * kSecond)) EXPECT_TRUE(d.points.empty());
}

TEST(GpuSamplerTest, NoGpus) {
  ScopedScenario scenario("devices=0");
  GpuSampler s(FAKE_NVML_PATH);
  EXPECT_FALSE(s.enabled());
  EXPECT_EQ(s.health(),
            "off: the NVIDIA driver reports no GPUs (is this container given GPU access?)");
}

TEST(GpuSamplerTest, HopperAndAmpereExactValues) {
  ScopedScenario scenario("devices=2;arch=hopper,ampere");
  GpuSampler s(FAKE_NVML_PATH);
  ASSERT_TRUE(s.enabled()) << s.health();
  EXPECT_EQ(s.health(), "ok: 2 GPUs, driver 550.54.15; 4 device metrics unavailable");
  const GpuMetricsWindow w = SampleN(s, 4);
  EXPECT_EQ(w.start_unix_ns, kT0);
  EXPECT_EQ(w.end_unix_ns, kT0 + 4 * kSecond);
  EXPECT_EQ(w.unavailable, "");
  ASSERT_EQ(w.devices.size(), 2u);

  const GpuDeviceWindow& h = w.devices[0];
  EXPECT_EQ(h.index, 0);
  EXPECT_EQ(h.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h.uuid, "GPU-fa4e0000-0000-0000-0000-000000000000");
  EXPECT_EQ(h.pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(h.architecture, "hopper");
  EXPECT_EQ(h.compute_capability, "9.0");
  EXPECT_EQ(h.samples, 4u);
  EXPECT_FALSE(h.lost);
  EXPECT_TRUE(h.missing.empty()) << h.missing.begin()->first;
  ExpectStats(h, kGpuUtilPct, 4, 20, 35, 50);
  ExpectStats(h, kMemUtilPct, 4, 5, 12.5, 20);
  ExpectStats(h, kMemUsedBytes, 4, 10 * kGiB, 11.5 * kGiB, 13 * kGiB);
  ExpectStats(h, kMemTotalBytes, 4, 80 * kGiB, 80 * kGiB, 80 * kGiB);
  ExpectStats(h, kPowerW, 4, 300, 315, 330);
  ExpectStats(h, kEnergyPowerW, 3, 250, 250, 250);  // first sample has no delta
  ExpectStats(h, kTemperatureC, 4, 60, 61.5, 63);
  ExpectStats(h, kSmClockMhz, 4, 1500, 1650, 1800);
  ExpectStats(h, kMemClockMhz, 4, 2619, 2619, 2619);
  ExpectStats(h, kPcieTxBytesPerS, 3, 3e9, 3e9, 3e9);
  ExpectStats(h, kPcieRxBytesPerS, 3, 1.5e9, 1.5e9, 1.5e9);
  ExpectStats(h, kNvlinkTxBytesPerS, 3, kGiB, kGiB, kGiB);
  ExpectStats(h, kNvlinkRxBytesPerS, 3, kGiB / 2, kGiB / 2, kGiB / 2);
  ExpectStats(h, kGpmSmActivePct, 3, 40, 50, 60);  // pairs (0,1) (1,2) (2,3)
  ExpectStats(h, kGpmSmOccupancyPct, 3, 20, 25, 30);
  ExpectStats(h, kGpmTensorActivePct, 3, 30, 40, 50);
  ExpectStats(h, kGpmDramBwUtilPct, 3, 50, 55, 60);
  EXPECT_EQ(M(h, kGpuUtilPct).unit, "%");
  EXPECT_EQ(M(h, kMemUsedBytes).unit, "bytes");
  EXPECT_EQ(M(h, kPowerW).unit, "W");
  EXPECT_EQ(M(h, kPcieTxBytesPerS).unit, "bytes/s");
  EXPECT_EQ(h.throttle_samples, 4u);
  EXPECT_EQ(h.ThrottleFraction("gpu_idle"), 0.25);
  EXPECT_EQ(h.ThrottleFraction("sw_power_cap"), 0.5);
  EXPECT_EQ(h.ThrottleFraction("hw_slowdown"), 0.25);
  EXPECT_EQ(h.throttle_active.size(), 3u);
  EXPECT_EQ(h.xid_count, 0u);

  const GpuDeviceWindow& a = w.devices[1];
  EXPECT_EQ(a.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(a.architecture, "ampere");
  EXPECT_EQ(a.compute_capability, "8.0");
  EXPECT_EQ(a.pci_bus_id, "00000000:19:00.0");
  ExpectStats(a, kGpuUtilPct, 4, 21, 36, 51);
  ExpectStats(a, kPowerW, 4, 301.5, 316.5, 331.5);
  ExpectStats(a, kMemTotalBytes, 4, 40 * kGiB, 40 * kGiB, 40 * kGiB);
  ExpectStats(a, kMemClockMhz, 4, 1215, 1215, 1215);
  for (const char* gpm :
       {kGpmSmActivePct, kGpmSmOccupancyPct, kGpmTensorActivePct, kGpmDramBwUtilPct}) {
    EXPECT_EQ(MissingReason(a, gpm), "GPM needs Hopper or newer") << gpm;
    EXPECT_EQ(M(a, gpm).samples, 0u);
  }
  EXPECT_EQ(a.missing.size(), 4u);

  // The window survives the store's JSON unchanged.
  base::JsonWriter writer;
  w.WriteJson(writer);
  auto back = GpuMetricsWindow::FromJson(writer.str());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, w);

  std::string text;
  RenderGpuMetricsText(w, &text);
  EXPECT_NE(text.find("35 (20-50)"), std::string::npos) << text;
  EXPECT_NE(text.find("50/25/40"), std::string::npos) << text;
  // Every reason with its share, on its own line, never cut to fit the table.
  EXPECT_NE(text.find("clock events (share of samples): sw_power_cap 50%, gpu_idle 25%, "
                      "hw_slowdown 25%\n"),
            std::string::npos)
      << text;
  {
    // The table fits 100 columns even with a long GPU name, whose full text follows it.
    GpuMetricsWindow named = w;
    named.devices[0].name = "NVIDIA GeForce RTX 4090 Laptop GPU";
    std::string t;
    RenderGpuMetricsText(named, &t);
    const std::string table = t.substr(0, t.find("* GPU"));
    for (size_t start = 0, end; (end = table.find('\n', start)) != std::string::npos;
         start = end + 1)
      EXPECT_LE(end - start, 100u) << table.substr(start, end - start);
    EXPECT_NE(t.find("* GPU " + std::to_string(named.devices[0].index) +
                     ": NVIDIA GeForce RTX 4090 Laptop GPU\n"),
              std::string::npos)
        << t;
  }
  EXPECT_NE(text.find("missing on GPU 1 (GPM needs Hopper or newer): gpm_dram_bw_util_pct, "
                      "gpm_sm_active_pct, gpm_sm_occupancy_pct, gpm_tensor_active_pct"),
            std::string::npos)
      << text;
}

TEST(GpuSamplerTest, NextWindowStartsFreshButKeepsCounterState) {
  ScopedScenario scenario("devices=1");
  GpuSampler s(FAKE_NVML_PATH);
  SampleN(s, 4);
  // Calls 4 and 5: the cycle restarts (20, 30) and the energy/PCIe rates need no warm-up.
  const GpuMetricsWindow w = SampleN(s, 2, kT0 + 4 * kSecond);
  const GpuDeviceWindow& d = w.devices.at(0);
  EXPECT_EQ(d.samples, 2u);
  ExpectStats(d, kGpuUtilPct, 2, 20, 25, 30);
  ExpectStats(d, kEnergyPowerW, 2, 250, 250, 250);
  ExpectStats(d, kPcieTxBytesPerS, 2, 3e9, 3e9, 3e9);
  ExpectStats(d, kGpmSmActivePct, 2, 40, 55, 70);  // pairs (3,4) and (4,5): 70, then 40
  EXPECT_EQ(d.throttle_samples, 2u);
  EXPECT_EQ(d.ThrottleFraction("gpu_idle"), 0.5);
}

TEST(GpuSamplerTest, RatesUseTheActualInterval) {
  ScopedScenario scenario("devices=1");
  GpuSampler s(FAKE_NVML_PATH);
  s.Sample(kT0);
  s.Sample(kT0 + 2 * kSecond);  // 250 J over 2 s
  s.Sample(kT0 + 2 * kSecond + kSecond / 2);
  const GpuDeviceWindow d = s.TakeWindow(kT0, kT0 + 3 * kSecond).devices.at(0);
  ExpectStats(d, kEnergyPowerW, 2, 125, 312.5, 500);
  ExpectStats(d, kPcieTxBytesPerS, 2, 1.5e9, 3.75e9, 6e9);
}

TEST(GpuSamplerTest, NotSupportedAndNoPermissionDegradeOnlyTheirMetric) {
  ScopedScenario scenario(
      "devices=2;not_supported=power@0,nvlink,gpm_tensor;no_permission=gpm_sample@1,xid@0");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuMetricsWindow w = SampleN(s, 4);
  const GpuDeviceWindow& d0 = w.devices.at(0);
  const GpuDeviceWindow& d1 = w.devices.at(1);
  EXPECT_EQ(MissingReason(d0, kPowerW), "not supported by this GPU");
  EXPECT_EQ(M(d0, kPowerW).samples, 0u);
  ExpectStats(d1, kPowerW, 4, 301.5, 316.5, 331.5);
  for (const auto* d : {&d0, &d1}) {
    EXPECT_EQ(MissingReason(*d, kNvlinkTxBytesPerS), "not supported by this GPU");
    EXPECT_EQ(MissingReason(*d, kNvlinkRxBytesPerS), "not supported by this GPU");
    ExpectStats(*d, kGpuUtilPct, 4, 20 + d->index, 35 + d->index, 50 + d->index);
    ExpectStats(*d, kPcieTxBytesPerS, 3, 3e9, 3e9, 3e9);
  }
  // GPM: one metric unsupported on device 0, the rest there; no permission at all on device 1.
  EXPECT_EQ(MissingReason(d0, kGpmTensorActivePct), "not supported by this GPU");
  ExpectStats(d0, kGpmSmActivePct, 3, 40, 50, 60);
  EXPECT_EQ(MissingReason(d0, kGpmSmActivePct), "");
  for (const char* gpm :
       {kGpmSmActivePct, kGpmSmOccupancyPct, kGpmTensorActivePct, kGpmDramBwUtilPct}) {
    EXPECT_EQ(MissingReason(d1, gpm), "no permission") << gpm;
  }
  EXPECT_EQ(MissingReason(d0, kXidEvents), "no permission");
  EXPECT_EQ(MissingReason(d1, kXidEvents), "");
  // Permanent reasons stay in later windows.
  const GpuMetricsWindow w2 = SampleN(s, 1, kT0 + 4 * kSecond);
  EXPECT_EQ(MissingReason(w2.devices.at(0), kPowerW), "not supported by this GPU");
  EXPECT_EQ(s.health(), "ok: 2 GPUs, driver 550.54.15; 11 device metrics unavailable");
}

TEST(GpuSamplerTest, TransientErrorSkipsOnlyThatSample) {
  ScopedScenario scenario("unknown=util#1,temperature");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuDeviceWindow d = SampleN(s, 4).devices.at(0);
  EXPECT_EQ(d.samples, 4u);
  ExpectStats(d, kGpuUtilPct, 3, 20, 110.0 / 3, 50);  // call 1 (30) failed
  EXPECT_EQ(MissingReason(d, kGpuUtilPct), "");
  // A metric failing on every sample of the window says why, for that window.
  EXPECT_EQ(MissingReason(d, kTemperatureC), "nvmlDeviceGetTemperatureV failed: Unknown Error");
  ExpectStats(d, kPowerW, 4, 300, 315, 330);
}

TEST(GpuSamplerTest, PcieFallsBackToThroughputCall) {
  ScopedScenario scenario("not_supported=pcie_fields");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuDeviceWindow d = SampleN(s, 4).devices.at(0);
  // KB/s with 1 KiB granularity: 1000..1300 and 500..650 KiB/s.
  ExpectStats(d, kPcieTxBytesPerS, 4, 1000 * 1024.0, 1150 * 1024.0, 1300 * 1024.0);
  ExpectStats(d, kPcieRxBytesPerS, 4, 500 * 1024.0, 575 * 1024.0, 650 * 1024.0);
  EXPECT_TRUE(d.missing.empty());
}

TEST(GpuSamplerTest, PcieMissingWhenBothWaysFail) {
  ScopedScenario scenario("not_supported=pcie_fields;no_permission=pcie_throughput");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuDeviceWindow d = SampleN(s, 2).devices.at(0);
  EXPECT_EQ(MissingReason(d, kPcieTxBytesPerS), "no permission");
  EXPECT_EQ(MissingReason(d, kPcieRxBytesPerS), "no permission");
}

TEST(GpuSamplerTest, NvlinkFieldsUnknownToTheDriver) {
  ScopedScenario scenario("invalid_argument=nvlink");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuDeviceWindow d = SampleN(s, 2).devices.at(0);
  EXPECT_EQ(MissingReason(d, kNvlinkTxBytesPerS),
            "not supported by this driver (NVLink throughput fields)");
  EXPECT_EQ(M(d, kNvlinkRxBytesPerS).samples, 0u);
  ExpectStats(d, kPcieTxBytesPerS, 1, 3e9, 3e9, 3e9);
}

TEST(GpuSamplerTest, CounterThatGoesBackwardsGivesNoRateForThatInterval) {
  ScopedScenario scenario("reset=energy@2;reset=nvlink@3");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuDeviceWindow d = SampleN(s, 4).devices.at(0);
  ExpectStats(d, kEnergyPowerW, 2, 250, 250, 250);  // intervals 0-1 and 2-3; 1-2 went back
  ExpectStats(d, kNvlinkTxBytesPerS, 2, kGiB, kGiB, kGiB);
}

TEST(GpuSamplerTest, LostGpuStopsBeingSampled) {
  ScopedScenario scenario("devices=2;lost=1@2");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuMetricsWindow w = SampleN(s, 4);
  const GpuDeviceWindow& d1 = w.devices.at(1);
  EXPECT_TRUE(d1.lost);
  EXPECT_EQ(d1.samples, 2u);
  ExpectStats(d1, kGpuUtilPct, 2, 21, 26, 31);
  ExpectStats(w.devices.at(0), kGpuUtilPct, 4, 20, 35, 50);
  EXPECT_FALSE(w.devices.at(0).lost);
  EXPECT_EQ(s.health(),
            "degraded: 1 of 2 GPUs sampled, driver 550.54.15; GPU 1 lost (fell off the bus; "
            "check dmesg for XID 79)");
  const GpuMetricsWindow w2 = SampleN(s, 3, kT0 + 4 * kSecond);
  EXPECT_TRUE(w2.devices.at(1).lost);
  EXPECT_EQ(w2.devices.at(1).samples, 0u);
  EXPECT_EQ(MissingReason(w2.devices.at(1), "device"), "GPU lost (fell off the bus)");
  EXPECT_EQ(w2.devices.at(0).samples, 3u);
  std::string text;
  RenderGpuMetricsText(w2, &text);
  EXPECT_NE(text.find("GPU 1: lost"), std::string::npos) << text;
}

TEST(GpuSamplerTest, LostOnTheFirstSample) {
  ScopedScenario scenario("devices=2;lost=0@0");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuMetricsWindow w = SampleN(s, 2);
  EXPECT_TRUE(w.devices.at(0).lost);
  EXPECT_EQ(w.devices.at(0).samples, 0u);
  EXPECT_EQ(w.devices.at(1).samples, 2u);
}

TEST(GpuSamplerTest, HandleWithoutPermission) {
  ScopedScenario scenario("devices=2;no_permission=handle@1");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuMetricsWindow w = SampleN(s, 2);
  ASSERT_EQ(w.devices.size(), 2u);
  EXPECT_EQ(w.devices[1].index, 1);
  EXPECT_EQ(w.devices[1].samples, 0u);
  EXPECT_EQ(MissingReason(w.devices[1], "device"), "no permission to open this GPU");
  EXPECT_EQ(w.devices[0].samples, 2u);
  EXPECT_EQ(s.health(),
            "degraded: 1 of 2 GPUs sampled, driver 550.54.15; GPU 1: no permission to open this "
            "GPU");
}

TEST(GpuSamplerTest, XidEventsCountedPerDevice) {
  ScopedScenario scenario("devices=2;xid=1:79,1:48,0:13");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuMetricsWindow w = SampleN(s, 2);
  EXPECT_EQ(w.devices.at(0).xid_count, 1u);
  EXPECT_EQ(w.devices.at(0).last_xid, 13u);
  EXPECT_EQ(w.devices.at(1).xid_count, 2u);
  EXPECT_EQ(w.devices.at(1).last_xid, 48u);
  EXPECT_EQ(w.devices.at(1).last_xid_unix_ns, kT0);
  const GpuMetricsWindow w2 = SampleN(s, 1, kT0 + 2 * kSecond);
  EXPECT_EQ(w2.devices.at(1).xid_count, 0u);
}

TEST(GpuSamplerTest, OldDriverFallsBackAndSaysWhatIsMissing) {
  ScopedScenario scenario("devices=1;arch=hopper;xid=0:31");
  GpuSampler s(FAKE_NVML_OLD_PATH);
  ASSERT_TRUE(s.enabled()) << s.health();
  EXPECT_EQ(s.health(), "ok: 1 GPU, driver 470.57.02; 4 device metrics unavailable");
  const GpuDeviceWindow d = SampleN(s, 4).devices.at(0);
  // Unversioned and deprecated names still give the basic metrics.
  ExpectStats(d, kGpuUtilPct, 4, 20, 35, 50);
  ExpectStats(d, kMemUsedBytes, 4, 10 * kGiB, 11.5 * kGiB, 13 * kGiB);
  ExpectStats(d, kTemperatureC, 4, 60, 61.5, 63);
  EXPECT_EQ(d.throttle_samples, 4u);
  EXPECT_EQ(d.ThrottleFraction("sw_power_cap"), 0.5);
  EXPECT_EQ(d.xid_count, 1u);  // through nvmlEventSetWait (v1)
  EXPECT_EQ(d.last_xid, 31u);
  EXPECT_EQ(d.pci_bus_id, "");  // only the _v3/_v2 layouts are read
  for (const char* gpm :
       {kGpmSmActivePct, kGpmSmOccupancyPct, kGpmTensorActivePct, kGpmDramBwUtilPct}) {
    EXPECT_EQ(MissingReason(d, gpm), "driver too old (symbol nvmlGpmQueryDeviceSupport missing)");
  }
}

TEST(GpuSamplerTest, GpmPairsNeedAtLeast100Ms) {
  ScopedScenario scenario("devices=1");
  GpuSampler s(FAKE_NVML_PATH);
  s.Sample(kT0);
  s.Sample(kT0 + kSecond / 20);  // 50 ms: too soon, the pair keeps sample 0 as its start
  s.Sample(kT0 + kSecond);
  const GpuDeviceWindow d = s.TakeWindow(kT0, kT0 + kSecond).devices.at(0);
  EXPECT_EQ(M(d, kGpmSmActivePct).samples, 1u);
  EXPECT_EQ(M(d, kGpuUtilPct).samples, 3u);
}

TEST(GpuSamplerTest, GpmTransientFailureRestartsPairing) {
  ScopedScenario scenario("unknown=gpm_sample#1");
  GpuSampler s(FAKE_NVML_PATH);
  const GpuDeviceWindow d = SampleN(s, 4).devices.at(0);
  // Sample 1 failed: pairing restarts at sample 2, so only the pair (2,3) gives values.
  ExpectStats(d, kGpmSmActivePct, 1, 60, 60, 60);
  EXPECT_EQ(MissingReason(d, kGpmSmActivePct), "");
}

TEST(GpuSamplerTest, BadScenarioFailsInit) {
  ScopedScenario scenario("devices=two");
  GpuSampler s(FAKE_NVML_PATH);
  EXPECT_EQ(s.health().rfind("off: nvmlInit failed: Unknown Error (NVML_ERROR_UNKNOWN)", 0), 0u)
      << s.health();
}

TEST(GpuSamplerTest, ConcurrentSampleTakeSamplesAndHealth) {
  ScopedScenario scenario("devices=2");
  GpuSampler s(FAKE_NVML_PATH);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> taken{0};
  std::thread reader([&] {
    int64_t t = kT0;
    while (!stop.load()) {
      const GpuMetricsWindow w = s.TakeWindow(t, t + kSecond);
      taken += w.devices.empty() ? 0 : w.devices[0].samples;
      EXPECT_FALSE(s.health().empty());
      for (const auto& d : s.Samples(t - kSecond, t)) EXPECT_GE(d.index, 0);  // a capture's read
      t += kSecond;
    }
  });
  for (int i = 0; i < 200; ++i) s.Sample(kT0 + i * kSecond);
  stop = true;
  reader.join();
  taken += s.TakeWindow(0, 1).devices.at(0).samples;
  EXPECT_EQ(taken.load(), 200u);
}

// An in-process fake: only the calls a test needs; every other call is "symbol missing".
class MinimalNvml : public NvmlApi {
 public:
  nvmlReturn_t Init() override { return nvml_abi::NVML_SUCCESS; }
  nvmlReturn_t DeviceGetCount(unsigned int* count) override {
    *count = 1;
    return nvml_abi::NVML_SUCCESS;
  }
  nvmlReturn_t DeviceGetHandleByIndex(unsigned int, nvmlDevice_t* device) override {
    *device = reinterpret_cast<nvmlDevice_t>(this);
    return nvml_abi::NVML_SUCCESS;
  }
  nvmlReturn_t DeviceGetUtilizationRates(nvmlDevice_t, nvml_abi::nvmlUtilization_t* u) override {
    u->gpu = 77;
    u->memory = 7;
    return nvml_abi::NVML_SUCCESS;
  }
  nvmlReturn_t DeviceGetTotalEnergyConsumption(nvmlDevice_t, unsigned long long* mj) override {
    // Wraps like a 32-bit counter would: 4294967000 then 500.
    *mj = calls_++ == 0 ? 4294967000ull : 500ull;
    return nvml_abi::NVML_SUCCESS;
  }

 private:
  int calls_ = 0;
};

TEST(GpuSamplerTest, InProcessFakeWithoutMostSymbols) {
  GpuSampler s(base::StatusOr<std::unique_ptr<NvmlApi>>(std::make_unique<MinimalNvml>()));
  ASSERT_TRUE(s.enabled()) << s.health();
  const GpuDeviceWindow d = SampleN(s, 2).devices.at(0);
  ExpectStats(d, kGpuUtilPct, 2, 77, 77, 77);
  EXPECT_EQ(M(d, kEnergyPowerW).samples, 0u);  // the only interval went backwards
  EXPECT_EQ(MissingReason(d, kEnergyPowerW), "");
  EXPECT_EQ(MissingReason(d, kPowerW), "driver too old (symbol nvmlDeviceGetPowerUsage missing)");
  EXPECT_EQ(MissingReason(d, kClockEventReasons),
            "driver too old (symbol nvmlDeviceGetCurrentClocksEventReasons missing)");
  EXPECT_EQ(MissingReason(d, kXidEvents), "driver too old (symbol nvmlEventSetCreate missing)");
  EXPECT_EQ(MissingReason(d, kGpmSmActivePct),
            "driver too old (symbol nvmlGpmQueryDeviceSupport missing)");
  EXPECT_EQ(MissingReason(d, kPcieTxBytesPerS),
            "driver too old (symbol nvmlDeviceGetPcieThroughput missing)");
  EXPECT_EQ(d.name, "");
}

TEST(GpuSamplerTest, NullApiIsOff) {
  GpuSampler s{base::StatusOr<std::unique_ptr<NvmlApi>>(std::unique_ptr<NvmlApi>())};
  EXPECT_EQ(s.health(), "off: no NVML library given");
}

}  // namespace
}  // namespace inferscope::telemetry
