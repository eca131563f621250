// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/server/metrics_exporter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <utility>

#include "src/analyze/analysis.h"
#include "src/telemetry/registry/telemetry_kinds.h"

namespace inferscope::server {
namespace {

constexpr size_t kSyncTypes = static_cast<size_t>(model::SyncType::kCount);
constexpr size_t kMemcpyKinds = static_cast<size_t>(model::MemcpyKind::kCount);
constexpr size_t kQualities = static_cast<size_t>(model::DataQuality::kCount);

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

using Labels = telemetry::MetricLabels;

// How a GPU telemetry metric becomes a gauge: family name, factor from the NVML unit to the base
// unit, and an optional extra label (PCIe/NVLink direction).
struct GpuGauge {
  const char* metric;
  const char* family;
  double factor;
  const char* help;
  const char* extra_label = nullptr;
  const char* extra_value = nullptr;
};

constexpr GpuGauge kGpuGauges[] = {
    {telemetry::kGpuUtilPct, "inferscope_gpu_utilization_ratio", 0.01,
     "NVML GPU utilization (fraction of time a kernel ran), mean of the latest window."},
    {telemetry::kMemUtilPct, "inferscope_gpu_memory_utilization_ratio", 0.01,
     "NVML memory utilization (fraction of time memory was read or written), latest window mean."},
    {telemetry::kMemUsedBytes, "inferscope_gpu_memory_used_bytes", 1,
     "Device memory in use, mean of the latest window."},
    {telemetry::kMemTotalBytes, "inferscope_gpu_memory_total_bytes", 1, "Device memory size."},
    {telemetry::kPowerW, "inferscope_gpu_power_watts", 1, "Power draw, mean of the latest window."},
    {telemetry::kTemperatureC, "inferscope_gpu_temperature_celsius", 1,
     "GPU temperature, mean of the latest window."},
    {telemetry::kSmClockMhz, "inferscope_gpu_sm_clock_hertz", 1e6,
     "SM clock, mean of the latest window."},
    {telemetry::kMemClockMhz, "inferscope_gpu_memory_clock_hertz", 1e6,
     "Memory clock, mean of the latest window."},
    {telemetry::kPcieTxBytesPerS, "inferscope_gpu_pcie_bytes_per_second", 1,
     "PCIe throughput, mean of the latest window.", "direction", "tx"},
    {telemetry::kPcieRxBytesPerS, "inferscope_gpu_pcie_bytes_per_second", 1,
     "PCIe throughput, mean of the latest window.", "direction", "rx"},
    {telemetry::kNvlinkTxBytesPerS, "inferscope_gpu_nvlink_bytes_per_second", 1,
     "NVLink throughput summed over links, mean of the latest window.", "direction", "tx"},
    {telemetry::kNvlinkRxBytesPerS, "inferscope_gpu_nvlink_bytes_per_second", 1,
     "NVLink throughput summed over links, mean of the latest window.", "direction", "rx"},
    {telemetry::kGpmSmActivePct, "inferscope_gpu_sm_active_ratio", 0.01,
     "GPM SM activity (Hopper+), mean of the latest window."},
    {telemetry::kGpmSmOccupancyPct, "inferscope_gpu_sm_occupancy_ratio", 0.01,
     "GPM SM occupancy (Hopper+), mean of the latest window."},
    {telemetry::kGpmTensorActivePct, "inferscope_gpu_tensor_active_ratio", 0.01,
     "GPM tensor core activity (Hopper+), mean of the latest window."},
    {telemetry::kGpmDramBwUtilPct, "inferscope_gpu_dram_bandwidth_utilization_ratio", 0.01,
     "GPM DRAM bandwidth utilization (Hopper+), mean of the latest window."},
};

constexpr const char* kEngineCounterFamilies[telemetry::scrape::kCounterSignalCount][2] = {
    {"inferscope_engine_requests_total", "Requests the engine finished (from its own metrics)."},
    {"inferscope_engine_prompt_tokens_total", "Prompt tokens the engine processed."},
    {"inferscope_engine_generation_tokens_total", "Tokens the engine generated."},
    {"inferscope_engine_preemptions_total", "Requests the engine preempted."},
};
constexpr const char* kEngineGaugeFamilies[telemetry::scrape::kGaugeSignalCount][2] = {
    {"inferscope_engine_requests_running", "Requests running in the engine, latest window mean."},
    {"inferscope_engine_requests_waiting", "Requests queued in the engine, latest window mean."},
    {"inferscope_engine_kv_cache_usage_ratio",
     "Fraction of the engine's KV cache in use, latest window mean."},
};

}  // namespace

// Writes families in the text format. A family's HELP/TYPE header is written with its first
// sample, so families without samples leave no trace.
class metrics_internal::Exposition : public telemetry::MetricsSink {
 public:
  explicit Exposition(std::string* out) : out_(out) {}

  void Family(std::string_view name, std::string_view type, std::string_view help) override {
    name_ = name;
    type_ = type;
    help_ = help;
    header_written_ = false;
  }

  // `suffix` extends the family name (summaries: "_sum", "_count").
  void Sample(Labels labels, double value, std::string_view suffix = {}) override {
    if (!header_written_) {
      out_->append("# HELP ").append(name_).append(" ").append(help_).append("\n");
      out_->append("# TYPE ").append(name_).append(" ").append(type_).append("\n");
      header_written_ = true;
    }
    out_->append(name_).append(suffix);
    if (labels.size() > 0) {
      out_->push_back('{');
      bool first = true;
      for (const auto& [key, value_text] : labels) {
        if (!first) out_->push_back(',');
        first = false;
        out_->append(key).append("=\"").append(EscapePrometheusLabelValue(value_text)).append("\"");
      }
      out_->push_back('}');
    }
    out_->push_back(' ');
    out_->append(FormatPrometheusValue(value));
    out_->push_back('\n');
  }

 private:
  std::string* out_;
  std::string_view name_, type_, help_;
  bool header_written_ = false;
};

std::string FormatPrometheusValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Integers print exactly (to_chars' shortest form would switch to an exponent at 1e7).
  if (value == std::trunc(value) && std::fabs(value) < 9.2e18) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec != std::errc()) return "NaN";
  return std::string(buf, end);
}

