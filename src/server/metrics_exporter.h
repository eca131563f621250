// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The agent's Prometheus /metrics: GPU time by category, GPU and process as counters, busy
// ratio, idle time by cause, GPU time per forward phase (prefill, decode, ...) and category,
// NVTX ranges (the top names per process and "(other)"),
// kernel launches and their delay, host sync waits by type, memcpy bytes, data quality, the
// profiler's own CPU cost and the latest window's verdict from the profile windows; GPU, engine
// and request-span telemetry (stage latency as histograms) from the collectors; the agent's own
// counters. Families, labels and units: docs/metrics.md.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "src/model/profile.h"
#include "src/telemetry/nvml/gpu_metrics_window.h"
#include "src/telemetry/otlp/span_window.h"
#include "src/telemetry/scrape/engine_window.h"
#include "src/telemetry/telemetry_kind.h"
#include "src/wire/framing.h"

namespace inferscope::server {

using telemetry::otlp::SpanWindow;
using telemetry::scrape::EngineMetricsWindow;

struct MetricsExporterOptions {
  // Process label sets (pid, rank, host) kept at most. Beyond it the process that ended longest
  // ago (else the one silent longest) is evicted: its counters fold into one series with
  // pid="evicted", so sums over processes stay exact and monotonic.
  size_t max_processes = 256;
  // NVTX range names (`run --nvtx`) with their own series per process; every other name counts
  // in range="(other)". A name keeps its series once it has one (the first names the windows
  // list, heaviest first within a window), so each series is a true counter and the cardinality
  // is at most (max_range_names + 1) x 3 series per process.
  size_t max_range_names = 10;
};

// What MetricsExporter keeps per device, process and stage (at namespace scope: clang cannot
// default-construct nested structs with member initializers inside their enclosing class).
namespace metrics_internal {

struct DeviceSeries {
  std::array<model::CategoryStats, model::kCategoryCount> categories{};
  int64_t busy_ns = 0;
  std::array<model::TransferStats, static_cast<size_t>(model::MemcpyKind::kCount)> memcpy{};
  std::optional<double> busy_ratio;  // gauge: the latest window's busy / window length
  std::array<int64_t, model::kIdleCauseCount> idle_ns{};  // device idle time by cause
  uint64_t launch_calls = 0;                              // kernel launch API calls
  int64_t launch_cpu_ns = 0;                              // their CPU time
  uint64_t launch_delays = 0;  // kernels whose launch-to-start delay was measured
  int64_t launch_delay_ns = 0;
  uint64_t graph_launches = 0, kernels_from_graphs = 0;
  // Forward phases of the whole steps (model::PhaseSplit); index kPhaseCount of phase_ns is the
  // GPU time of operations in no whole step ("outside").
  std::array<uint64_t, model::kPhaseCount> phase_steps{};
  std::array<int64_t, model::kPhaseCount> phase_step_ns{};
  std::array<std::array<int64_t, model::kCategoryCount>, model::kPhaseCount + 1> phase_ns{};
  // The device's UUID as the process reported it (empty: unknown, or devices of several evicted
  // processes that disagree): maps the CUDA ordinal to the NVML index for the `gpu` label.
  std::string uuid;
  bool uuid_conflict = false;

  void Add(const model::DeviceProfile& d);
  void Add(const DeviceSeries& d);
};
// One NVTX range label's counters (instances, host time, GPU time launched inside).
struct RangeSeries {
  uint64_t count = 0;
  int64_t host_ns = 0;
  int64_t gpu_ns = 0;
};
// The label a range name gets on /metrics: control characters as spaces, at most
// kMaxRangeLabelBytes (cut at a UTF-8 character boundary, "..." appended), never empty and never
// the reserved "(other)" (a range really named so becomes "(other) (range)").
std::string RangeLabel(std::string_view name);
inline constexpr size_t kMaxRangeLabelBytes = 96;
inline constexpr const char* kOtherRangeLabel = "(other)";

struct ProcessSeries {
  std::string pid, rank, host;  // label values
  std::map<uint32_t, DeviceSeries> devices;
  std::array<uint64_t, static_cast<size_t>(model::SyncType::kCount)> sync_count{};
  std::array<int64_t, static_cast<size_t>(model::SyncType::kCount)> sync_wait_ns{};
  std::array<uint64_t, static_cast<size_t>(model::DataQuality::kCount)> data_quality{};
  int64_t profiler_cpu_ns = 0;
  uint64_t windows = 0;
  // NVTX range counters by label (RangeLabel; kOtherRangeLabel for the rest), and the labels
  // other than kOtherRangeLabel that have a series.
  std::map<std::string, RangeSeries> ranges;
  size_t range_names = 0;
  // Gauges (latest window): absent once the process ended.
  int64_t process_start_unix_ns = 0;  // tells a reused pid from the process that ended
  int64_t latest_end_ns = 0;
  // The latest window's primary diagnosis (analyze::kFindingIds), computed when /metrics is
  // rendered, not when the window arrives: the diagnosis is a fifth of the agent's work per
  // window, and most windows are never scraped (scrapes are 15-60 s apart, windows 10 s per
  // process, and many hosts are not scraped at all). `verdict_window` is the window still to
  // diagnose (null once done); both are caches Render fills, hence mutable.
  mutable std::string verdict;
  mutable std::shared_ptr<const model::ProfileWindow> verdict_window;
  bool has_gauges = false;
  bool ended = false;
  uint64_t last_event = 0;  // sequence number of the last window or end: eviction order

