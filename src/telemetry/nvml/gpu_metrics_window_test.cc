// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/nvml/gpu_metrics_window.h"

#include <gtest/gtest.h>

namespace inferscope::telemetry {
namespace {

GpuMetricStats Stats(const std::string& unit, std::initializer_list<double> values) {
  GpuMetricStats s;
  s.unit = unit;
  for (double v : values) s.Add(v);
  return s;
}

GpuDeviceWindow Device(int index, const std::string& uuid) {
  GpuDeviceWindow d;
  d.index = index;
  d.uuid = uuid;
  d.name = "NVIDIA H100 80GB HBM3";
  d.pci_bus_id = "00000000:18:00.0";
  d.architecture = "hopper";
  d.compute_capability = "9.0";
  return d;
}

// A window with every kind of value: fractional, large integral bytes, rates, throttle, XID,
// missing, a lost device.
GpuMetricsWindow SampleWindow() {
  GpuMetricsWindow w;
  w.start_unix_ns = 1'700'000'000'000'000'000;
  w.end_unix_ns = 1'700'000'010'000'000'000;
  GpuDeviceWindow a = Device(0, "GPU-a");
  a.samples = 3;
  a.metrics[kGpuUtilPct] = Stats("%", {20, 30, 41});
  a.metrics[kPowerW] = Stats("W", {300.123, 310.5, 299.875});
  a.metrics[kMemUsedBytes] = Stats("bytes", {85899345920.0, 85899345920.0, 42949672960.0});
  a.metrics[kPcieTxBytesPerS] = Stats("bytes/s", {3e9 / 0.997, 2.5e9 / 1.003});
  a.metrics[kGpmSmActivePct] = Stats("%", {33.333333333, 66.666666667});
  a.throttle_samples = 3;
  a.throttle_active["sw_power_cap"] = 2;
  a.throttle_active["gpu_idle"] = 1;
  a.xid_count = 2;
  a.last_xid = 79;
  a.last_xid_unix_ns = 1'700'000'005'000'000'000;
  a.missing[kNvlinkTxBytesPerS] = "not supported by this GPU";
  GpuDeviceWindow b = Device(1, "GPU-b");
  b.lost = true;
  b.missing["device"] = "GPU lost (fell off the bus)";
  w.devices = {a, b};
  return w;
}

TEST(GpuMetricStatsTest, MinMeanMaxAndQuantization) {
  GpuMetricStats s = Stats("%", {20, 50, 30, 40});
  EXPECT_EQ(s.samples, 4u);
  EXPECT_EQ(s.min, 20);
  EXPECT_EQ(s.max, 50);
  EXPECT_EQ(s.mean(), 35);
  // Stored at JSON precision: 4 decimals.
  GpuMetricStats q = Stats("%", {1.23456789});
  EXPECT_EQ(q.min, 1.2346);
  EXPECT_EQ(q.sum, 1.2346);
  EXPECT_EQ(GpuMetricStats().mean(), 0);
}

TEST(GpuMetricStatsTest, MergeWeightsMeanBySamples) {
  GpuMetricStats a = Stats("%", {10, 20});          // 2 samples, mean 15
  GpuMetricStats b = Stats("%", {40, 40, 40, 40});  // 4 samples, mean 40
  a.Merge(b);
  EXPECT_EQ(a.samples, 6u);
  EXPECT_EQ(a.min, 10);
  EXPECT_EQ(a.max, 40);
  EXPECT_DOUBLE_EQ(a.mean(), 190.0 / 6);
  GpuMetricStats empty;
  empty.Merge(b);
  EXPECT_EQ(empty, b);
  GpuMetricStats c = b;
  c.Merge(GpuMetricStats());
  EXPECT_EQ(c, b);
}

TEST(GpuMetricsWindowTest, MergeSameUuidAndAppendOthers) {
  GpuMetricsWindow w1;
  w1.start_unix_ns = 10;
  w1.end_unix_ns = 20;
  GpuDeviceWindow a1 = Device(0, "GPU-a");
  a1.samples = 2;
  a1.metrics[kGpuUtilPct] = Stats("%", {10, 20});
  a1.throttle_samples = 2;
  a1.throttle_active["sw_power_cap"] = 2;
  a1.xid_count = 1;
  a1.last_xid = 13;
  a1.last_xid_unix_ns = 15;
  a1.missing[kPowerW] = "no permission";
  w1.devices = {a1};

  GpuMetricsWindow w2;
  w2.start_unix_ns = 20;
  w2.end_unix_ns = 30;
  GpuDeviceWindow a2 = Device(0, "GPU-a");
  a2.samples = 2;
  a2.metrics[kGpuUtilPct] = Stats("%", {60, 70});
  a2.throttle_samples = 2;
  a2.throttle_active["hw_slowdown"] = 1;
  a2.xid_count = 2;
  a2.last_xid = 79;
  a2.last_xid_unix_ns = 25;
  a2.missing[kTemperatureC] = "not supported by this GPU";
  GpuDeviceWindow other = Device(0, "GPU-other-host");
  w2.devices = {other, a2};

  w1.Merge(w2);
  EXPECT_EQ(w1.start_unix_ns, 10);
  EXPECT_EQ(w1.end_unix_ns, 30);
  ASSERT_EQ(w1.devices.size(), 2u);
  const GpuDeviceWindow& a = w1.devices[0].uuid == "GPU-a" ? w1.devices[0] : w1.devices[1];
  EXPECT_EQ(a.samples, 4u);
  const GpuMetricStats& util = a.metrics.at(kGpuUtilPct);
  EXPECT_EQ(util.samples, 4u);
  EXPECT_EQ(util.min, 10);
  EXPECT_EQ(util.max, 70);
  EXPECT_EQ(util.mean(), 40);
  EXPECT_EQ(a.throttle_samples, 4u);
  EXPECT_EQ(a.ThrottleFraction("sw_power_cap"), 0.5);
  EXPECT_EQ(a.ThrottleFraction("hw_slowdown"), 0.25);
  EXPECT_EQ(a.ThrottleFraction("gpu_idle"), 0);
  EXPECT_EQ(a.xid_count, 3u);
  EXPECT_EQ(a.last_xid, 79u);  // the newer event
  EXPECT_EQ(a.missing.size(), 2u);

  // Merging in the other order picks the same newest XID.
  GpuMetricsWindow w3 = w2;
  GpuMetricsWindow w1_again;
  w1_again.devices = {a1};
  w3.Merge(w1_again);
  const GpuDeviceWindow& a3 = w3.devices[0].uuid == "GPU-a" ? w3.devices[0] : w3.devices[1];
  EXPECT_EQ(a3.last_xid, 79u);
}

TEST(GpuMetricsWindowTest, MergeIntoEmptyKeepsRangeAndUnavailable) {
  GpuMetricsWindow empty;
  GpuMetricsWindow off;
  off.start_unix_ns = 5;
  off.end_unix_ns = 6;
  off.unavailable = "libnvidia-ml.so.1 not found";
  empty.Merge(off);
  EXPECT_EQ(empty.start_unix_ns, 5);
  EXPECT_EQ(empty.unavailable, "libnvidia-ml.so.1 not found");
  // Once any window had devices, the "off" reason no longer describes the range.
  empty.Merge(SampleWindow());
  EXPECT_EQ(empty.unavailable, "");
  EXPECT_EQ(empty.start_unix_ns, 5);
}

TEST(GpuMetricsWindowTest, JsonRoundTripIsExact) {
  const GpuMetricsWindow w = SampleWindow();
  base::JsonWriter writer;
  w.WriteJson(writer);
  auto back = GpuMetricsWindow::FromJson(writer.str());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, w) << writer.str();
  base::JsonWriter again;
  back->WriteJson(again);
  EXPECT_EQ(again.str(), writer.str());
  // Spot-check the documented shape.
  EXPECT_NE(writer.str().find("\"gpu_util_pct\": {"), std::string::npos);
  EXPECT_NE(writer.str().find("\"mean\": 30.3333"), std::string::npos) << writer.str();
  EXPECT_NE(writer.str().find("\"mem_used_bytes\""), std::string::npos);
  EXPECT_NE(writer.str().find("\"max\": 85899345920,"), std::string::npos);
  EXPECT_NE(writer.str().find("\"fraction\": 0.6667"), std::string::npos);
}

TEST(GpuMetricsWindowTest, MergedWindowRoundTrips) {
  GpuMetricsWindow a = SampleWindow();
  GpuMetricsWindow b = SampleWindow();
  b.start_unix_ns += 10'000'000'000;
  b.end_unix_ns += 10'000'000'000;
  a.Merge(b);
  base::JsonWriter writer;
  a.WriteJson(writer);
  auto back = GpuMetricsWindow::FromJson(writer.str());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, a);
}