std::string EscapePrometheusLabelValue(std::string_view value) {
  const std::string valid = telemetry::scrape::ValidUtf8(value);
  std::string out;
  out.reserve(valid.size());
  for (char c : valid) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

MetricsExporter::MetricsExporter(MetricsExporterOptions options) : options_(options) {}

void metrics_internal::StageHistogramSeries::AddSpans(const telemetry::otlp::LatencyHistogram& h) {
  // Span bucket i holds [bound[i-1], bound[i]) ns; it lands in our first bucket whose bound is at
  // least bound[i]. Since our bounds are span bounds, no span bucket straddles one of ours.
  static const std::vector<size_t> kTarget = [] {
    const std::vector<int64_t>& span_bounds = telemetry::otlp::LatencyHistogram::BoundsNs();
    std::vector<size_t> target(telemetry::otlp::LatencyHistogram::BucketCount(),
                               kStageLatencyBuckets - 1);
    for (size_t i = 0; i < span_bounds.size(); ++i) {
      for (size_t b = 0; b + 1 < kStageLatencyBuckets; ++b) {
        if (std::llround(kStageLatencyBoundsS[b] * 1e9) >= span_bounds[i]) {
          target[i] = b;
          break;
        }
      }
    }
    return target;
  }();
  const std::vector<uint64_t>& counts = h.buckets();
  for (size_t i = 0; i < counts.size() && i < kTarget.size(); ++i) {
    buckets[kTarget[i]] += static_cast<double>(counts[i]);
  }
  count += static_cast<double>(h.count());
  sum_s += Seconds(h.sum_ns());
}

void metrics_internal::StageHistogramSeries::AddEngine(const telemetry::scrape::StageHistogram& h) {
  // Counters only grow: a negative or non-finite delta (an engine restart) adds nothing.
  auto growth = [](double delta) { return std::isfinite(delta) && delta > 0 ? delta : 0.0; };
  constexpr size_t kFinite = kStageLatencyBuckets - 1;
  double added = 0;
  if (h.has_buckets()) {
    for (size_t i = 0; i < h.counts.size(); ++i) {
      const double c = growth(h.counts[i]);
      if (c == 0) continue;
      added += c;
      if (i >= h.bounds.size()) {
        buckets[kFinite] += c;
        continue;
      }
      const double hi = h.bounds[i];
      const double lo = i > 0 ? h.bounds[i - 1] : std::min(0.0, hi);
      if (!(hi > lo)) {  // a point bucket: where its bound falls
        size_t b = 0;
        while (b < kFinite && kStageLatencyBoundsS[b] < hi) ++b;
        buckets[b] += c;
        continue;
      }
      // Uniform within the engine's bucket (the assumption its quantile estimate makes too).
      for (size_t b = 0; b < kStageLatencyBuckets; ++b) {
        const double our_lo = b > 0 ? kStageLatencyBoundsS[b - 1] : -INFINITY;
        const double our_hi = b < kFinite ? kStageLatencyBoundsS[b] : INFINITY;
        const double overlap = std::min(hi, our_hi) - std::max(lo, our_lo);
        if (overlap > 0) buckets[b] += c * overlap / (hi - lo);
      }
    }
  } else {
    added = growth(h.count);
    buckets[kFinite] += added;  // observations without buckets: only "at most +Inf" is known
  }
  if (added == 0) return;
  count += added;
  // Latencies are positive: a zero sum over observations means the engine exported no `_sum`.
  if (growth(h.sum) > 0) {
    sum_s += growth(h.sum);
  } else {
    sum_known = false;
  }
}

void metrics_internal::DeviceSeries::Add(const model::DeviceProfile& d) {
  // The window's counters as a series, added like an evicted process's (one set of sums).
  DeviceSeries one;
  one.categories = d.categories;
  one.busy_ns = d.busy_ns;
  one.memcpy = d.memcpy;
  one.idle_ns = d.idle_causes.ns;
  one.launch_calls = d.launch.cpu_launch.count;
  one.launch_cpu_ns = d.launch.cpu_launch.total_ns;
  one.launch_delays = d.launch.launch_delay.count;
  one.launch_delay_ns = d.launch.launch_delay.total_ns;
  one.graph_launches = d.launch.graph_launches;
  one.kernels_from_graphs = d.launch.kernels_from_graphs;
  for (size_t i = 0; i < model::kPhaseCount; ++i) {
    one.phase_steps[i] = d.phases.phases[i].steps;
    one.phase_step_ns[i] = d.phases.phases[i].step_ns;
    one.phase_ns[i] = d.phases.phases[i].category_ns;
  }
  one.phase_ns[model::kPhaseCount] = d.phases.outside_ns;
  one.uuid = d.device_uuid;
  Add(one);
}

void metrics_internal::DeviceSeries::Add(const DeviceSeries& d) {
  for (int c = 0; c < model::kCategoryCount; ++c) {
    categories[c].count += d.categories[c].count;
    categories[c].time_ns += d.categories[c].time_ns;
  }
  busy_ns += d.busy_ns;
  for (size_t k = 0; k < kMemcpyKinds; ++k) {
    memcpy[k].count += d.memcpy[k].count;
    memcpy[k].bytes += d.memcpy[k].bytes;
    memcpy[k].time_ns += d.memcpy[k].time_ns;
    memcpy[k].pageable_count += d.memcpy[k].pageable_count;
  }
  for (size_t c = 0; c < model::kIdleCauseCount; ++c) idle_ns[c] += d.idle_ns[c];
  launch_calls += d.launch_calls;
  launch_cpu_ns += d.launch_cpu_ns;
  launch_delays += d.launch_delays;
  launch_delay_ns += d.launch_delay_ns;
  graph_launches += d.graph_launches;
  kernels_from_graphs += d.kernels_from_graphs;
  for (size_t i = 0; i < model::kPhaseCount; ++i) {
    phase_steps[i] += d.phase_steps[i];
    phase_step_ns[i] += d.phase_step_ns[i];
  }
  for (size_t i = 0; i <= model::kPhaseCount; ++i)
    for (size_t c = 0; c < model::kCategoryCount; ++c) phase_ns[i][c] += d.phase_ns[i][c];
  if (d.uuid_conflict || (!uuid.empty() && !d.uuid.empty() && uuid != d.uuid)) {
    uuid_conflict = true;
    uuid.clear();
  } else if (!uuid_conflict && !d.uuid.empty()) {
    uuid = d.uuid;
  }
}

std::string metrics_internal::RangeLabel(std::string_view name) {
  std::string out;
  out.reserve(std::min(name.size(), kMaxRangeLabelBytes));
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? ' ' : c;
  }
  if (out.size() > kMaxRangeLabelBytes) {
    size_t cut = kMaxRangeLabelBytes - 3;
    // Back to the start of a UTF-8 character (continuation bytes are 10xxxxxx).
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out += "...";
  }
  if (out.find_first_not_of(' ') == std::string::npos) return "(unnamed)";
  if (out == kOtherRangeLabel) return "(other) (range)";
  return out;
}