  // Adds one window's range table (rows by name, then the tail) to `ranges`.
  void AddRanges(const model::RangeTable& table, size_t max_names);
  // Adds `r` under `label`, or under kOtherRangeLabel when `label` has no series and
  // `max_names` labels already have one.
  void AddRange(const std::string& label, const RangeSeries& r, size_t max_names);
  void AddCounters(const ProcessSeries& other, size_t max_range_names);
};
// Writes families in the Prometheus text format (defined in metrics_exporter.cc).
class Exposition;

// Upper bounds (seconds) of the stage latency histograms /metrics exposes, the same for every
// stage, source and host so that sum() over series and hosts is bucket addition. Each is also a
// bound of the request-span histograms (telemetry::otlp::LatencyHistogram), so spans re-bucket
// exactly.
inline constexpr double kStageLatencyBoundsS[] = {
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500};
inline constexpr size_t kStageLatencyBuckets = std::size(kStageLatencyBoundsS) + 1;  // +Inf last

// One stage's latency histogram accumulated over windows.
struct StageHistogramSeries {
  std::array<double, kStageLatencyBuckets> buckets{};  // per bucket, not cumulative
  double count = 0;  // exact: `_count` and the +Inf bucket (re-bucketed counts may round)
  double sum_s = 0;
  // False once a window had observations without a known sum (an engine that exports no
  // `_sum`): from then on `_sum` is omitted rather than understated.
  bool sum_known = true;

  // Request spans: exact, the span buckets nest in ours.
  void AddSpans(const telemetry::otlp::LatencyHistogram& h);
  // Engine histograms: buckets spread over ours in proportion to overlap (exact where the
  // engine's bounds are ours); a count without buckets goes to +Inf.
  void AddEngine(const telemetry::scrape::StageHistogram& h);
};

}  // namespace metrics_internal

// Accumulates what /metrics exposes and renders it in the Prometheus text exposition format
// 0.0.4. Thread-safe: OnWindow runs on the agent's event loop, OnTelemetry on its collector
// thread, Render on HTTP threads. Memory and output are bounded by max_processes; kernel names
// never become labels.
class MetricsExporter {
 public:
  explicit MetricsExporter(MetricsExporterOptions options = {});

  // A profile window from a process (its hello names pid/rank/hostname). Counters grow by the
  // window's values; gauges take the latest window's values (an older window arriving late adds
  // to the counters but leaves the gauges alone). The latest window is kept (shared, not copied)
  // for the verdict gauge, which Render computes over it (trace rules only: no host telemetry is
  // joined here) outside the lock, once per window.
  void OnWindow(const wire::Hello& process, std::shared_ptr<const model::ProfileWindow> window);
  // The same with a copy of `window` (tests and benchmarks).
  void OnWindow(const wire::Hello& process, const model::ProfileWindow& window);
  // Telemetry of the latest closed window; any pointer may be null (collector off: its gauges go,
  // its counters stay). Counters and summary sums grow once per window (by end time), so passing
  // the same window twice does not count it twice.
  // `others`: the windows of registered kinds' generic collectors (TelemetryWindow::others); their
  // series (telemetry::TelemetryData::WriteMetrics) follow the latest window.
  void OnTelemetry(const telemetry::GpuMetricsWindow* gpu, const EngineMetricsWindow* engine,
                   const SpanWindow* spans, const telemetry::TelemetrySet* others = nullptr);
  // Forgets the gauges of a process that ended (counters stay, as Prometheus expects).
  void OnProcessEnd(const wire::Hello& process);