TEST(GpuMetricsWindowTest, FromJsonRejectsBadInput) {
  EXPECT_FALSE(GpuMetricsWindow::FromJson("").ok());
  EXPECT_FALSE(GpuMetricsWindow::FromJson("[1,2]").ok());
  EXPECT_FALSE(GpuMetricsWindow::FromJson("{\"start_unix_ns\": \"x\"}").ok());
  EXPECT_FALSE(GpuMetricsWindow::FromJson("{\"devices\": {}}").ok());
  EXPECT_FALSE(GpuMetricsWindow::FromJson("{\"devices\": [{\"index\": 1e30}]}").ok());
  EXPECT_FALSE(
      GpuMetricsWindow::FromJson("{\"devices\": [{\"metrics\": {\"x\": {\"min\": true}}}]}").ok());
  EXPECT_FALSE(
      GpuMetricsWindow::FromJson("{\"devices\": [{\"throttle\": {\"gpu_idle\": {}}}]}").ok());
  EXPECT_FALSE(GpuMetricsWindow::FromJson("{\"devices\": [{\"samples\": -1}]}").ok());
  auto err = GpuMetricsWindow::FromJson("{\"devices\": [{\"lost\": 1}]}");
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), base::StatusCode::kDataLoss);
  EXPECT_EQ(err.status().message(), "GPU metrics window JSON: 'lost' is not a bool");
  // Unknown keys are ignored (a newer writer), known ones are read.
  auto ok = GpuMetricsWindow::FromJson("{\"future\": 1, \"start_unix_ns\": 7}");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->start_unix_ns, 7);
}