void metrics_internal::ProcessSeries::AddRange(const std::string& label, const RangeSeries& r,
                                               size_t max_names) {
  auto it = ranges.find(label);
  if (it == ranges.end()) {
    const bool other = label == kOtherRangeLabel || range_names >= max_names;
    it = ranges.try_emplace(other ? std::string(kOtherRangeLabel) : label).first;
    if (!other) ++range_names;
  }
  it->second.count += r.count;
  it->second.host_ns += r.host_ns;
  it->second.gpu_ns += r.gpu_ns;
}

void metrics_internal::ProcessSeries::AddRanges(const model::RangeTable& table, size_t max_names) {
  // Counters only grow: a negative time (a corrupt window) adds nothing.
  auto series = [](const model::RangeStats& s) {
    return RangeSeries{s.duration.count, std::max<int64_t>(s.duration.total_ns, 0),
                       std::max<int64_t>(s.gpu_time_ns, 0)};
  };
  for (const model::RangeStats& r : table.rows) AddRange(RangeLabel(r.name), series(r), max_names);
  if (table.tail.duration.count > 0 || table.tail.gpu_time_ns > 0)
    AddRange(kOtherRangeLabel, series(table.tail), max_names);
}

void metrics_internal::ProcessSeries::AddCounters(const ProcessSeries& other,
                                                  size_t max_range_names) {
  for (const auto& [id, d] : other.devices) devices[id].Add(d);
  // The evicted remainder keeps the names it has and folds the rest into (other) too.
  for (const auto& [label, r] : other.ranges) AddRange(label, r, max_range_names);
  for (size_t t = 0; t < kSyncTypes; ++t) {
    sync_count[t] += other.sync_count[t];
    sync_wait_ns[t] += other.sync_wait_ns[t];
  }
  for (size_t q = 0; q < kQualities; ++q) data_quality[q] += other.data_quality[q];
  profiler_cpu_ns += other.profiler_cpu_ns;
  windows += other.windows;
}

MetricsExporter::ProcessSeries* MetricsExporter::FindOrAddProcess(const wire::Hello& hello) {
  const ProcessKey key{hello.hostname, hello.rank, hello.pid};
  auto it = processes_.find(key);
  if (it == processes_.end()) {
    if (processes_.size() >= std::max<size_t>(options_.max_processes, 1)) EvictOne();
    ProcessSeries series;
    series.pid = std::to_string(hello.pid);
    series.rank = std::to_string(hello.rank);
    series.host = hello.hostname;
    it = processes_.emplace(key, std::move(series)).first;
  }
  ProcessSeries& p = it->second;
  if (p.process_start_unix_ns != hello.process_start_unix_ns) {
    // A new process behind the same labels (pid reuse): same series, fresh gauges.
    p.process_start_unix_ns = hello.process_start_unix_ns;
    p.ended = false;
    p.has_gauges = false;
  }
  p.last_event = ++sequence_;
  return &p;
}

void MetricsExporter::EvictOne() {
  // The process that ended longest ago; without ended ones, the one silent longest.
  auto victim = processes_.end();
  for (auto it = processes_.begin(); it != processes_.end(); ++it) {
    if (victim == processes_.end()) {
      victim = it;
      continue;
    }
    const ProcessSeries& a = it->second;
    const ProcessSeries& b = victim->second;
    if (a.ended != b.ended ? a.ended : a.last_event < b.last_event) victim = it;
  }
  if (victim == processes_.end()) return;
  if (!evicted_) {
    evicted_.emplace();
    evicted_->pid = "evicted";
  }
  evicted_->AddCounters(victim->second, options_.max_range_names);
  processes_.erase(victim);
  ++evictions_;
}

namespace {

// The primary verdict of one window. Per window rather than over a range: /metrics has no store
// to read, and one Analyze() of a single small window per process and scrape is cheap next to
// the windows' own aggregation. No host telemetry is joined: hardware_saturated and
// throttling never fire here and batching only from idle gaps; `inferscope report` and the API
// diagnose a range with its telemetry.
std::string PrimaryVerdict(const model::ProfileWindow& window) {
  analyze::AnalysisOptions options;
  options.display_names = false;  // only the verdict's id is read
  for (const model::ProcessProfile& p : window.processes)
    for (const model::DeviceProfile& d : p.devices)
      if (d.timeline.bin_ns > 0) options.bin_ns = d.timeline.bin_ns;
  return analyze::Analyze({{"", "inferscope_agent", &window}}, options).diagnosis.primary;
}

}  // namespace

void MetricsExporter::OnWindow(const wire::Hello& process, const model::ProfileWindow& window) {
  OnWindow(process, std::make_shared<const model::ProfileWindow>(window));
}

