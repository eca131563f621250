// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/server/metrics_exporter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "src/analyze/diagnose.h"
#include "src/wire/test_frames.h"
#include "src/wire/test_windows.h"

namespace inferscope::server {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kT0 = 1'700'000'000 * kSecond;  // a window boundary

// The shared test hello (host node-a), on another host when a test needs one.
wire::Hello MakeHello(uint32_t pid, int32_t rank = 0, std::string host = "node-a") {
  wire::Hello h = wire::testing::MakeHello(pid, rank);
  h.hostname = std::move(host);
  return h;
}

model::CategoryStats& Cat(model::DeviceProfile& d, model::Category c) {
  return d.categories[static_cast<size_t>(c)];
}

// One process, one device, a 10 s window starting `start_ns`, with known values scaled by `k`.
model::ProfileWindow MakeWindow(int64_t start_ns, int64_t k, uint32_t pid = 42) {
  model::ProfileWindow w;
  w.start_ns = start_ns;
  w.end_ns = start_ns + 10 * kSecond;
  model::ProcessProfile& p = w.processes.emplace_back();
  p.pid = pid;
  p.rank = 0;
  p.hostname = "node-a";
  model::DeviceProfile& d = p.devices.emplace_back();
  d.device = 0;
  d.busy_ns = 2 * kSecond * k;
  Cat(d, model::Category::kAttention) = {3 * static_cast<uint64_t>(k), 1'500'000'000 * k};
  Cat(d, model::Category::kMatmul) = {2 * static_cast<uint64_t>(k), 250'000'000 * k};
  auto& htod = d.memcpy[static_cast<size_t>(model::MemcpyKind::kHtoD)];
  htod.count = 1;
  htod.bytes = 1024 * static_cast<uint64_t>(k);
  htod.time_ns = 1500 * k;
  auto& stream = d.syncs[static_cast<size_t>(model::SyncType::kStream)];
  stream.wait.Add(200'000'000 * k);
  stream.wait.Add(300'000'000 * k);
  d.idle_causes.ns[static_cast<size_t>(model::IdleCause::kLaunch)] = 400'000'000 * k;
  d.idle_causes.ns[static_cast<size_t>(model::IdleCause::kSync)] = 100'000'000 * k;
  d.launch.cpu_launch.Add(5'000 * k);
  d.launch.cpu_launch.Add(3'000 * k);
  d.launch.launch_delay.Add(20'000 * k);
  d.launch.graph_launches = 1;
  d.launch.kernels_from_graphs = 4 * static_cast<uint64_t>(k);
  p.data_quality[static_cast<size_t>(model::DataQuality::kRecordsDropped)] = 7 * k;
  p.data_quality[static_cast<size_t>(model::DataQuality::kLateRecord)] = 1 * k;
  p.profiler_cpu_ns = 20'000'000 * k;
  return w;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : Lines(text)) {
    if (l == line) return true;
  }
  return false;
}

// Sample lines (not comments) whose text contains `needle`.
size_t CountSamples(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (const std::string& l : Lines(text)) {
    if (!l.empty() && l[0] != '#' && l.find(needle) != std::string::npos) ++n;
  }
  return n;
}

// The value of the sample line starting with `series ` (exact series text), or NaN.
double Value(const std::string& text, const std::string& series) {
  for (const std::string& l : Lines(text)) {
    if (l.rfind(series + " ", 0) == 0) return std::strtod(l.c_str() + series.size() + 1, nullptr);
  }
  return std::nan("");
}

const MetricsExporter::AgentCounters kSelf{5, 11, 10, 1, 0, 2};

TEST(MetricsExporterTest, FormatsNumbers) {
  EXPECT_EQ(FormatPrometheusValue(0), "0");
  EXPECT_EQ(FormatPrometheusValue(12), "12");
  EXPECT_EQ(FormatPrometheusValue(-3), "-3");
  EXPECT_EQ(FormatPrometheusValue(1.5), "1.5");
  EXPECT_EQ(FormatPrometheusValue(1e-6), "1e-06");
  EXPECT_EQ(FormatPrometheusValue(1'500'000'000), "1500000000");
  EXPECT_EQ(FormatPrometheusValue(1e20), "1e+20");
  EXPECT_EQ(FormatPrometheusValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatPrometheusValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatPrometheusValue(-INFINITY), "-Inf");
  EXPECT_EQ(std::strtod(FormatPrometheusValue(0.1 + 0.2).c_str(), nullptr), 0.1 + 0.2);
}

TEST(MetricsExporterTest, RendersOneWindowExactly) {
  MetricsExporter m;
  m.OnWindow(MakeHello(42), MakeWindow(kT0, 1));
  const std::string out = m.Render(kSelf);
  const std::string labels = R"(pid="42",rank="0",host="node-a")";
  for (const std::string& line : std::vector<std::string>{
           "# HELP inferscope_gpu_kernel_seconds_total GPU kernel time by category (sum of kernel "
           "durations; concurrent kernels both count).",
           "# TYPE inferscope_gpu_kernel_seconds_total counter",
           R"(inferscope_gpu_kernel_seconds_total{category="attention",gpu="0",)" + labels +
               "} 1.5",
           R"(inferscope_gpu_kernel_seconds_total{category="matmul",gpu="0",)" + labels + "} 0.25",
           R"(inferscope_gpu_kernels_total{category="attention",gpu="0",)" + labels + "} 3",
           R"(inferscope_gpu_busy_seconds_total{gpu="0",)" + labels + "} 2",
           "# TYPE inferscope_gpu_busy_ratio gauge",
           R"(inferscope_gpu_busy_ratio{gpu="0",)" + labels + "} 0.2",
           R"(inferscope_memcpy_bytes_total{direction="htod",gpu="0",)" + labels + "} 1024",
           R"(inferscope_memcpy_seconds_total{direction="htod",gpu="0",)" + labels + "} 1.5e-06",
           R"(inferscope_gpu_idle_seconds_total{cause="launch",gpu="0",)" + labels + "} 0.4",
           R"(inferscope_gpu_idle_seconds_total{cause="sync",gpu="0",)" + labels + "} 0.1",
           "# TYPE inferscope_kernel_launches_total counter",
           R"(inferscope_kernel_launches_total{gpu="0",)" + labels + "} 2",
           R"(inferscope_kernel_launch_cpu_seconds_total{gpu="0",)" + labels + "} 8e-06",
           R"(inferscope_kernel_launch_delay_seconds_total{gpu="0",)" + labels + "} 2e-05",
           R"(inferscope_kernel_launch_delays_total{gpu="0",)" + labels + "} 1",
           R"(inferscope_graph_launches_total{gpu="0",)" + labels + "} 1",
           R"(inferscope_graph_kernels_total{gpu="0",)" + labels + "} 4",
           "# TYPE inferscope_host_sync_wait_seconds_total counter",
           R"(inferscope_host_sync_wait_seconds_total{type="stream",)" + labels + "} 0.5",
           R"(inferscope_host_syncs_total{type="stream",)" + labels + "} 2",
           "inferscope_records_dropped_total{" + labels + "} 7",
           R"(inferscope_data_quality_issues_total{reason="late_record",)" + labels + "} 1",
           R"(inferscope_data_quality_issues_total{reason="zero_timestamp",)" + labels + "} 0",
           "inferscope_profiler_cpu_seconds_total{" + labels + "} 0.02",
           "inferscope_windows_total{" + labels + "} 1",
           "inferscope_last_window_end_timestamp_seconds{" + labels + "} 1700000010",
           "inferscope_agent_sessions_total 5",
           "inferscope_agent_windows_received_total 11",
           "inferscope_agent_windows_stored_total 10",
           "inferscope_agent_dropped_connections_total 1",
           "inferscope_agent_store_errors_total 0",
           "inferscope_agent_connected_processes 2",
           "inferscope_metrics_processes 1",
       }) {
    EXPECT_TRUE(HasLine(out, line)) << "missing: " << line << "\nin:\n" << out;
  }
  // Categories, directions and sync types never seen stay out; no records_dropped in the
  // reason family (it has its own).
  EXPECT_EQ(CountSamples(out, "category=\"moe\""), 0u);
  EXPECT_EQ(CountSamples(out, "direction=\"dtoh\""), 0u);
  EXPECT_EQ(CountSamples(out, "type=\"device\""), 0u);
  EXPECT_EQ(CountSamples(out, "reason=\"records_dropped\""), 0u);
  EXPECT_EQ(CountSamples(out, "cause=\"allocation\""), 0u);
  // One GPU label name across kernel and NVML series.
  EXPECT_EQ(CountSamples(out, "device=\""), 0u);
  // No telemetry was given: none of its families appear.
  EXPECT_EQ(out.find("inferscope_engine_"), std::string::npos);
  EXPECT_EQ(out.find("inferscope_gpu_utilization_ratio"), std::string::npos);
  EXPECT_EQ(out.find("inferscope_stage_latency_seconds{"), std::string::npos);
}

// Forward phases: steps and step time per phase, GPU time per (phase, category) with "outside"
// for operations in no whole step; counters add up over windows; windows without phases add none.
TEST(MetricsExporterTest, PhaseSplitPerPhaseAndCategory) {
  constexpr int64_t kMs = 1'000'000;
  MetricsExporter m;
  model::ProfileWindow w = MakeWindow(kT0, 1);
  m.OnWindow(MakeHello(42), w);  // no whole step: no phase samples
  EXPECT_EQ(m.Render(kSelf).find("inferscope_phase_gpu_seconds_total{"), std::string::npos);
  w.start_ns += 10 * kSecond;
  w.end_ns += 10 * kSecond;
  model::PhaseSplit& split = w.processes[0].devices[0].phases;
  constexpr auto kAttention = static_cast<size_t>(model::Category::kAttention);
  constexpr auto kMatmul = static_cast<size_t>(model::Category::kMatmul);
  model::PhaseStats& prefill = split.phases[static_cast<size_t>(model::Phase::kPrefill)];
  prefill.steps = 2;
  prefill.step_ns = 300 * kMs;
  prefill.category_ns[kAttention] = 100 * kMs;
  prefill.category_ns[kMatmul] = 150 * kMs;
  model::PhaseStats& decode = split.phases[static_cast<size_t>(model::Phase::kDecode)];
  decode.steps = 30;
  decode.step_ns = 600 * kMs;
  decode.category_ns[kMatmul] = 400 * kMs;
  split.outside_ns[kMatmul] = 50 * kMs;
  m.OnWindow(MakeHello(42), w);
  w.start_ns += 10 * kSecond;
  w.end_ns += 10 * kSecond;
  m.OnWindow(MakeHello(42), w);
  const std::string out = m.Render(kSelf);
  const std::string labels = R"(gpu="0",pid="42",rank="0",host="node-a")";
  for (const std::string& line : std::vector<std::string>{
           "# TYPE inferscope_phase_steps_total counter",
           R"(inferscope_phase_steps_total{phase="prefill",)" + labels + "} 4",
           R"(inferscope_phase_steps_total{phase="decode",)" + labels + "} 60",
           R"(inferscope_phase_step_seconds_total{phase="decode",)" + labels + "} 1.2",
           "# TYPE inferscope_phase_gpu_seconds_total counter",
           R"(inferscope_phase_gpu_seconds_total{phase="prefill",category="attention",)" + labels +
               "} 0.2",
           R"(inferscope_phase_gpu_seconds_total{phase="prefill",category="matmul",)" + labels +
               "} 0.3",
           R"(inferscope_phase_gpu_seconds_total{phase="decode",category="matmul",)" + labels +
               "} 0.8",
           R"(inferscope_phase_gpu_seconds_total{phase="outside",category="matmul",)" + labels +
               "} 0.1",
       }) {
    EXPECT_TRUE(HasLine(out, line)) << "missing: " << line << "\nin:\n" << out;
  }
  // Only what took time: no mixed or unknown phase, no decode attention.
  EXPECT_EQ(CountSamples(out, "phase=\"mixed\""), 0u);
  EXPECT_EQ(CountSamples(out, "phase=\"unknown\""), 0u);
  EXPECT_EQ(CountSamples(out, "inferscope_phase_gpu_seconds_total{"), 4u);
}

TEST(MetricsExporterTest, CountersAccumulateGaugesReplace) {
  MetricsExporter m;
  const std::string labels = R"(pid="42",rank="0",host="node-a")";
  m.OnWindow(MakeHello(42), MakeWindow(kT0, 1));
  m.OnWindow(MakeHello(42), MakeWindow(kT0 + 10 * kSecond, 3));
  std::string out = m.Render(kSelf);
  EXPECT_TRUE(HasLine(out, R"(inferscope_gpu_kernel_seconds_total{category="attention",gpu="0",)" +
                               labels + "} 6"));
  EXPECT_TRUE(HasLine(out, "inferscope_records_dropped_total{" + labels + "} 28"));
  EXPECT_TRUE(HasLine(out, "inferscope_windows_total{" + labels + "} 2"));
  EXPECT_TRUE(HasLine(
      out, R"(inferscope_gpu_idle_seconds_total{cause="launch",gpu="0",)" + labels + "} 1.6"));
  EXPECT_TRUE(HasLine(out, R"(inferscope_kernel_launches_total{gpu="0",)" + labels + "} 4"));
  EXPECT_TRUE(HasLine(out, R"(inferscope_graph_kernels_total{gpu="0",)" + labels + "} 16"));
  EXPECT_TRUE(HasLine(out, R"(inferscope_gpu_busy_ratio{gpu="0",)" + labels + "} 0.6"));
  EXPECT_TRUE(
      HasLine(out, "inferscope_last_window_end_timestamp_seconds{" + labels + "} 1700000020"));

  // A late, older window adds to the counters but leaves the gauges at the newest window.
  m.OnWindow(MakeHello(42), MakeWindow(kT0 - 10 * kSecond, 1));
  out = m.Render(kSelf);
  EXPECT_TRUE(HasLine(out, R"(inferscope_gpu_kernel_seconds_total{category="attention",gpu="0",)" +
                               labels + "} 7.5"));
  EXPECT_TRUE(HasLine(out, R"(inferscope_gpu_busy_ratio{gpu="0",)" + labels + "} 0.6"));

  // A window without the device: the device was idle, its ratio drops to 0.
  model::ProfileWindow idle;
  idle.start_ns = kT0 + 20 * kSecond;
  idle.end_ns = kT0 + 30 * kSecond;
  m.OnWindow(MakeHello(42), idle);
  out = m.Render(kSelf);
  EXPECT_TRUE(HasLine(out, R"(inferscope_gpu_busy_ratio{gpu="0",)" + labels + "} 0"));
  EXPECT_TRUE(HasLine(out, "inferscope_windows_total{" + labels + "} 4"));
}

TEST(MetricsExporterTest, ProcessEndDropsGaugesKeepsCounters) {
  MetricsExporter m;
  m.OnWindow(MakeHello(42), MakeWindow(kT0, 1));
  m.OnWindow(MakeHello(43, 1), MakeWindow(kT0, 1, 43));
  m.OnProcessEnd(MakeHello(42));
  const std::string out = m.Render(kSelf);
  EXPECT_EQ(CountSamples(out, "inferscope_gpu_busy_ratio{"), 1u);
  EXPECT_EQ(CountSamples(out, "inferscope_gpu_busy_ratio{gpu=\"0\",pid=\"43\""), 1u);
  EXPECT_EQ(CountSamples(out, "inferscope_last_window_end_timestamp_seconds{"), 1u);
  EXPECT_EQ(CountSamples(out, "inferscope_gpu_kernel_seconds_total{"), 4u);
  // Gauges of the ended process: busy ratio, last window end and one series per verdict.
  EXPECT_EQ(CountSamples(out, "pid=\"42\""),
            CountSamples(out, "pid=\"43\"") - 2 - std::size(analyze::kFindingIds));
  // A window arriving after the end does not resurrect its gauges.
  m.OnWindow(MakeHello(42), MakeWindow(kT0 + 10 * kSecond, 1));
  EXPECT_EQ(CountSamples(m.Render(kSelf), "inferscope_gpu_busy_ratio{"), 1u);
}

TEST(MetricsExporterTest, ReusedPidGetsGaugesBack) {
  MetricsExporter m;
  m.OnWindow(MakeHello(42), MakeWindow(kT0, 1));
  m.OnProcessEnd(MakeHello(42));
  wire::Hello reused = MakeHello(42);
  reused.process_start_unix_ns = 2;
  m.OnWindow(reused, MakeWindow(kT0 + 10 * kSecond, 3));
  m.OnProcessEnd(MakeHello(42));  // the old process's end, late: ignored
  const std::string out = m.Render(kSelf);
  const std::string labels = R"(pid="42",rank="0",host="node-a")";
  EXPECT_TRUE(HasLine(out, R"(inferscope_gpu_busy_ratio{gpu="0",)" + labels + "} 0.6"));
  EXPECT_TRUE(HasLine(out, "inferscope_windows_total{" + labels + "} 2"));
}

TEST(MetricsExporterTest, BoundsProcessLabelSetsEvictingEndedFirst) {
  MetricsExporter m(MetricsExporterOptions{.max_processes = 3});
  for (uint32_t pid = 1; pid <= 3; ++pid) m.OnWindow(MakeHello(pid), MakeWindow(kT0, 1, pid));
  m.OnProcessEnd(MakeHello(2));
  m.OnWindow(MakeHello(1), MakeWindow(kT0 + 10 * kSecond, 1, 1));  // 1 is recent, 3 is not
  m.OnWindow(MakeHello(4), MakeWindow(kT0, 1, 4));                 // evicts 2 (ended)
  std::string out = m.Render(kSelf);
  EXPECT_EQ(CountSamples(out, "pid=\"2\""), 0u);
  EXPECT_GT(CountSamples(out, "pid=\"3\""), 0u);
  EXPECT_TRUE(HasLine(out, R"(inferscope_windows_total{pid="evicted",rank="",host=""} 1)"));
  EXPECT_TRUE(HasLine(out, "inferscope_metrics_processes 3"));
  EXPECT_TRUE(HasLine(out, "inferscope_metrics_evicted_processes_total 1"));

  m.OnWindow(MakeHello(5), MakeWindow(kT0, 2, 5));  // none ended: evicts 3 (silent longest)
  out = m.Render(kSelf);
  EXPECT_EQ(CountSamples(out, "pid=\"3\""), 0u);
  EXPECT_GT(CountSamples(out, "pid=\"1\""), 0u);
  EXPECT_TRUE(HasLine(out, R"(inferscope_windows_total{pid="evicted",rank="",host=""} 2)"));
  EXPECT_TRUE(HasLine(
      out,
      R"(inferscope_gpu_idle_seconds_total{cause="launch",gpu="0",pid="evicted",rank="",host=""} 0.8)"));
  EXPECT_TRUE(
      HasLine(out, R"(inferscope_kernel_launches_total{gpu="0",pid="evicted",rank="",host=""} 4)"));
  // The evicted series carries counters only, never gauges.
  EXPECT_EQ(CountSamples(out, "inferscope_gpu_busy_ratio{gpu=\"0\",pid=\"evicted\""), 0u);

  // Sums over processes stay exact: 1 has two windows, 2, 3, 4 one each, 5 one of double size.
  double kernel_s = 0;
  for (const std::string& l : Lines(out)) {
    if (l.rfind("inferscope_gpu_kernel_seconds_total{", 0) == 0) {
      kernel_s += std::strtod(l.c_str() + l.rfind(' ') + 1, nullptr);
    }
  }
  EXPECT_DOUBLE_EQ(kernel_s, 1.75 * 7);
}

// A window without launch records (an imported trace, or no API callbacks): no launch series,
// rather than zeros that would read as "launches measured and free".
TEST(MetricsExporterTest, LaunchSeriesOnlyWhenLaunchesWereSeen) {
  MetricsExporter m;
  model::ProfileWindow w = MakeWindow(kT0, 1);
  w.processes[0].devices[0].launch = {};
  m.OnWindow(MakeHello(42), w);
  const std::string out = m.Render(kSelf);
  EXPECT_EQ(out.find("inferscope_kernel_launch"), std::string::npos) << out;
  EXPECT_EQ(out.find("inferscope_graph_"), std::string::npos) << out;
  EXPECT_NE(out.find("inferscope_gpu_idle_seconds_total{"), std::string::npos) << out;
}

// The primary verdict of the latest window as a labelled gauge: every verdict, the primary at 1.
TEST(MetricsExporterTest, VerdictOfTheLatestWindow) {
  MetricsExporter m;
  // The GPU idles 70% of the span while the launching thread waits in stream syncs.
  model::ProfileWindow w = MakeWindow(kT0, 1);
  model::DeviceProfile& d = w.processes[0].devices[0];
  d.first_start_ns = w.start_ns;
  d.last_end_ns = w.end_ns;
  d.compute_ns = d.busy_ns;
  d.kernel_count = 1000;  // enough GPU work to judge (the diagnosis's evidence floor)
  d.idle_causes = {};
  d.idle_causes.ns[static_cast<size_t>(model::IdleCause::kSync)] = 7 * kSecond;
  d.idle_causes.intervals = 50;
  d.syncs[static_cast<size_t>(model::SyncType::kStream)].wait.Add(7 * kSecond);
  m.OnWindow(MakeHello(42), w);
  std::string out = m.Render(kSelf);
  const std::string labels = R"(pid="42",rank="0",host="node-a")";
  EXPECT_TRUE(HasLine(out, "# TYPE inferscope_verdict gauge"));
  EXPECT_TRUE(HasLine(out, R"(inferscope_verdict{verdict="host_sync",)" + labels + "} 1")) << out;
  EXPECT_TRUE(HasLine(out, R"(inferscope_verdict{verdict="healthy",)" + labels + "} 0"));
  EXPECT_EQ(CountSamples(out, "inferscope_verdict{"), std::size(analyze::kFindingIds));
  size_t primaries = 0;
  for (const std::string& l : Lines(out))
    primaries += l.rfind("inferscope_verdict{", 0) == 0 && l.ends_with("} 1");
  EXPECT_EQ(primaries, 1u);

  // A later, healthy window replaces it; an older one arriving late does not.
  model::ProfileWindow busy = MakeWindow(kT0 + 10 * kSecond, 1);
  model::DeviceProfile& b = busy.processes[0].devices[0];
  b.first_start_ns = busy.start_ns;
  b.last_end_ns = busy.end_ns;
  b.busy_ns = b.compute_ns = 10 * kSecond;
  b.idle_causes = {};
  b.syncs = {};
  b.launch = {};
  m.OnWindow(MakeHello(42), busy);
  m.OnWindow(MakeHello(42), w);  // older
  out = m.Render(kSelf);
  EXPECT_TRUE(HasLine(out, R"(inferscope_verdict{verdict="host_sync",)" + labels + "} 0")) << out;

  // The process ends: the gauge goes.
  m.OnProcessEnd(MakeHello(42));
  EXPECT_EQ(CountSamples(m.Render(kSelf), "inferscope_verdict{"), 0u);
}

TEST(MetricsExporterTest, EscapesLabelValues) {
  EXPECT_EQ(EscapePrometheusLabelValue("plain"), "plain");
  EXPECT_EQ(EscapePrometheusLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapePrometheusLabelValue("x\xff"), "x\xef\xbf\xbd");  // U+FFFD

  MetricsExporter m;
  m.OnWindow(MakeHello(7, 2, "we\"ird\\host\n"), MakeWindow(kT0, 1, 7));
  const std::string out = m.Render(kSelf);
  EXPECT_TRUE(
      HasLine(out, R"(inferscope_windows_total{pid="7",rank="2",host="we\"ird\\host\n"} 1)"))
      << out;
}

telemetry::GpuMetricsWindow MakeGpu(int64_t end_ns, uint64_t xids) {
  telemetry::GpuMetricsWindow g;
  g.start_unix_ns = end_ns - 10 * kSecond;
  g.end_unix_ns = end_ns;
  telemetry::GpuDeviceWindow& d = g.devices.emplace_back();
  d.index = 0;
  d.uuid = "GPU-abc";
  d.metrics[telemetry::kGpuUtilPct].Add(50);
  d.metrics[telemetry::kGpuUtilPct].Add(100);
  d.metrics[telemetry::kSmClockMhz].Add(1410);
  d.metrics[telemetry::kPcieTxBytesPerS].Add(1e9);
  d.metrics[telemetry::kTemperatureC].Add(61);
  d.throttle_samples = 4;
  d.throttle_active["sw_power_cap"] = 1;
  d.throttle_active["gpu_idle"] = 0;
  d.xid_count = xids;
  return g;
}

telemetry::scrape::EngineMetricsWindow MakeEngine(int64_t end_ns) {
  telemetry::scrape::EngineMetricsWindow e;
  e.start_unix_ns = end_ns - 10 * kSecond;
  e.end_unix_ns = end_ns;
  e.engine = "vllm";
  e.scrapes = 10;
  e.scrape_failures = 3;
  e.scrapes_abandoned = 2;
  e.counters_present = 1u << size_t(telemetry::scrape::CounterSignal::kRequestsFinished) |
                       1u << size_t(telemetry::scrape::CounterSignal::kGenerationTokens);
  e.counters[size_t(telemetry::scrape::CounterSignal::kRequestsFinished)] = 20;
  e.counters[size_t(telemetry::scrape::CounterSignal::kGenerationTokens)] = 5000;
  e.gauges_present = 1u << size_t(telemetry::scrape::GaugeSignal::kKvCacheUsage);
  e.gauges[size_t(telemetry::scrape::GaugeSignal::kKvCacheUsage)].Add(0.25);
  e.gauges[size_t(telemetry::scrape::GaugeSignal::kKvCacheUsage)].Add(0.75);
  e.stages_present = 1u << size_t(telemetry::scrape::Stage::kTtft);
  telemetry::scrape::StageHistogram& ttft = e.stages[size_t(telemetry::scrape::Stage::kTtft)];
  ttft.AddBuckets({0.1, 1.0}, {0, 4, 0});
  ttft.sum = 2;
  ttft.count = 4;
  return e;
}

telemetry::otlp::SpanWindow MakeSpans(int64_t end_ns) {
  telemetry::otlp::SpanWindow s;
  s.start_unix_ns = static_cast<uint64_t>(end_ns - 10 * kSecond);
  s.end_unix_ns = static_cast<uint64_t>(end_ns);
  s.requests = 3;
  s.prompt_tokens = 300;
  s.completion_tokens = 90;
  s.counters.spans_received = 9;
  s.counters.dropped_late = 1;
  for (int64_t ms : {100, 200, 300}) {
    s.stages[static_cast<size_t>(telemetry::otlp::Stage::kE2e)].Add(ms * 1'000'000);
  }
  return s;
}

// CUDA_VISIBLE_DEVICES=1: the process's CUDA 0 is NVML's GPU 1. The kernel series and the NVML
// series of that GPU carry one `gpu` value (the NVML index, found by the device's UUID), and the
// info series states the mapping. A process with a device of unknown UUID (an older injection
// library) keeps CUDA ordinals for all its devices: one identity per process, never two series
// with one label set.
TEST(MetricsExporterTest, GpuLabelIsTheNvmlIndexWhenCudaOrderDiffers) {
  MetricsExporter m;
  model::ProfileWindow w = MakeWindow(kT0, 1);
  w.processes[0].devices[0].device_uuid = "GPU-bbb";
  m.OnWindow(MakeHello(42), w);
  model::ProfileWindow old = MakeWindow(kT0, 1, 43);
  old.processes[0].devices[0].device_uuid = "GPU-bbb";
  model::DeviceProfile& unknown = old.processes[0].devices.emplace_back();
  unknown.device = 1;
  unknown.busy_ns = kSecond;
  m.OnWindow(MakeHello(43), old);
  telemetry::GpuMetricsWindow gpu = MakeGpu(kT0 + 10 * kSecond, 0);
  gpu.devices[0].uuid = "GPU-aaa";  // NVML 0 is a GPU the process does not see
  telemetry::GpuDeviceWindow& second = gpu.devices.emplace_back();
  second.index = 1;
  second.uuid = "GPU-bbb";
  second.metrics[telemetry::kGpuUtilPct].Add(40);
  m.OnTelemetry(&gpu, nullptr, nullptr);
  const std::string out = m.Render(kSelf);
  for (
      const std::string& line : std::vector<std::string>{
          R"(inferscope_gpu_busy_seconds_total{gpu="1",pid="42",rank="0",host="node-a"} 2)",
          R"(inferscope_gpu_utilization_ratio{gpu="1",uuid="GPU-bbb"} 0.4)",
          R"(inferscope_process_gpu_info{gpu="1",cuda_ordinal="0",uuid="GPU-bbb",pid="42",rank="0",host="node-a"} 1)",
          // pid 43 has a device without a UUID: CUDA ordinals for both of its devices.
          R"(inferscope_gpu_busy_seconds_total{gpu="0",pid="43",rank="0",host="node-a"} 2)",
          R"(inferscope_gpu_busy_seconds_total{gpu="1",pid="43",rank="0",host="node-a"} 1)",
          R"(inferscope_process_gpu_info{gpu="0",cuda_ordinal="0",uuid="GPU-bbb",pid="43",rank="0",host="node-a"} 1)",
          R"(inferscope_process_gpu_info{gpu="1",cuda_ordinal="1",uuid="",pid="43",rank="0",host="node-a"} 1)",
      }) {
    EXPECT_TRUE(HasLine(out, line)) << "missing: " << line << "\nin:\n" << out;
  }
  EXPECT_EQ(CountSamples(out, R"(inferscope_gpu_busy_seconds_total{gpu="0",pid="42")"), 0u) << out;
}

TEST(MetricsExporterTest, TelemetryGaugesCountersAndSummaries) {
  MetricsExporter m;
  const int64_t end = kT0 + 10 * kSecond;
  telemetry::GpuMetricsWindow gpu = MakeGpu(end, 2);
  telemetry::scrape::EngineMetricsWindow engine = MakeEngine(end);
  telemetry::otlp::SpanWindow spans = MakeSpans(end);
  m.OnTelemetry(&gpu, &engine, &spans);
  m.OnTelemetry(&gpu, &engine, &spans);  // the same window again: counted once
  std::string out = m.Render(kSelf);
  const std::string gpu_labels = R"(gpu="0",uuid="GPU-abc")";
  for (const std::string& line : std::vector<std::string>{
           "inferscope_gpu_metrics_up 1",
           "inferscope_gpu_utilization_ratio{" + gpu_labels + "} 0.75",
           "inferscope_gpu_sm_clock_hertz{" + gpu_labels + "} 1410000000",
           "inferscope_gpu_temperature_celsius{" + gpu_labels + "} 61",
           "inferscope_gpu_pcie_bytes_per_second{" + gpu_labels + R"(,direction="tx"} 1000000000)",
           "inferscope_gpu_clock_event_ratio{" + gpu_labels + R"(,reason="sw_power_cap"} 0.25)",
           "inferscope_gpu_lost{" + gpu_labels + "} 0",
           "inferscope_gpu_xid_errors_total{" + gpu_labels + "} 2",
           R"(inferscope_engine_info{engine="vllm",backend=""} 1)",
           "inferscope_engine_requests_total 20",
           "inferscope_engine_generation_tokens_total 5000",
           "inferscope_engine_kv_cache_usage_ratio 0.5",
           "inferscope_engine_scrapes_total 10",
           "inferscope_engine_scrape_failures_total 3",
           "inferscope_engine_scrapes_abandoned_total 2",
           "inferscope_span_requests_total 3",
           "inferscope_span_prompt_tokens_total 300",
           "inferscope_span_completion_tokens_total 90",
           "inferscope_spans_received_total 9",
           R"(inferscope_spans_dropped_total{reason="late"} 1)",
           "# TYPE inferscope_stage_latency_seconds histogram",
           // Spans at 100, 200 and 300 ms: exact in the fixed buckets.
           R"(inferscope_stage_latency_seconds_bucket{stage="e2e",source="spans",le="0.05"} 0)",
           R"(inferscope_stage_latency_seconds_bucket{stage="e2e",source="spans",le="0.1"} 0)",
           R"(inferscope_stage_latency_seconds_bucket{stage="e2e",source="spans",le="0.2"} 1)",
           R"(inferscope_stage_latency_seconds_bucket{stage="e2e",source="spans",le="0.5"} 3)",
           R"(inferscope_stage_latency_seconds_bucket{stage="e2e",source="spans",le="+Inf"} 3)",
           R"(inferscope_stage_latency_seconds_sum{stage="e2e",source="spans"} 0.6)",
           R"(inferscope_stage_latency_seconds_count{stage="e2e",source="spans"} 3)",
           // The engine's 4 observations in (0.1, 1]: spread over 0.2, 0.5 and 1 by width.
           R"(inferscope_stage_latency_seconds_bucket{stage="ttft",source="engine",le="0.1"} 0)",
           R"(inferscope_stage_latency_seconds_bucket{stage="ttft",source="engine",le="1"} 4)",
           R"(inferscope_stage_latency_seconds_bucket{stage="ttft",source="engine",le="+Inf"} 4)",
           R"(inferscope_stage_latency_seconds_sum{stage="ttft",source="engine"} 2)",
           R"(inferscope_stage_latency_seconds_count{stage="ttft",source="engine"} 4)",
       }) {
    EXPECT_TRUE(HasLine(out, line)) << "missing: " << line << "\nin:\n" << out;
  }
  // Not exposed by the engine: absent, not zero.
  EXPECT_EQ(out.find("inferscope_engine_prompt_tokens_total"), std::string::npos);
  EXPECT_EQ(out.find("inferscope_engine_requests_running"), std::string::npos);
  EXPECT_EQ(CountSamples(out, "reason=\"gpu_idle\""), 0u);
  // No summary series any more: quantiles are histogram_quantile() over the buckets.
  EXPECT_EQ(out.find("quantile="), std::string::npos);
  const std::string eb =
      R"(inferscope_stage_latency_seconds_bucket{stage="ttft",source="engine",le=")";
  EXPECT_NEAR(Value(out, eb + "0.2\"}"), 4 * (0.2 - 0.1) / 0.9, 1e-9);
  EXPECT_NEAR(Value(out, eb + "0.5\"}"), 4 * (0.5 - 0.1) / 0.9, 1e-9);

  // The next window: counters and sums grow, gauges replace.
  telemetry::GpuMetricsWindow gpu2 = MakeGpu(end + 10 * kSecond, 1);
  gpu2.devices[0].metrics[telemetry::kGpuUtilPct] = {};
  gpu2.devices[0].metrics[telemetry::kGpuUtilPct].Add(10);
  telemetry::scrape::EngineMetricsWindow engine2 = MakeEngine(end + 10 * kSecond);
  telemetry::otlp::SpanWindow spans2 = MakeSpans(end + 10 * kSecond);
  m.OnTelemetry(&gpu2, &engine2, &spans2);
  out = m.Render(kSelf);
  EXPECT_TRUE(HasLine(out, "inferscope_gpu_utilization_ratio{" + gpu_labels + "} 0.1"));
  EXPECT_TRUE(HasLine(out, "inferscope_gpu_xid_errors_total{" + gpu_labels + "} 3"));
  EXPECT_TRUE(HasLine(out, "inferscope_engine_requests_total 40"));
  EXPECT_TRUE(HasLine(out, "inferscope_span_requests_total 6"));
  EXPECT_TRUE(
      HasLine(out, R"(inferscope_stage_latency_seconds_count{stage="e2e",source="spans"} 6)"));

  // An engine restart the scraper reported as a negative delta: counters never go down.
  telemetry::scrape::EngineMetricsWindow engine3 = MakeEngine(end + 20 * kSecond);
  engine3.counters[size_t(telemetry::scrape::CounterSignal::kRequestsFinished)] = -15;
  engine3.counters[size_t(telemetry::scrape::CounterSignal::kGenerationTokens)] = std::nan("");
  m.OnTelemetry(&gpu2, &engine3, &spans2);
  out = m.Render(kSelf);
  EXPECT_TRUE(HasLine(out, "inferscope_engine_requests_total 40"));
  EXPECT_TRUE(HasLine(out, "inferscope_engine_generation_tokens_total 10000"));
  EXPECT_TRUE(
      HasLine(out, R"(inferscope_stage_latency_seconds_count{stage="ttft",source="engine"} 12)"));

  // Collectors off: gauges go, counters and histograms stay.
  m.OnTelemetry(nullptr, nullptr, nullptr);
  out = m.Render(kSelf);
  EXPECT_EQ(out.find("inferscope_gpu_utilization_ratio"), std::string::npos);
  EXPECT_EQ(out.find("inferscope_engine_info"), std::string::npos);
  EXPECT_EQ(out.find("inferscope_gpu_metrics_up"), std::string::npos);
  EXPECT_TRUE(HasLine(out, "inferscope_gpu_xid_errors_total{" + gpu_labels + "} 3"));
  EXPECT_TRUE(HasLine(out, "inferscope_engine_requests_total 40"));
  EXPECT_TRUE(HasLine(
      out, R"(inferscope_stage_latency_seconds_bucket{stage="e2e",source="spans",le="0.5"} 6)"));
  EXPECT_TRUE(
      HasLine(out, R"(inferscope_stage_latency_seconds_count{stage="e2e",source="spans"} 6)"));

  // NVML unavailable: up is 0.
  telemetry::GpuMetricsWindow off;
  off.end_unix_ns = end + 20 * kSecond;
  off.unavailable = "libnvidia-ml.so.1 not found";
  m.OnTelemetry(&off, nullptr, nullptr);
  EXPECT_TRUE(HasLine(m.Render(kSelf), "inferscope_gpu_metrics_up 0"));
}

// An engine that exports buckets and `_count` but no `_sum`: the histogram has no `_sum` series
// (a `_sum 0` would read as zero latency), then or after, since the sum is unknown from then on.
TEST(MetricsExporterTest, NoSumWhenTheSumIsUnknown) {
  MetricsExporter m;
  telemetry::scrape::EngineMetricsWindow engine = MakeEngine(kT0 + 10 * kSecond);
  engine.stages[size_t(telemetry::scrape::Stage::kTtft)].sum = 0;
  m.OnTelemetry(nullptr, &engine, nullptr);
  std::string out = m.Render(kSelf);
  EXPECT_EQ(CountSamples(out, "inferscope_stage_latency_seconds_sum{"), 0u) << out;
  EXPECT_TRUE(
      HasLine(out, R"(inferscope_stage_latency_seconds_count{stage="ttft",source="engine"} 4)"));

  telemetry::scrape::EngineMetricsWindow next = MakeEngine(kT0 + 20 * kSecond);  // with its sum
  m.OnTelemetry(nullptr, &next, nullptr);
  out = m.Render(kSelf);
  EXPECT_EQ(CountSamples(out, "inferscope_stage_latency_seconds_sum{"), 0u) << out;
  EXPECT_TRUE(
      HasLine(out, R"(inferscope_stage_latency_seconds_count{stage="ttft",source="engine"} 8)"));
}

// The agent's threads: windows on the event loop, telemetry on the collector thread, renders on
// HTTP threads, all at once (TSan checks the locking); the totals come out exact.
TEST(MetricsExporterTest, ConcurrentCallersSeeConsistentTotals) {
  MetricsExporter m(MetricsExporterOptions{.max_processes = 8});
  constexpr int kWindows = 200;
  std::thread windows([&] {
    for (int i = 0; i < kWindows; ++i) {
      const uint32_t pid = 100 + i % 16;  // 16 processes through 8 slots: evictions too
      m.OnWindow(MakeHello(pid), MakeWindow(kT0 + i * 10 * kSecond, 1, pid));
      if (i % 7 == 0) m.OnProcessEnd(MakeHello(pid));
    }
  });
  std::thread telemetry([&] {
    for (int i = 1; i <= kWindows; ++i) {
      telemetry::GpuMetricsWindow gpu = MakeGpu(kT0 + i * 10 * kSecond, 1);
      telemetry::otlp::SpanWindow spans = MakeSpans(kT0 + i * 10 * kSecond);
      m.OnTelemetry(&gpu, nullptr, &spans);
    }
  });
  std::thread renders([&] {
    for (int i = 0; i < 50; ++i) EXPECT_FALSE(m.Render(kSelf).empty());
  });
  windows.join();
  telemetry.join();
  renders.join();
  const std::string out = m.Render(kSelf);
  double windows_total = 0;
  for (const std::string& l : Lines(out)) {
    if (l.rfind("inferscope_windows_total{", 0) == 0) {
      windows_total += std::strtod(l.c_str() + l.rfind(' ') + 1, nullptr);
    }
  }
  EXPECT_EQ(windows_total, kWindows);
  EXPECT_TRUE(HasLine(out, "inferscope_span_requests_total " + std::to_string(3 * kWindows)));
  EXPECT_TRUE(HasLine(out, "inferscope_metrics_processes 8"));
}

// Everything at once, for the structural checks below.
std::string RenderEverything() {
  MetricsExporter m;
  m.OnWindow(MakeHello(42), MakeWindow(kT0, 1));
  model::ProfileWindow full = wire::testing::FullWindow();
  m.OnWindow(MakeHello(full.processes[0].pid, full.processes[0].rank, "host-b"), full);
  // NVTX ranges with names that need escaping and sanitizing as label values.
  model::ProfileWindow ranged = MakeWindow(kT0, 1, 43);
  for (const char* name : {"say \"hi\"\\ now", "two\nlines", "bad \xff utf8", "(other)", ""}) {
    model::RangeStats& r = ranged.processes[0].ranges.rows.emplace_back();
    r.name = name;
    r.duration.Add(1'000'000);
    r.gpu_time_ns = 500'000;
  }
  m.OnWindow(MakeHello(43), ranged);
  m.OnProcessEnd(MakeHello(42));
  const int64_t end = kT0 + 10 * kSecond;
  telemetry::GpuMetricsWindow gpu = MakeGpu(end, 1);
  telemetry::scrape::EngineMetricsWindow engine = MakeEngine(end);
  telemetry::otlp::SpanWindow spans = MakeSpans(end);
  m.OnTelemetry(&gpu, &engine, &spans);
  return m.Render(kSelf);
}

// Every family once, HELP and TYPE before its samples, samples of a family contiguous.
TEST(MetricsExporterTest, FamiliesAreWellFormed) {
  const std::string out = RenderEverything();
  std::set<std::string> seen;
  std::string family, type;
  for (const std::string& l : Lines(out)) {
    ASSERT_FALSE(l.empty());
    if (l.rfind("# HELP ", 0) == 0) {
      family = l.substr(7, l.find(' ', 7) - 7);
      EXPECT_TRUE(seen.insert(family).second) << "family twice: " << family;
      type.clear();
      continue;
    }
    if (l.rfind("# TYPE ", 0) == 0) {
      EXPECT_EQ(l.substr(7, family.size() + 1), family + " ");
      type = l.substr(8 + family.size());
      continue;
    }
    ASSERT_FALSE(family.empty()) << l;
    ASSERT_FALSE(type.empty()) << l;
    std::string name = l.substr(0, l.find_first_of("{ "));
    if (type == "histogram") {
      EXPECT_TRUE(name == family + "_bucket" || name == family + "_sum" ||
                  name == family + "_count")
          << l;
    } else {
      EXPECT_EQ(name, family) << l;
    }
    EXPECT_NE(type, "summary") << "summaries do not aggregate across hosts: " << l;
    if (type == "counter") {
      EXPECT_TRUE(family.ends_with("_total")) << family;
    }
    EXPECT_EQ(family.rfind("inferscope_", 0), 0u) << family;
  }
  EXPECT_GT(seen.size(), 30u);
  EXPECT_TRUE(seen.count("inferscope_stage_latency_seconds"));
  // No kernel names as labels, whatever the windows held.
  EXPECT_EQ(out.find("gemm"), std::string::npos);
  EXPECT_EQ(out.find("kernel_name"), std::string::npos);
}

// Histogram buckets: cumulative, `+Inf` last and equal to `_count`, per label set.
TEST(MetricsExporterTest, HistogramBucketsAreCumulative) {
  const std::string out = RenderEverything();
  const std::string bucket = "inferscope_stage_latency_seconds_bucket{";
  std::map<std::string, double> last;     // label set (without le) -> previous bucket
  std::map<std::string, double> inf;      // label set -> +Inf bucket
  std::map<std::string, double> counted;  // label set -> _count
  for (const std::string& l : Lines(out)) {
    const double v = std::strtod(l.c_str() + l.rfind(' ') + 1, nullptr);
    if (l.rfind(bucket, 0) == 0) {
      const size_t le = l.find(",le=\"");
      ASSERT_NE(le, std::string::npos) << l;
      const std::string key = l.substr(bucket.size(), le - bucket.size());
      EXPECT_FALSE(inf.count(key)) << "bucket after +Inf: " << l;
      if (last.count(key)) {
        EXPECT_GE(v, last[key]) << l;
      }
      last[key] = v;
      if (l.find("le=\"+Inf\"") != std::string::npos) inf[key] = v;
    } else if (l.rfind("inferscope_stage_latency_seconds_count{", 0) == 0) {
      const size_t open = l.find('{') + 1;
      counted[l.substr(open, l.find('}') - open)] = v;
    }
  }
  ASSERT_EQ(inf.size(), 2u);  // e2e from spans, ttft from the engine
  for (const auto& [key, v] : inf) EXPECT_EQ(counted[key], v) << key;
}

// NVTX ranges: per process the first max_range_names names (heaviest first within a window) have
// series of their own for good, every other name and the windows' tails count in range="(other)",
// so the series are counters and their sum is the total; names are sanitized label values.
TEST(MetricsExporterTest, RangeSeriesAreBoundedPerProcess) {
  constexpr int64_t kMs = 1'000'000;
  MetricsExporter m(MetricsExporterOptions{.max_processes = 2, .max_range_names = 2});
  auto with_ranges = [](model::ProfileWindow w,
                        std::vector<std::tuple<std::string, uint64_t, int64_t, int64_t>> rows,
                        uint64_t tail_count) {
    model::RangeTable& t = w.processes[0].ranges;
    for (const auto& [name, count, host_ns, gpu_ns] : rows) {
      model::RangeStats& r = t.rows.emplace_back();
      r.name = name;
      for (uint64_t i = 0; i < count; ++i) r.duration.Add(host_ns / static_cast<int64_t>(count));
      r.gpu_ops = count;
      r.gpu_time_ns = gpu_ns;
    }
    for (uint64_t i = 0; i < tail_count; ++i) t.tail.duration.Add(kMs);
    t.tail.gpu_time_ns = static_cast<int64_t>(tail_count) * kMs;
    t.tail_names = tail_count;
    return w;
  };
  EXPECT_EQ(m.Render(kSelf).find("inferscope_nvtx"), std::string::npos);  // none recorded
  m.OnWindow(MakeHello(42), with_ranges(MakeWindow(kT0, 1),
                                        {{"forward", 3, 30 * kMs, 20 * kMs},
                                         {"sample", 1, 5 * kMs, 0},
                                         {"prepare", 2, 2 * kMs, 1 * kMs}},
                                        4));
  // A heavier name later: the two series are taken, it counts in (other).
  m.OnWindow(MakeHello(42), with_ranges(MakeWindow(kT0 + 10 * kSecond, 1),
                                        {{"spec_decode", 10, 100 * kMs, 80 * kMs},
                                         {"forward", 3, 30 * kMs, 20 * kMs}},
                                        0));
  // Another process has its own names.
  m.OnWindow(MakeHello(7),
             with_ranges(MakeWindow(kT0, 1, 7), {{"spec_decode", 1, 1 * kMs, 1 * kMs}}, 0));
  std::string out = m.Render(kSelf);
  auto line = [](const std::string& family, const std::string& range, const std::string& labels,
                 const std::string& value) {
    return family + "{range=\"" + range + "\"," + labels + "} " + value;
  };
  const std::string n = "inferscope_nvtx_ranges_total",
                    host = "inferscope_nvtx_range_seconds_total",
                    gpu = "inferscope_nvtx_range_gpu_seconds_total";
  const std::string labels = "pid=\"42\",rank=\"0\",host=\"node-a\"";
  for (const std::string& want : std::vector<std::string>{
           "# TYPE " + n + " counter",
           line(n, "forward", labels, "6"),
           line(n, "sample", labels, "1"),
           line(n, "(other)", labels, "16"),
           line(host, "forward", labels, "0.06"),
           line(host, "(other)", labels, "0.106"),
           "# TYPE " + gpu + " counter",
           line(gpu, "forward", labels, "0.04"),
           line(gpu, "sample", labels, "0"),
           line(gpu, "(other)", labels, "0.085"),
           line(n, "spec_decode", "pid=\"7\",rank=\"0\",host=\"node-a\"", "1"),
       }) {
    EXPECT_TRUE(HasLine(out, want)) << "missing: " << want << "\nin:\n" << out;
  }
  EXPECT_EQ(CountSamples(out, n + "{"), 4u);  // 3 for pid 42, 1 for pid 7
  EXPECT_EQ(CountSamples(out, "range=\"prepare\""), 0u);
  EXPECT_EQ(CountSamples(out, "range=\"spec_decode\",pid=\"42\""), 0u);

  // Evicted (max_processes 2): pid 42's counters fold into pid="evicted", names kept.
  m.OnWindow(MakeHello(8), MakeWindow(kT0, 1, 8));
  out = m.Render(kSelf);
  const std::string evicted = "pid=\"evicted\",rank=\"\",host=\"\"";
  EXPECT_TRUE(HasLine(out, line(n, "forward", evicted, "6"))) << out;
  EXPECT_TRUE(HasLine(out, line(n, "(other)", evicted, "16"))) << out;
}

TEST(MetricsExporterTest, RangeLabelsAreSanitized) {
  using metrics_internal::RangeLabel;
  EXPECT_EQ(RangeLabel("forward"), "forward");
  EXPECT_EQ(RangeLabel("a\tb\nc"), "a b c");
  EXPECT_EQ(RangeLabel(""), "(unnamed)");
  EXPECT_EQ(RangeLabel("\n"), "(unnamed)");
  EXPECT_EQ(RangeLabel("(other)"), "(other) (range)");
  // Long: cut to the limit at a character boundary, "..." appended.
  std::string long_name(metrics_internal::kMaxRangeLabelBytes - 4, 'x');
  long_name += "\xc3\xa9\xc3\xa9\xc3\xa9";  // three 2-byte characters straddle the cut
  const std::string label = RangeLabel(long_name);
  EXPECT_LE(label.size(), metrics_internal::kMaxRangeLabelBytes);
  EXPECT_EQ(label, std::string(metrics_internal::kMaxRangeLabelBytes - 4, 'x') + "...");
  EXPECT_EQ(RangeLabel(std::string(200, 'y')).size(), metrics_internal::kMaxRangeLabelBytes);

  // On /metrics (RenderEverything's pid 43): escaped as label values, invalid UTF-8 replaced,
  // and the reserved (other) holds only what has no series.
  const std::string out = RenderEverything();
  for (const std::string& range :
       std::vector<std::string>{R"x(range="say \"hi\"\\ now")x", R"x(range="two lines")x",
                                "range=\"bad \xef\xbf\xbd utf8\"", R"x(range="(other) (range)")x",
                                R"x(range="(unnamed)")x"})
    EXPECT_EQ(CountSamples(out, range + ",pid=\"43\""), 3u) << range << "\n" << out;
  EXPECT_EQ(CountSamples(out, "range=\"(other)\",pid=\"43\""), 0u) << out;  // 5 names, K = 10
}

TEST(MetricsExporterTest, PromtoolAcceptsTheOutput) {
  const char* promtool = "/usr/bin/promtool";
  if (access(promtool, X_OK) != 0) GTEST_SKIP() << "promtool not installed (Debian: prometheus)";
  const std::string path =
      ::testing::TempDir() + "/metrics_exporter_" + std::to_string(getpid()) + ".prom";
  {
    std::ofstream f(path);
    f << RenderEverything();
  }
  const std::string cmd = std::string(promtool) + " check metrics < " + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string report;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) report += buf;
  const int status = pclose(p);
  std::remove(path.c_str());
  EXPECT_EQ(status, 0) << report;
  EXPECT_EQ(report, "") << report;
}

}  // namespace
}  // namespace inferscope::server