TEST(GpuMetricsWindowTest, RenderText) {
  std::string out;
  RenderGpuMetricsText(SampleWindow(), &out);
  EXPECT_NE(out.find("NVIDIA H100 80GB HBM3"), std::string::npos) << out;
  EXPECT_NE(out.find("30 (20-41)"), std::string::npos) << out;
  EXPECT_NE(out.find("80.0"), std::string::npos) << out;  // GiB used (max)
  EXPECT_NE(out.find("sw_power_cap 67%, gpu_idle 33%"), std::string::npos) << out;
  EXPECT_NE(out.find("GPU 0: 2 XID errors, last XID 79"), std::string::npos) << out;
  EXPECT_NE(out.find("GPU 1: lost"), std::string::npos) << out;
  EXPECT_NE(out.find("missing on GPU 0 (not supported by this GPU): nvlink_tx_bytes_per_s"),
            std::string::npos)
      << out;

  std::string off;
  GpuMetricsWindow w;
  w.unavailable = "libnvidia-ml.so.1 not found: no NVIDIA driver on this host";
  RenderGpuMetricsText(w, &off);
  EXPECT_EQ(off, "GPU metrics: libnvidia-ml.so.1 not found: no NVIDIA driver on this host\n");
}

}  // namespace
}  // namespace inferscope::telemetry