void MetricsExporter::OnWindow(const wire::Hello& process,
                               std::shared_ptr<const model::ProfileWindow> shared) {
  const model::ProfileWindow& window = *shared;
  std::lock_guard<std::mutex> lock(mu_);
  ProcessSeries* p = FindOrAddProcess(process);
  std::map<uint32_t, int64_t> busy_in_window;
  for (const model::ProcessProfile& pp : window.processes) {
    for (const model::DeviceProfile& d : pp.devices) {
      p->devices[d.device].Add(d);
      busy_in_window[d.device] += d.busy_ns;
      for (size_t t = 0; t < kSyncTypes; ++t) {
        p->sync_count[t] += d.syncs[t].wait.count;
        p->sync_wait_ns[t] += d.syncs[t].wait.total_ns;
      }
    }
    for (size_t q = 0; q < kQualities; ++q) p->data_quality[q] += pp.data_quality[q];
    p->profiler_cpu_ns += pp.profiler_cpu_ns;
    if (!pp.ranges.empty()) p->AddRanges(pp.ranges, options_.max_range_names);
  }
  ++p->windows;

  // Gauges follow the newest window only; a window after the end of its process (it should not
  // happen) must not bring back gauges nobody will clear.
  if (p->ended || (p->has_gauges && window.end_ns < p->latest_end_ns)) return;
  p->has_gauges = true;
  p->latest_end_ns = window.end_ns;
  p->verdict_window = std::move(shared);
  const int64_t length_ns = window.end_ns - window.start_ns;
  for (auto& [id, ds] : p->devices) {
    if (length_ns <= 0) {
      ds.busy_ratio.reset();
      continue;
    }
    auto busy = busy_in_window.find(id);
    ds.busy_ratio = busy == busy_in_window.end()
                        ? 0.0
                        : static_cast<double>(busy->second) / static_cast<double>(length_ns);
  }
}

void MetricsExporter::OnProcessEnd(const wire::Hello& process) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = processes_.find(ProcessKey{process.hostname, process.rank, process.pid});
  if (it == processes_.end()) return;
  ProcessSeries& p = it->second;
  if (p.process_start_unix_ns != process.process_start_unix_ns) return;  // an older incarnation
  p.ended = true;
  p.has_gauges = false;
  p.verdict_window.reset();
  for (auto& [id, ds] : p.devices) ds.busy_ratio.reset();
  p.last_event = ++sequence_;
}

void MetricsExporter::AccumulateGpu(const telemetry::GpuMetricsWindow& gpu) {
  for (const telemetry::GpuDeviceWindow& d : gpu.devices) {
    gpu_xids_[{d.index, d.uuid}] += d.xid_count;
    if (!d.uuid.empty() && d.index >= 0) nvml_index_by_uuid_[d.uuid] = d.index;
  }
}

void MetricsExporter::AccumulateEngine(const EngineMetricsWindow& engine) {
  engine_counters_present_ |= engine.counters_present;
  // Counters only grow: a negative or non-finite delta (an engine restart the scraper could not
  // tell apart) adds nothing.
  auto growth = [](double delta) { return std::isfinite(delta) && delta > 0 ? delta : 0.0; };
  for (size_t i = 0; i < telemetry::scrape::kCounterSignalCount; ++i) {
    engine_counters_[i] += growth(engine.counters[i]);
  }
  engine_scrapes_ += engine.scrapes;
  engine_scrape_failures_ += engine.scrape_failures;
  engine_scrapes_abandoned_ += engine.scrapes_abandoned;
  for (size_t i = 0; i < telemetry::scrape::kStageCount; ++i) {
    const telemetry::scrape::StageHistogram& h = engine.stages[i];
    if (!engine.has_stage(telemetry::scrape::Stage(i)) && h.count <= 0) continue;
    if (!engine_stages_[i]) engine_stages_[i].emplace();
    engine_stages_[i]->AddEngine(h);
  }
}

void MetricsExporter::AccumulateSpans(const SpanWindow& spans) {
  span_requests_ += spans.requests;
  span_prompt_tokens_ += spans.prompt_tokens;
  span_completion_tokens_ += spans.completion_tokens;
  span_counters_.Merge(spans.counters);
  for (size_t i = 0; i < telemetry::otlp::kStageCount; ++i) {
    const telemetry::otlp::LatencyHistogram& h = spans.stages[i];
    if (h.count() == 0) continue;
    if (!span_stages_[i]) span_stages_[i].emplace();
    span_stages_[i]->AddSpans(h);
  }
}

void MetricsExporter::OnTelemetry(const telemetry::GpuMetricsWindow* gpu,
                                  const EngineMetricsWindow* engine, const SpanWindow* spans,
                                  const telemetry::TelemetrySet* others) {
  std::lock_guard<std::mutex> lock(mu_);
  others_ = others ? *others : telemetry::TelemetrySet();
  if (gpu && gpu->end_unix_ns > gpu_counted_end_ns_) {
    AccumulateGpu(*gpu);
    gpu_counted_end_ns_ = gpu->end_unix_ns;
  }
  gpu_ = gpu ? std::optional<telemetry::GpuMetricsWindow>(*gpu) : std::nullopt;

  if (engine && engine->end_unix_ns > engine_counted_end_ns_) {
    AccumulateEngine(*engine);
    engine_counted_end_ns_ = engine->end_unix_ns;
  }
  engine_ = engine ? std::optional<EngineMetricsWindow>(*engine) : std::nullopt;

  if (spans && spans->end_unix_ns > spans_counted_end_ns_) {
    AccumulateSpans(*spans);
    spans_counted_end_ns_ = spans->end_unix_ns;
  }
  spans_ = spans ? std::optional<SpanWindow>(*spans) : std::nullopt;
}

void MetricsExporter::UpdateVerdicts() const {
  std::vector<std::pair<ProcessKey, std::shared_ptr<const model::ProfileWindow>>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, p] : processes_)
      if (p.verdict_window) pending.emplace_back(key, p.verdict_window);
  }
  std::vector<std::string> verdicts;
  verdicts.reserve(pending.size());
  for (const auto& [key, window] : pending) verdicts.push_back(PrimaryVerdict(*window));
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < pending.size(); ++i) {
    auto it = processes_.find(pending[i].first);
    if (it == processes_.end()) continue;  // evicted meanwhile
    it->second.verdict = std::move(verdicts[i]);
    // A newer window that arrived meanwhile stays pending: the next Render diagnoses it.
    if (it->second.verdict_window == pending[i].second) it->second.verdict_window.reset();
  }
}

std::string MetricsExporter::Render(const AgentCounters& self) const {
  UpdateVerdicts();
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out.reserve(4096 + processes_.size() * 2048);
  Exposition e(&out);
  // Every process series, then the evicted remainder (counters only).
  std::vector<const ProcessSeries*> all;
  all.reserve(processes_.size() + 1);
  for (const auto& [key, p] : processes_) all.push_back(&p);
  if (evicted_) all.push_back(&*evicted_);
  RenderDeviceSeries(all, e);
  RenderProcessSeries(all, e);
  RenderGpuTelemetry(e);
  RenderEngineTelemetry(e);
  RenderSpanTelemetry(e);
  RenderOtherTelemetry(e);
  RenderStageLatency(e);
  RenderAgent(self, e);
  return out;
}