  // The agent's own counters, rendered as inferscope_agent_*.
  struct AgentCounters {
    uint64_t sessions = 0, windows_received = 0, windows_stored = 0, dropped_connections = 0,
             store_errors = 0, connected_processes = 0, refused_connections = 0,
             windows_rejected = 0;
  };
  // Text exposition format 0.0.4 (serve with kContentType).
  std::string Render(const AgentCounters& self) const;

  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  using DeviceSeries = metrics_internal::DeviceSeries;
  using ProcessSeries = metrics_internal::ProcessSeries;
  using StageHistogramSeries = metrics_internal::StageHistogramSeries;
  using Exposition = metrics_internal::Exposition;
  // Sorted by host, rank, pid so the output is stable.
  using ProcessKey = std::tuple<std::string, int32_t, uint32_t>;

  ProcessSeries* FindOrAddProcess(const wire::Hello& hello);
  // Diagnoses the windows whose verdict is not computed yet (mu_ not held: it takes it twice,
  // around the diagnoses, so OnWindow never waits for them).
  void UpdateVerdicts() const;
  void EvictOne();
  void AccumulateGpu(const telemetry::GpuMetricsWindow& gpu);
  void AccumulateEngine(const EngineMetricsWindow& engine);
  void AccumulateSpans(const SpanWindow& spans);
  // Render's parts, one per group of families (mu_ held), in output order.
  void RenderDeviceSeries(const std::vector<const ProcessSeries*>& all, Exposition& e) const;
  void RenderProcessSeries(const std::vector<const ProcessSeries*>& all, Exposition& e) const;
  void RenderGpuTelemetry(Exposition& e) const;
  void RenderEngineTelemetry(Exposition& e) const;
  void RenderSpanTelemetry(Exposition& e) const;
  void RenderOtherTelemetry(Exposition& e) const;
  void RenderStageLatency(Exposition& e) const;
  void RenderAgent(const AgentCounters& self, Exposition& e) const;

  const MetricsExporterOptions options_;
  mutable std::mutex mu_;
  std::map<ProcessKey, ProcessSeries> processes_;
  std::optional<ProcessSeries> evicted_;  // counters of evicted processes, pid="evicted"
  uint64_t evictions_ = 0;
  uint64_t sequence_ = 0;

  // GPU telemetry: the latest window, and XID counts accumulated per (index, uuid).
  std::optional<telemetry::GpuMetricsWindow> gpu_;
  int64_t gpu_counted_end_ns_ = 0;
  std::map<std::pair<int32_t, std::string>, uint64_t> gpu_xids_;
  // NVML index of every UUID any GPU window named (kept: a GPU keeps its index while the driver
  // runs), so profile-window series carry the same `gpu` value as NVML series.
  std::map<std::string, int32_t, std::less<>> nvml_index_by_uuid_;

  // Engine telemetry: the latest window, counters accumulated over windows.
  std::optional<EngineMetricsWindow> engine_;
  int64_t engine_counted_end_ns_ = 0;
  uint32_t engine_counters_present_ = 0;
  std::array<double, telemetry::scrape::kCounterSignalCount> engine_counters_{};
  uint64_t engine_scrapes_ = 0, engine_scrape_failures_ = 0, engine_scrapes_abandoned_ = 0;
  std::array<std::optional<StageHistogramSeries>, telemetry::scrape::kStageCount> engine_stages_;

  // Request-span telemetry.
  std::optional<SpanWindow> spans_;
  uint64_t spans_counted_end_ns_ = 0;
  uint64_t span_requests_ = 0, span_prompt_tokens_ = 0, span_completion_tokens_ = 0;
  telemetry::otlp::SpanCounters span_counters_;
  std::array<std::optional<StageHistogramSeries>, telemetry::otlp::kStageCount> span_stages_;

  telemetry::TelemetrySet others_;  // the latest window of the registered kinds' collectors
};

// Prometheus number formatting: integers exactly, other values in the shortest form that reads
// back identically, NaN as "NaN" and infinities as "+Inf"/"-Inf".
std::string FormatPrometheusValue(double value);
// A label value escaped for the text format (backslash, double quote, newline), invalid UTF-8
// replaced by U+FFFD.
std::string EscapePrometheusLabelValue(std::string_view value);

}  // namespace inferscope::server