// Per (process, device): GPU time by category, busy time and ratio, copies.
void MetricsExporter::RenderDeviceSeries(const std::vector<const ProcessSeries*>& all,
                                         Exposition& e) const {
  // One GPU identity: the NVML index of the device's UUID when NVML saw it, else the CUDA ordinal
  // (they agree unless CUDA_VISIBLE_DEVICES or the device order renumbers the GPUs). Per process,
  // all or nothing: a process with one unmapped device keeps ordinals for all, so two of its
  // devices never share a label set.
  auto nvml_index = [&](const DeviceSeries& d) -> std::optional<int32_t> {
    if (d.uuid.empty()) return std::nullopt;
    auto it = nvml_index_by_uuid_.find(d.uuid);
    if (it == nvml_index_by_uuid_.end()) return std::nullopt;
    return it->second;
  };
  std::map<const ProcessSeries*, bool> mapped;
  for (const ProcessSeries* p : all) {
    bool all_mapped = !p->devices.empty();
    for (const auto& [id, d] : p->devices) all_mapped = all_mapped && nvml_index(d).has_value();
    mapped[p] = all_mapped;
  }
  auto gpu_label = [&](const ProcessSeries* p, uint32_t id, const DeviceSeries& d) {
    if (mapped[p]) return std::to_string(*nvml_index(d));
    return std::to_string(id);
  };
  // One sample per (process, device, kind) with a count: categories and copy directions.
  auto per_device_kind = [&](const char* family, const char* type, const char* help,
                             const char* kind_label, const char* const* kind_names, size_t kinds,
                             auto count_of, auto value_of) {
    e.Family(family, type, help);
    for (const ProcessSeries* p : all) {
      for (const auto& [id, d] : p->devices) {
        const std::string gpu = gpu_label(p, id, d);
        for (size_t k = 0; k < kinds; ++k) {
          if (count_of(d, k) == 0) continue;
          e.Sample({{kind_label, kind_names[k]},
                    {"gpu", gpu},
                    {"pid", p->pid},
                    {"rank", p->rank},
                    {"host", p->host}},
                   value_of(d, k));
        }
      }
    }
  };
  // And one per (process, device).
  auto per_device = [&](const char* family, const char* type, const char* help, auto value_of) {
    e.Family(family, type, help);
    for (const ProcessSeries* p : all) {
      for (const auto& [id, d] : p->devices) {
        const std::optional<double> v = value_of(d);
        if (!v) continue;
        e.Sample(
            {{"gpu", gpu_label(p, id, d)}, {"pid", p->pid}, {"rank", p->rank}, {"host", p->host}},
            *v);
      }
    }
  };
  constexpr size_t kCategories = model::kCategoryCount;
  per_device_kind(
      "inferscope_gpu_kernel_seconds_total", "counter",
      "GPU kernel time by category (sum of kernel durations; concurrent kernels both count).",
      "category", model::kCategoryNames, kCategories,
      [](const DeviceSeries& d, size_t c) { return d.categories[c].count; },
      [](const DeviceSeries& d, size_t c) { return Seconds(d.categories[c].time_ns); });
  per_device_kind(
      "inferscope_gpu_kernels_total", "counter", "Kernels run, by category.", "category",
      model::kCategoryNames, kCategories,
      [](const DeviceSeries& d, size_t c) { return d.categories[c].count; },
      [](const DeviceSeries& d, size_t c) { return static_cast<double>(d.categories[c].count); });
  // The mapping itself: which CUDA ordinal of which process is which NVML GPU.
  e.Family("inferscope_process_gpu_info", "gauge",
           "1 per GPU a process used: its CUDA ordinal in that process (cuda_ordinal), the device "
           "UUID it reported and the `gpu` label the other series use (the NVML index when NVML "
           "knows the UUID, else the CUDA ordinal).");
  for (const ProcessSeries* p : all) {
    for (const auto& [id, d] : p->devices) {
      e.Sample({{"gpu", gpu_label(p, id, d)},
                {"cuda_ordinal", std::to_string(id)},
                {"uuid", d.uuid},
                {"pid", p->pid},
                {"rank", p->rank},
                {"host", p->host}},
               1);
    }
  }
  per_device("inferscope_gpu_busy_seconds_total", "counter",
             "Time the device ran any GPU operation of the process (union of activity).",
             [](const DeviceSeries& d) -> std::optional<double> { return Seconds(d.busy_ns); });
  per_device("inferscope_gpu_busy_ratio", "gauge",
             "Busy time of the process's latest window divided by the window length.",
             [](const DeviceSeries& d) { return d.busy_ratio; });
  per_device_kind(
      "inferscope_memcpy_bytes_total", "counter", "Bytes copied by the GPU, by direction.",
      "direction", model::kMemcpyKindNames, kMemcpyKinds,
      [](const DeviceSeries& d, size_t k) { return d.memcpy[k].count; },
      [](const DeviceSeries& d, size_t k) { return static_cast<double>(d.memcpy[k].bytes); });
  per_device_kind(
      "inferscope_memcpy_seconds_total", "counter",
      "GPU time spent in memory copies, by direction.", "direction", model::kMemcpyKindNames,
      kMemcpyKinds, [](const DeviceSeries& d, size_t k) { return d.memcpy[k].count; },
      [](const DeviceSeries& d, size_t k) { return Seconds(d.memcpy[k].time_ns); });
  // Idle time by cause: a cause shows once it took any time (the causes of a device sum to its
  // idle time, so `sum by (cause)` splits it exactly).
  per_device_kind(
      "inferscope_gpu_idle_seconds_total", "counter",
      "Time the device was idle between its first and last activity in a window, by the cause "
      "the host thread behind the next work shows (docs/diagnosis.md).",
      "cause", model::kIdleCauseNames, model::kIdleCauseCount,
      [](const DeviceSeries& d, size_t c) { return d.idle_ns[c]; },
      [](const DeviceSeries& d, size_t c) { return Seconds(d.idle_ns[c]); });
  // Forward phases (prefill vs decode, docs/metrics.md): a (phase, category) pair shows once it
  // took any time; at most 5 x 14 per device, in practice a handful.
  per_device_kind(
      "inferscope_phase_steps_total", "counter",
      "Whole steps between the host's turns, by forward phase (prefill, decode, mixed, unknown).",
      "phase", model::kPhaseNames, model::kPhaseCount,
      [](const DeviceSeries& d, size_t i) { return d.phase_steps[i]; },
      [](const DeviceSeries& d, size_t i) { return static_cast<double>(d.phase_steps[i]); });
  per_device_kind(
      "inferscope_phase_step_seconds_total", "counter",
      "Summed durations of those steps (first GPU operation to the host's turn), by phase.",
      "phase", model::kPhaseNames, model::kPhaseCount,
      [](const DeviceSeries& d, size_t i) { return d.phase_steps[i]; },
      [](const DeviceSeries& d, size_t i) { return Seconds(d.phase_step_ns[i]); });
  e.Family("inferscope_phase_gpu_seconds_total", "counter",
           "GPU operation time (kernels; copies and memsets as memory) by the forward phase of the "
           "step it ran in and category; phase outside: steps that are not whole (over 60 s).");
  static constexpr const char* kPhaseLabels[] = {"prefill", "decode", "mixed", "unknown",
                                                 "outside"};
  static_assert(sizeof(kPhaseLabels) / sizeof(kPhaseLabels[0]) == model::kPhaseCount + 1);
  for (const ProcessSeries* p : all) {
    for (const auto& [id, d] : p->devices) {
      const std::string gpu = gpu_label(p, id, d);
      for (size_t i = 0; i <= model::kPhaseCount; ++i) {
        for (size_t c = 0; c < model::kCategoryCount; ++c) {
          if (d.phase_ns[i][c] == 0) continue;
          e.Sample({{"phase", kPhaseLabels[i]},
                    {"category", model::kCategoryNames[c]},
                    {"gpu", gpu},
                    {"pid", p->pid},
                    {"rank", p->rank},
                    {"host", p->host}},
                   Seconds(d.phase_ns[i][c]));
        }
      }
    }
  }
  // Launch families appear for a device once it saw a launch (traces without API records never
  // do); a zero would claim launches were measured and free.
  auto if_launched = [](const DeviceSeries& d, double v) {
    return d.launch_calls + d.launch_delays + d.graph_launches > 0 ? std::optional<double>(v)
                                                                   : std::nullopt;
  };
  per_device("inferscope_kernel_launches_total", "counter",
             "Kernel launch API calls (rate() is the launch rate).", [&](const DeviceSeries& d) {
               return if_launched(d, static_cast<double>(d.launch_calls));
             });
  per_device("inferscope_kernel_launch_cpu_seconds_total", "counter",
             "CPU time spent inside kernel launch calls.",
             [&](const DeviceSeries& d) { return if_launched(d, Seconds(d.launch_cpu_ns)); });
  per_device("inferscope_kernel_launch_delay_seconds_total", "counter",
             "Sum of launch-to-start delays (kernel start minus launch call start).",
             [&](const DeviceSeries& d) { return if_launched(d, Seconds(d.launch_delay_ns)); });
  per_device(
      "inferscope_kernel_launch_delays_total", "counter",
      "Kernels whose launch delay was measured (divide the delay seconds by it).",
      [&](const DeviceSeries& d) { return if_launched(d, static_cast<double>(d.launch_delays)); });
  per_device(
      "inferscope_graph_launches_total", "counter", "CUDA graph launches.",
      [&](const DeviceSeries& d) { return if_launched(d, static_cast<double>(d.graph_launches)); });
  per_device("inferscope_graph_kernels_total", "counter", "Kernels run from CUDA graphs.",
             [&](const DeviceSeries& d) {
               return if_launched(d, static_cast<double>(d.kernels_from_graphs));
             });
}

// Per process: host syncs, data quality, the profiler's own cost, windows, the latest window.
void MetricsExporter::RenderProcessSeries(const std::vector<const ProcessSeries*>& all,
                                          Exposition& e) const {
  e.Family("inferscope_host_sync_wait_seconds_total", "counter",
           "Time host threads blocked waiting for the GPU, by synchronization type "
           "(stream_wait_event is a GPU-side wait).");
  for (const ProcessSeries* p : all) {
    for (size_t t = 0; t < kSyncTypes; ++t) {
      if (p->sync_count[t] == 0) continue;
      e.Sample({{"type", model::kSyncTypeNames[t]},
                {"pid", p->pid},
                {"rank", p->rank},
                {"host", p->host}},
               Seconds(p->sync_wait_ns[t]));
    }
  }
  e.Family("inferscope_host_syncs_total", "counter", "Synchronizations, by type.");
  for (const ProcessSeries* p : all) {
    for (size_t t = 0; t < kSyncTypes; ++t) {
      if (p->sync_count[t] == 0) continue;
      e.Sample({{"type", model::kSyncTypeNames[t]},
                {"pid", p->pid},
                {"rank", p->rank},
                {"host", p->host}},
               static_cast<double>(p->sync_count[t]));
    }
  }
  e.Family("inferscope_records_dropped_total", "counter",
           "Profiling records lost before decoding (e.g. CUPTI buffer pool empty).");
  for (const ProcessSeries* p : all) {
    e.Sample({{"pid", p->pid}, {"rank", p->rank}, {"host", p->host}},
             static_cast<double>(p->data_quality[0]));
  }
  e.Family("inferscope_data_quality_issues_total", "counter",
           "Records rejected or repaired, by reason (records_dropped has its own family).");
  for (const ProcessSeries* p : all) {
    for (size_t q = 1; q < kQualities; ++q) {
      e.Sample({{"reason", model::kDataQualityNames[q]},
                {"pid", p->pid},
                {"rank", p->rank},
                {"host", p->host}},
               static_cast<double>(p->data_quality[q]));
    }
  }
  // NVTX ranges (`run --nvtx`, docs/metrics.md): a process's first max_range_names names and
  // (other), so the range names (engine- and user-chosen text) cannot grow the label space.
  auto range_family = [&](const char* name, const char* help, auto value) {
    e.Family(name, "counter", help);
    for (const ProcessSeries* p : all)
      for (const auto& [label, r] : p->ranges)
        e.Sample({{"range", label}, {"pid", p->pid}, {"rank", p->rank}, {"host", p->host}},
                 value(r));
  };
  using metrics_internal::RangeSeries;
  range_family("inferscope_nvtx_ranges_total",
               "NVTX range instances (run --nvtx), by range name: a process's first names, the "
               "rest as (other).",
               [](const RangeSeries& r) { return static_cast<double>(r.count); });
  range_family("inferscope_nvtx_range_seconds_total",
               "Host time inside NVTX ranges (start to end; nested ranges count in each name).",
               [](const RangeSeries& r) { return Seconds(r.host_ns); });
  range_family("inferscope_nvtx_range_gpu_seconds_total",
               "GPU time (kernels, copies, memsets) launched inside NVTX ranges, by correlation.",
               [](const RangeSeries& r) { return Seconds(r.gpu_ns); });
  e.Family("inferscope_profiler_cpu_seconds_total", "counter",
           "CPU time inferscope itself spent in the profiled process.");
  for (const ProcessSeries* p : all) {
    e.Sample({{"pid", p->pid}, {"rank", p->rank}, {"host", p->host}}, Seconds(p->profiler_cpu_ns));
  }
  e.Family("inferscope_windows_total", "counter", "Profile windows received from the process.");
  for (const ProcessSeries* p : all) {
    e.Sample({{"pid", p->pid}, {"rank", p->rank}, {"host", p->host}},
             static_cast<double>(p->windows));
  }
  e.Family("inferscope_last_window_end_timestamp_seconds", "gauge",
           "End of the process's latest profile window (unix time); gone once it ended.");
  for (const ProcessSeries* p : all) {
    if (!p->has_gauges) continue;
    e.Sample({{"pid", p->pid}, {"rank", p->rank}, {"host", p->host}}, Seconds(p->latest_end_ns));
  }
  // Every verdict, 1 for the primary and 0 for the others, so a verdict's series never has gaps
  // while the process runs (avg_over_time is the share of windows it was primary).
  e.Family("inferscope_verdict", "gauge",
           "Primary diagnosis of the process's latest window (1) among all verdicts (0).");
  for (const ProcessSeries* p : all) {
    if (!p->has_gauges || p->verdict.empty()) continue;
    for (const char* id : analyze::kFindingIds) {
      e.Sample({{"verdict", id}, {"pid", p->pid}, {"rank", p->rank}, {"host", p->host}},
               p->verdict == id ? 1 : 0);
    }
  }
}

// GPU telemetry (NVML): the latest window's gauges, XID counts over all windows.
void MetricsExporter::RenderGpuTelemetry(Exposition& e) const {
  if (gpu_) {
    e.Family("inferscope_gpu_metrics_up", "gauge",
             "1 when NVML could be read, 0 when not (see `inferscope status` for why).");
    e.Sample({}, gpu_->unavailable.empty() ? 1 : 0);
    for (size_t g = 0; g < std::size(kGpuGauges); ++g) {
      const GpuGauge& gauge = kGpuGauges[g];
      // Rows of one family are adjacent in the table: one header for them.
      if (g == 0 || std::string_view(kGpuGauges[g - 1].family) != gauge.family) {
        e.Family(gauge.family, "gauge", gauge.help);
      }
      for (const telemetry::GpuDeviceWindow& d : gpu_->devices) {
        auto m = d.metrics.find(gauge.metric);
        if (m == d.metrics.end() || m->second.samples == 0) continue;
        const std::string index = std::to_string(d.index);
        const double value = m->second.mean() * gauge.factor;
        if (gauge.extra_label) {
          e.Sample({{"gpu", index}, {"uuid", d.uuid}, {gauge.extra_label, gauge.extra_value}},
                   value);
        } else {
          e.Sample({{"gpu", index}, {"uuid", d.uuid}}, value);
        }
      }
    }
    e.Family("inferscope_gpu_clock_event_ratio", "gauge",
             "Fraction of the latest window's samples in which a clock-event (throttle) reason "
             "was active; only reasons seen active.");
    for (const telemetry::GpuDeviceWindow& d : gpu_->devices) {
      for (const auto& [reason, active] : d.throttle_active) {
        if (active == 0) continue;
        e.Sample({{"gpu", std::to_string(d.index)}, {"uuid", d.uuid}, {"reason", reason}},
                 d.ThrottleFraction(reason));
      }
    }
    e.Family("inferscope_gpu_lost", "gauge", "1 when the GPU fell off the bus.");
    for (const telemetry::GpuDeviceWindow& d : gpu_->devices) {
      e.Sample({{"gpu", std::to_string(d.index)}, {"uuid", d.uuid}}, d.lost ? 1 : 0);
    }
  }
  e.Family("inferscope_gpu_xid_errors_total", "counter", "XID errors NVML reported.");
  for (const auto& [key, count] : gpu_xids_) {
    e.Sample({{"gpu", std::to_string(key.first)}, {"uuid", key.second}},
             static_cast<double>(count));
  }
}

// Engine telemetry (the engine's own /metrics): the latest window's gauges, counters over all.
void MetricsExporter::RenderEngineTelemetry(Exposition& e) const {
  if (engine_) {
    e.Family("inferscope_engine_info", "gauge", "The engine the scraper found (value always 1).");
    e.Sample({{"engine", engine_->engine}, {"backend", engine_->backend}}, 1);
    for (size_t i = 0; i < telemetry::scrape::kGaugeSignalCount; ++i) {
      const telemetry::scrape::GaugeStats& g = engine_->gauges[i];
      if (!engine_->has_gauge(telemetry::scrape::GaugeSignal(i)) || g.samples == 0) continue;
      e.Family(kEngineGaugeFamilies[i][0], "gauge", kEngineGaugeFamilies[i][1]);
      e.Sample({}, g.mean());
    }
  }
  for (size_t i = 0; i < telemetry::scrape::kCounterSignalCount; ++i) {
    if (!(engine_counters_present_ >> i & 1)) continue;
    e.Family(kEngineCounterFamilies[i][0], "counter", kEngineCounterFamilies[i][1]);
    e.Sample({}, engine_counters_[i]);
  }
  if (engine_counted_end_ns_ > 0) {
    e.Family("inferscope_engine_scrapes_total", "counter", "Successful scrapes of the engine.");
    e.Sample({}, static_cast<double>(engine_scrapes_));
    e.Family("inferscope_engine_scrape_failures_total", "counter",
             "Scrapes of the engine that failed.");
    e.Sample({}, static_cast<double>(engine_scrape_failures_));
    e.Family("inferscope_engine_scrapes_abandoned_total", "counter",
             "Failed scrapes whose GET was sent and never answered in time (timed out).");
    e.Sample({}, static_cast<double>(engine_scrapes_abandoned_));
  }
}

// Request spans (OTLP): counters over all windows.
void MetricsExporter::RenderSpanTelemetry(Exposition& e) const {
  if (spans_counted_end_ns_ > 0) {
    e.Family("inferscope_span_requests_total", "counter", "Finished requests seen as spans.");
    e.Sample({}, static_cast<double>(span_requests_));
    e.Family("inferscope_span_prompt_tokens_total", "counter", "Prompt tokens of those requests.");
    e.Sample({}, static_cast<double>(span_prompt_tokens_));
    e.Family("inferscope_span_completion_tokens_total", "counter",
             "Completion tokens of those requests.");
    e.Sample({}, static_cast<double>(span_completion_tokens_));
    e.Family("inferscope_spans_received_total", "counter", "Spans in accepted OTLP exports.");
    e.Sample({}, static_cast<double>(span_counters_.spans_received));
    e.Family("inferscope_spans_dropped_total", "counter", "Spans not summarized, by reason.");
    const std::pair<const char*, uint64_t> dropped[] = {
        {"over_limit", span_counters_.dropped_over_limit},
        {"bad_timestamps", span_counters_.dropped_bad_timestamps},
        {"late", span_counters_.dropped_late},
        {"future", span_counters_.dropped_future},
        {"buffer_full", span_counters_.dropped_buffer_full},
    };
    for (const auto& [reason, n] : dropped) e.Sample({{"reason", reason}}, static_cast<double>(n));
    e.Family("inferscope_span_exports_rejected_total", "counter",
             "OTLP exports refused (malformed, too large, unsupported type).");
    e.Sample({}, static_cast<double>(span_counters_.requests_rejected));
  }
}

// The registered kinds' own series (telemetry::TelemetryData::WriteMetrics), in registry order.
void MetricsExporter::RenderOtherTelemetry(Exposition& e) const {
  for (const telemetry::TelemetryKind* kind : telemetry::TelemetryKinds().kinds())
    if (const telemetry::TelemetryData* d = others_.Find(*kind)) d->WriteMetrics(e);
}

// Stage latency: one histogram family for spans and engine, over all windows.
void MetricsExporter::RenderStageLatency(Exposition& e) const {
  e.Family("inferscope_stage_latency_seconds", "histogram",
           "Request stage latency over all windows (fixed buckets, docs/metrics.md).");
  auto histogram = [&e](std::string_view source, std::string_view stage,
                        const StageHistogramSeries& h) {
    // Cumulative, capped at the exact count so rounding in re-bucketed counts never makes a
    // finite bucket exceed +Inf.
    double cumulative = 0;
    for (size_t b = 0; b + 1 < metrics_internal::kStageLatencyBuckets; ++b) {
      cumulative += h.buckets[b];
      e.Sample({{"stage", stage},
                {"source", source},
                {"le", FormatPrometheusValue(metrics_internal::kStageLatencyBoundsS[b])}},
               std::min(cumulative, h.count), "_bucket");
    }
    e.Sample({{"stage", stage}, {"source", source}, {"le", "+Inf"}}, h.count, "_bucket");
    if (h.sum_known) e.Sample({{"stage", stage}, {"source", source}}, h.sum_s, "_sum");
    e.Sample({{"stage", stage}, {"source", source}}, h.count, "_count");
  };
  for (size_t i = 0; i < telemetry::otlp::kStageCount; ++i) {
    if (span_stages_[i])
      histogram("spans", telemetry::otlp::StageName(telemetry::otlp::Stage(i)), *span_stages_[i]);
  }
  for (size_t i = 0; i < telemetry::scrape::kStageCount; ++i) {
    if (engine_stages_[i])
      histogram("engine", telemetry::scrape::StageName(telemetry::scrape::Stage(i)),
                *engine_stages_[i]);
  }
}

// The agent itself.
void MetricsExporter::RenderAgent(const AgentCounters& self, Exposition& e) const {
  const std::pair<const char*, uint64_t> agent_counters[] = {
      {"sessions", self.sessions},
      {"windows_received", self.windows_received},
      {"windows_stored", self.windows_stored},
      {"dropped_connections", self.dropped_connections},
      {"store_errors", self.store_errors},
      {"refused_connections", self.refused_connections},
      {"windows_rejected", self.windows_rejected},
  };
  const char* agent_help[] = {
      "Connections from profiled processes that sent a valid hello.",
      "Valid profile windows received.",
      "Profile windows committed to the store.",
      "Connections dropped: bad frames or windows, a missed hello or frame deadline, the "
      "partial-frame budget.",
      "Store writes that failed.",
      "Connections refused: another user's process, or beyond the connection cap.",
      "Windows refused for starting in the future by the agent's clock.",
  };
  for (size_t i = 0; i < std::size(agent_counters); ++i) {
    const std::string name = std::string("inferscope_agent_") + agent_counters[i].first + "_total";
    e.Family(name, "counter", agent_help[i]);
    e.Sample({}, static_cast<double>(agent_counters[i].second));
  }
  e.Family("inferscope_agent_connected_processes", "gauge", "Processes connected now.");
  e.Sample({}, static_cast<double>(self.connected_processes));
  e.Family("inferscope_metrics_processes", "gauge",
           "Process label sets /metrics keeps (bounded; see evicted_processes_total).");
  e.Sample({}, static_cast<double>(processes_.size()));
  e.Family("inferscope_metrics_evicted_processes_total", "counter",
           "Process label sets folded into pid=\"evicted\" to bound cardinality.");
  e.Sample({}, static_cast<double>(evictions_));
}

}  // namespace inferscope::server
