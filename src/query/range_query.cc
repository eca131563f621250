// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/query/range_query.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "src/base/time_point.h"
#include "src/model/profile_merge.h"
#include "src/store/rollups.h"
#include "src/telemetry/nvml/gpu_metrics_window.h"
#include "src/telemetry/otlp/span_window.h"
#include "src/telemetry/registry/telemetry_kinds.h"
#include "src/telemetry/scrape/engine_window.h"

namespace inferscope::query {
namespace {

// Keeps only device `device` of every process; drops processes left without devices.
void KeepDevice(uint32_t device, model::ProfileWindow* w) {
  for (model::ProcessProfile& p : w->processes)
    std::erase_if(p.devices, [&](const model::DeviceProfile& d) { return d.device != device; });
  std::erase_if(w->processes, [](const model::ProcessProfile& p) { return p.devices.empty(); });
}

// Merges every record of `kind` in the range into `out`.
base::Status MergeTelemetry(store::SqliteStore& store, const telemetry::TelemetryKind& kind,
                            const RangeQuery& query, telemetry::TelemetrySet* out,
                            RangeProfile* profile) {
  ASSIGN_OR_RETURN(std::vector<store::TelemetryRecord> records,
                   store.QueryTelemetry(kind.record_kind(), query.from_ns, query.to_ns));
  for (const store::TelemetryRecord& r : records) {
    auto w = kind.FromJson(r.json);
    if (!w.ok()) {
      ++profile->corrupt_telemetry;
      continue;
    }
    ++profile->telemetry_windows;
    out->Merge(std::move(w).value());
  }
  return base::OkStatus();
}

// Filters apply to the GPU metrics too: only the GPUs the matched profile ran on, or the one
// --device names. A profile's device is a CUDA ordinal and NVML's is a host index: they are matched
// by the device UUID the injection library reports, and by number only when a profile has no UUID
// (an older library; then they agree unless CUDA_VISIBLE_DEVICES reorders them). `merged` is
// already filtered. Engine metrics and spans are the engine's, host-wide: they stay.
void FilterGpuMetrics(const RangeQuery& query,
                      const std::map<int64_t, model::ProfileWindow>& merged,
                      telemetry::TelemetrySet* telemetry) {
  telemetry::GpuMetricsWindow* gpu = telemetry->GetMutable<telemetry::GpuMetricsWindow>();
  if (!gpu || (!query.pid && !query.rank && !query.device)) return;
  std::set<std::string, std::less<>> nvml_uuids;
  for (const telemetry::GpuDeviceWindow& d : gpu->devices)
    if (!d.uuid.empty()) nvml_uuids.insert(d.uuid);
  std::set<int64_t> keep_index;
  std::set<std::string, std::less<>> keep_uuid;
  bool any_device = false;
  for (const auto& [id, w] : merged)
    for (const model::ProcessProfile& p : w.processes)
      for (const model::DeviceProfile& d : p.devices) {
        any_device = true;
        if (nvml_uuids.count(d.device_uuid))
          keep_uuid.insert(d.device_uuid);
        else
          keep_index.insert(d.device);  // no UUID, or one NVML does not list: the number must do
      }
  // --device alone with no profile of it in the range: nothing maps it, the number must do.
  if (!any_device && query.device && !query.pid && !query.rank) keep_index.insert(*query.device);
  std::erase_if(gpu->devices, [&](const telemetry::GpuDeviceWindow& d) {
    return !(!d.uuid.empty() && keep_uuid.count(d.uuid)) && !keep_index.count(d.index);
  });
  if (gpu->devices.empty()) telemetry->Erase<telemetry::GpuMetricsWindow>();
}

template <typename Container>
std::string Join(const Container& values, const char* separator) {
  std::string out;
  for (const auto& v : values) {
    if (!out.empty()) out += separator;
    out += fmt::format("{}", v);
  }
  return out;
}

// One run of the engine: processes (host, pid, process start) that lived together. A restart
// starts a new run; ranks of two runs are never compared (a process and its own restart would
// read as a straggler).
struct Run {
  std::vector<int64_t> ids;  // process rows, by start
  // (host, rank) -> the end of the last window of that rank's processes, known ranks only.
  std::map<std::pair<std::string, int32_t>, int64_t> ranks;
  std::set<std::string> hosts;
  int64_t start_ns = std::numeric_limits<int64_t>::max(), end_ns = 0;
};

int64_t StartOf(const store::StoredProcess& p) {
  return p.hello.process_start_unix_ns > 0 ? p.hello.process_start_unix_ns : p.first_seen_ns;
}

// Why process `p` (active until `end_ns`) is not of `run`; "" when it is.
std::string RunConflict(const Run& run, const store::StoredProcess& p, int64_t start_ns) {
  const wire::Hello& h = p.hello;
  // The same rank on the same host again, started once the first had stopped sending: its
  // restart. Started while the first still ran, it is another server beside it (replicas of a
  // one-GPU model each say rank 0), which is the same run: both are reported.
  if (auto it = h.rank >= 0 ? run.ranks.find({h.hostname, h.rank}) : run.ranks.end();
      it != run.ranks.end() && start_ns > it->second)
    return fmt::format("rank {}{} again", h.rank, h.hostname.empty() ? "" : " on " + h.hostname);
  // Without a rank, a process of the same host started after every process of the run had sent
  // its last window is a later run (a restart without rank numbers). Ranked processes are told by
  // their rank only: one rank's windows may reach the store seconds after another's process
  // started (a slow start), which is no restart.
  if (h.rank < 0 && run.hosts.count(h.hostname) && start_ns > run.end_ns)
    return "started after it ended";
  return "";
}

struct Ordered {
  int64_t start_ns, id;
  auto operator<=>(const Ordered&) const = default;
};

// The range's processes by process start (their first window when the store has no process row).
std::vector<Ordered> ByStart(const std::map<int64_t, model::ProfileWindow>& merged,
                             const std::map<int64_t, store::StoredProcess>& processes) {
  std::vector<Ordered> order;
  for (const auto& [id, w] : merged) {
    auto it = processes.find(id);
    order.push_back({it == processes.end() ? w.start_ns : StartOf(it->second), id});
  }
  std::sort(order.begin(), order.end());
  return order;
}

store::StoredProcess ProcessOf(int64_t id,
                               const std::map<int64_t, store::StoredProcess>& processes) {
  auto it = processes.find(id);
  return it == processes.end() ? store::StoredProcess{} : it->second;
}

// Groups the range's processes into runs, in order of process start: a process joins the first
// run it fits. Runs come out in order of start.
std::vector<Run> GroupRuns(const std::map<int64_t, model::ProfileWindow>& merged,
                           const std::map<int64_t, store::StoredProcess>& processes) {
  std::vector<Run> runs;
  for (const Ordered& o : ByStart(merged, processes)) {
    const store::StoredProcess p = ProcessOf(o.id, processes);
    size_t r = 0;
    while (r < runs.size() && !RunConflict(runs[r], p, o.start_ns).empty()) ++r;
    if (r == runs.size()) runs.emplace_back();
    Run& run = runs[r];
    run.ids.push_back(o.id);
    if (p.hello.rank >= 0) {
      int64_t& rank_end = run.ranks[{p.hello.hostname, p.hello.rank}];
      rank_end = std::max(rank_end, merged.at(o.id).end_ns);
    }
    run.hosts.insert(p.hello.hostname);
    run.start_ns = std::min(run.start_ns, o.start_ns);
    run.end_ns = std::max(run.end_ns, merged.at(o.id).end_ns);
  }
  return runs;
}

// "pid 101, rank 0 on node-a, started 2026-01-02 03:04:05 UTC"
std::string RunProcessText(int64_t id, const std::map<int64_t, store::StoredProcess>& processes) {
  auto it = processes.find(id);
  if (it == processes.end()) return "process ?";
  const wire::Hello& h = it->second.hello;
  std::string text = fmt::format("pid {}", h.pid);
  if (h.rank >= 0) text += fmt::format(", rank {}", h.rank);
  if (!h.hostname.empty()) text += " on " + h.hostname;
  return text + ", started " + base::FormatUtcTime(StartOf(it->second)) + " UTC";
}

// Keeps the latest run of the range in `merged` (a restart's new processes, not the old ones
// beside them) and names the others in `analysis`. Returns the windows left out.
size_t KeepLatestRun(const std::map<int64_t, store::StoredProcess>& processes,
                     const std::map<int64_t, size_t>& window_counts,
                     std::map<int64_t, model::ProfileWindow>* merged, analyze::Analysis* analysis) {
  const std::vector<Run> runs = GroupRuns(*merged, processes);
  if (runs.size() < 2) return 0;
  const Run& kept = runs.back();  // runs are in order of start: the last started latest
  const store::StoredProcess kept_first = ProcessOf(kept.ids.front(), processes);
  std::string kept_text;
  for (int64_t id : kept.ids)
    kept_text += (kept_text.empty() ? "" : "; ") + RunProcessText(id, processes);
  size_t dropped = 0;
  for (size_t r = 0; r + 1 < runs.size(); ++r) {
    analyze::OtherJob& other = analysis->other_jobs.emplace_back();
    // The latest run's first process did not fit this run: that is why they are apart.
    other.why = "an earlier run: " + RunConflict(runs[r], kept_first, kept.start_ns);
    for (int64_t id : runs[r].ids) {
      other.inputs.push_back(RunProcessText(id, processes));
      auto count = window_counts.find(id);
      if (count != window_counts.end()) dropped += count->second;
      merged->erase(id);
    }
  }
  std::string left_out;
  for (const analyze::OtherJob& job : analysis->other_jobs)
    for (const std::string& input : job.inputs) left_out += (left_out.empty() ? "" : "; ") + input;
  analysis->job_warning = fmt::format(
      "the range spans {} runs (a restart: processes of different runs would be compared as "
      "one job's ranks): analyzed the latest, {}; left out {}. Query each run's time range for "
      "the others.",
      runs.size(), kept_text, left_out);
  return dropped;
}

}  // namespace

int64_t RangeBinNs(int64_t span_ns) {
  static constexpr int64_t kLadderNs[] = {1'000'000,       10'000'000,        100'000'000,
                                          1'000'000'000,   10'000'000'000,    60'000'000'000,
                                          600'000'000'000, 3'600'000'000'000, 86'400'000'000'000};
  for (int64_t bin : kLadderNs)
    if (span_ns <= bin * kMaxRangeBins) return bin;
  return kLadderNs[std::size(kLadderNs) - 1];
}

namespace {

void PlanTiers(int64_t lo, int64_t hi, const std::vector<int64_t>& tiers, size_t n,
               RollupPlan* plan) {
  if (n == 0 || lo >= hi) return;
  const int64_t tier = tiers[n - 1];  // coarsest left
  const int64_t a = store::CeilTo(lo, tier), b = store::FloorTo(hi, tier);
  if (a >= b) return PlanTiers(lo, hi, tiers, n - 1, plan);
  plan->segments.push_back({tier, a, b});
  PlanTiers(lo, a, tiers, n - 1, plan);
  PlanTiers(b, hi, tiers, n - 1, plan);
}

// Drops the empty bins after the last busy one (the two ways of answering a range lay idle
// windows' seed bins differently; the bins that hold time are the same).
void TrimTimelines(model::ProfileWindow* w) {
  for (model::ProcessProfile& p : w->processes)
    for (model::DeviceProfile& d : p.devices) {
      model::Timeline& t = d.timeline;
      while (t.busy_ns.size() > 1 && t.busy_ns.back() == 0 &&
             (t.category_ns.empty() ||
              t.category_ns.back() == std::array<int64_t, model::kCategoryCount>{})) {
        t.busy_ns.pop_back();
        if (!t.category_ns.empty()) t.category_ns.pop_back();
      }
    }
}

}  // namespace

RollupPlan PlanRollups(int64_t from_ns, int64_t to_ns, const store::RollupCoverage& coverage,
                       int64_t bin_ns) {
  RollupPlan plan;
  std::vector<int64_t> tiers;  // finest first
  for (int64_t tier : store::kRollupTierNs)
    if (bin_ns >= store::RollupBinNs(tier) && bin_ns % store::RollupBinNs(tier) == 0)
      tiers.push_back(tier);
  const int64_t lo = std::max(from_ns, coverage.from_ns);
  const int64_t hi = std::min(to_ns, coverage.sealed_ns);
  PlanTiers(lo, hi, tiers, tiers.size(), &plan);
  if (plan.segments.empty()) return plan;
  plan.covered_from_ns = INT64_MAX;
  plan.covered_to_ns = INT64_MIN;
  for (const RollupPlan::Segment& s : plan.segments) {
    plan.covered_from_ns = std::min(plan.covered_from_ns, s.from_ns);
    plan.covered_to_ns = std::max(plan.covered_to_ns, s.to_ns);
  }
  return plan;
}

base::Status ScanRange(store::SqliteStore& store, const store::WindowQuery& range, int64_t bin_ns,
                       bool use_rollups, const store::WindowVisitor& visit,
                       store::ScanStats* stats) {
  store::WindowQuery raw = range;
  if (use_rollups) {
    ASSIGN_OR_RETURN(store::RollupCoverage coverage, store.Coverage());
    const RollupPlan plan = PlanRollups(range.from_ns, range.to_ns, coverage, bin_ns);
    for (const RollupPlan::Segment& seg : plan.segments) {
      store::WindowQuery rows = range;
      rows.from_ns = seg.from_ns;
      rows.to_ns = seg.to_ns;
      RETURN_IF_ERROR(store.ScanRollups(seg.tier_ns, rows, visit, stats));
    }
    raw.skip_from_ns = plan.covered_from_ns;
    raw.skip_to_ns = plan.covered_to_ns;
  }
  return store.ScanWindows(raw, visit, stats);
}

base::StatusOr<RangeProfile> QueryRangeProfile(store::SqliteStore& store, const RangeQuery& query,
                                               const std::string& source) {
  RangeProfile out;
  out.source = source;
  out.from_ns = query.from_ns;
  out.open_ended = query.to_ns == std::numeric_limits<int64_t>::max();
  out.to_ns = out.open_ended ? (query.now_ns ? query.now_ns : base::UnixNowNs()) : query.to_ns;
  model::MergeOptions merge;
  merge.top_k = std::max(query.top, merge.top_k);

  // The resolution comes from the data the range holds (an open range of "everything" must not
  // be laid on a grid spanning decades), the same however the range is then read.
  ASSIGN_OR_RETURN(auto span, store.DataSpan(query.from_ns, query.to_ns));
  int64_t bin_ns = RangeBinNs(0);
  if (span) {
    const int64_t lo = std::max(query.from_ns, span->first);
    const int64_t hi = std::min(query.to_ns, span->second);
    bin_ns = RangeBinNs(std::max<int64_t>(0, hi - lo));
  }
  out.timeline_bin_ns = bin_ns;

  // Memory stays bounded by the processes, not the range: every row is folded as it is decoded.
  std::map<int64_t, model::ProfileWindow> merged;  // by process row
  std::map<int64_t, size_t> window_counts;
  auto add = [&](int64_t process_id, uint64_t windows, model::ProfileWindow& w) {
    if (query.device) KeepDevice(*query.device, &w);
    if (w.processes.empty()) return;
    store::FoldWindow(w, bin_ns, merge, &merged[process_id]);
    window_counts[process_id] += windows;
    out.windows += windows;
  };
  store::ScanStats stats;
  // Tier rows were merged with the default top-K: a bigger --top reads raw windows.
  RETURN_IF_ERROR(ScanRange(store, query.Windows(), bin_ns,
                            query.use_rollups && merge.top_k == store::RollupMergeOptions().top_k,
                            add, &stats));
  out.corrupt_windows = stats.corrupt_rows;
  out.rows_read = stats.rows;
  if (bin_ns >= store::RollupBinNs(store::kRollupTierNs.front()))
    for (auto& [id, w] : merged) TrimTimelines(&w);
  // Runs of the same ranks (a restart inside the range) are not one job: the latest is analyzed.
  analyze::Analysis runs;
  out.windows -= KeepLatestRun(stats.processes, window_counts, &merged, &runs);
  out.processes = merged.size();
  for (const telemetry::TelemetryKind* kind : telemetry::TelemetryKinds().kinds())
    RETURN_IF_ERROR(MergeTelemetry(store, *kind, query, &out.telemetry, &out));
  FilterGpuMetrics(query, merged, &out.telemetry);
  // Even without profile windows (telemetry only) the diagnosis has the host signals to go on.

  analyze::AnalysisOptions options;
  options.top = query.top;
  options.window_kernels_view = query.kernels_view;
  options.bin_ns = 0;
  for (const auto& [id, w] : merged)
    for (const model::ProcessProfile& p : w.processes)
      for (const model::DeviceProfile& d : p.devices)
        if (options.bin_ns == 0 && d.timeline.bin_ns > 0) options.bin_ns = d.timeline.bin_ns;
  if (options.bin_ns == 0) options.bin_ns = 100'000'000;
  std::vector<analyze::AnalysisInput> inputs;
  for (const auto& [id, w] : merged) inputs.push_back({source, "inferscope_store", &w});
  // The host signals come from the telemetry merged above (not from the analysis), so the one
  // diagnosis Analyze() runs already has them.
  const analyze::HostSignals host = HostSignalsOf(out);
  out.analysis = analyze::Analyze(inputs, options, host, query.thresholds);
  out.analysis.job_warning = std::move(runs.job_warning);
  out.analysis.other_jobs = std::move(runs.other_jobs);
  if (query.gpu_hourly_usd || query.gpu_prices) {
    analyze::CostInputs cost;
    cost.gpu_hourly_usd = query.gpu_hourly_usd;
    if (query.gpu_prices) cost.table = *query.gpu_prices;
    cost.requests_per_s = host.requests_per_s;
    cost.generation_tokens_per_s = host.generation_tokens_per_s;
    cost.queue_mean_s = host.queue_mean_s;
    cost.prefill_mean_s = host.prefill_mean_s;
    cost.decode_mean_s = host.decode_mean_s;
    cost.e2e_mean_s = host.e2e_mean_s;
    out.cost = analyze::ComputeCost(out.analysis, cost);
  }
  return out;
}

bool HasGpuActivity(const RangeProfile& profile) {
  const analyze::JobSummary& s = profile.analysis.summary;
  return s.kernel_count > 0 || s.temporal.busy_ns > 0;
}

std::string FilterText(const RangeQuery& query) {
  std::vector<std::string> parts;
  if (query.pid) parts.push_back(fmt::format("pid {}", *query.pid));
  if (query.rank) parts.push_back(fmt::format("rank {}", *query.rank));
  if (query.device) parts.push_back(fmt::format("device {}", *query.device));
  return Join(parts, ", ");
}

bool NoGpuActivityMatched(const RangeQuery& query, const RangeProfile& profile) {
  if (HasGpuActivity(profile)) return false;
  const bool filtered = query.pid || query.rank || query.device;
  return filtered || profile.windows > 0;
}

base::StatusOr<std::vector<std::string>> DescribeRange(store::SqliteStore& store,
                                                       const RangeQuery& query) {
  constexpr size_t kMaxProcesses = 20;
  store::WindowQuery all{query.from_ns, query.to_ns, std::nullopt, std::nullopt};
  struct Seen {
    std::set<uint32_t> devices;
    uint64_t windows = 0, kernels = 0;
  };
  std::map<int64_t, Seen> seen;  // by process row
  store::ScanStats result;       // streamed: a long range costs neither memory nor every window
  // Any resolution will do (no timeline is shown): the coarsest lets every tier answer.
  RETURN_IF_ERROR(ScanRange(
      store, all, RangeBinNs(INT64_MAX), /*use_rollups=*/true,
      [&](int64_t process_id, uint64_t windows, model::ProfileWindow& w) {
        Seen& s = seen[process_id];
        s.windows += windows;
        for (const model::ProcessProfile& p : w.processes)
          for (const model::DeviceProfile& d : p.devices) {
            s.devices.insert(d.device);
            s.kernels += d.kernel_count;
          }
      },
      &result));
  std::vector<std::string> lines;
  for (const auto& [id, s] : seen) {
    if (lines.size() == kMaxProcesses) {
      lines.push_back(fmt::format("... and {} more processes", seen.size() - kMaxProcesses));
      break;
    }
    auto it = result.processes.find(id);
    std::string who = "process ?";
    if (it != result.processes.end()) {
      const wire::Hello& h = it->second.hello;
      who = fmt::format("pid {}", h.pid);
      if (h.rank >= 0) who += fmt::format(", rank {}", h.rank);
      if (!h.hostname.empty()) who += " on " + h.hostname;
    }
    std::string gpus = s.devices.empty() ? "no GPU" : "GPU " + Join(s.devices, ", ");
    lines.push_back(fmt::format("{}: {}; {} windows, {} kernels", who, gpus, s.windows, s.kernels));
  }
  telemetry::TelemetrySet telemetry;
  RangeProfile scratch;
  RETURN_IF_ERROR(MergeTelemetry(store, telemetry::GpuMetricsKind(), query, &telemetry, &scratch));
  const telemetry::GpuMetricsWindow* gpu = telemetry.Get<telemetry::GpuMetricsWindow>();
  if (gpu && !gpu->devices.empty()) {
    std::vector<int32_t> indices;
    for (const telemetry::GpuDeviceWindow& d : gpu->devices) indices.push_back(d.index);
    lines.push_back("host telemetry: GPU metrics of GPU " + Join(indices, ", "));
  }
  return lines;
}

analyze::HostSignals HostSignalsOf(const RangeProfile& profile) {
  analyze::HostSignals h;
  if (const auto* engine = profile.telemetry.Get<telemetry::scrape::EngineMetricsWindow>()) {
    using telemetry::scrape::CounterSignal;
    using telemetry::scrape::GaugeSignal;
    using telemetry::scrape::Stage;
    const telemetry::scrape::EngineMetricsWindow& e = *engine;
    auto mean = [&e](Stage s) -> std::optional<double> {
      return e.has_stage(s) ? e.stage(s).KnownMean() : std::nullopt;
    };
    h.queue_mean_s = mean(Stage::kQueue);
    h.prefill_mean_s = mean(Stage::kPrefill);
    h.decode_mean_s = mean(Stage::kDecode);
    h.ttft_mean_s = mean(Stage::kTtft);
    h.e2e_mean_s = mean(Stage::kE2e);
    auto gauge = [&e](GaugeSignal g) -> const telemetry::scrape::GaugeStats* {
      return e.has_gauge(g) && e.gauge(g).samples > 0 ? &e.gauge(g) : nullptr;
    };
    if (auto* g = gauge(GaugeSignal::kRunningRequests)) h.running_requests_mean = g->mean();
    if (auto* g = gauge(GaugeSignal::kWaitingRequests)) h.waiting_requests_mean = g->mean();
    if (auto* g = gauge(GaugeSignal::kKvCacheUsage)) h.kv_cache_usage_max = g->max;
    h.requests_per_s = e.Rate(CounterSignal::kRequestsFinished);
    h.generation_tokens_per_s = e.Rate(CounterSignal::kGenerationTokens);
  }
  const auto* spans = profile.telemetry.Get<telemetry::otlp::SpanWindow>();
  if (spans && spans->requests > 0) {
    // Spans fill what the engine's metrics did not give (they are per request, so exact).
    using telemetry::otlp::Stage;
    auto mean = [&s = *spans](Stage st) -> std::optional<double> {
      const telemetry::otlp::LatencyHistogram& hist = s.stage(st);
      if (hist.count() == 0) return std::nullopt;
      return static_cast<double>(hist.sum_ns()) / static_cast<double>(hist.count()) / 1e9;
    };
    if (!h.queue_mean_s) h.queue_mean_s = mean(Stage::kQueue);
    if (!h.prefill_mean_s) h.prefill_mean_s = mean(Stage::kPrefill);
    if (!h.decode_mean_s) h.decode_mean_s = mean(Stage::kDecode);
    if (!h.ttft_mean_s) h.ttft_mean_s = mean(Stage::kTtft);
    if (!h.e2e_mean_s) h.e2e_mean_s = mean(Stage::kE2e);
  }
  if (h.queue_mean_s && h.e2e_mean_s && *h.e2e_mean_s > 0)
    h.queue_share_of_e2e = *h.queue_mean_s / *h.e2e_mean_s;
  if (const auto* gpu_window = profile.telemetry.Get<telemetry::GpuMetricsWindow>()) {
    // The busiest GPU speaks for the range: a saturated device is a bottleneck even if others idle.
    auto max_mean = [&gpu = *gpu_window](const char* metric) -> std::optional<double> {
      std::optional<double> best;
      for (const telemetry::GpuDeviceWindow& d : gpu.devices) {
        auto it = d.metrics.find(metric);
        if (it == d.metrics.end() || it->second.samples == 0) continue;
        best = std::max(best.value_or(it->second.mean()), it->second.mean());
      }
      return best;
    };
    h.gpm_sm_active_pct = max_mean(telemetry::kGpmSmActivePct);
    h.gpm_sm_occupancy_pct = max_mean(telemetry::kGpmSmOccupancyPct);
    h.gpm_tensor_active_pct = max_mean(telemetry::kGpmTensorActivePct);
    h.gpm_dram_bw_util_pct = max_mean(telemetry::kGpmDramBwUtilPct);
    h.gpu_util_pct_mean = max_mean(telemetry::kGpuUtilPct);
    // NVML clock-event reasons and the share of time each was active (the throttling rule).
    h.slowdown_share = telemetry::SlowdownShares(*gpu_window);
  }
  return h;
}

std::string RenderRangeReport(const RangeProfile& profile, report::ReportFormat format) {
  report::ReportExtras extras;
  // What the report covers, instead of one input line per process.
  extras.input_lines.push_back(fmt::format(
      "input: {} (inferscope_store, {} process{}, {} window{})", profile.source, profile.processes,
      profile.processes == 1 ? "" : "es", profile.windows, profile.windows == 1 ? "" : "s"));
  const std::string utc_from = base::FormatUtcTime(profile.from_ns);
  const std::string utc_to = base::FormatUtcTime(profile.to_ns);
  const std::string local_from = base::FormatLocalTime(profile.from_ns);
  const std::string local_to = base::FormatLocalTime(profile.to_ns);
  // The date once when both ends share it.
  auto to_text = [](const std::string& from, const std::string& to) {
    return from.substr(0, 10) == to.substr(0, 10) ? to.substr(11) : to;
  };
  extras.input_lines.push_back(fmt::format("range: {} to {} UTC{}", utc_from,
                                           to_text(utc_from, utc_to),
                                           profile.open_ended ? " (now; open-ended)" : ""));
  extras.input_lines.push_back(fmt::format("range (local, UTC{}): {} to {}",
                                           base::LocalUtcOffset(profile.from_ns), local_from,
                                           to_text(local_from, local_to)));
  // One section per telemetry kind (null in JSON when absent, so the schema is one), then cost.
  for (const telemetry::TelemetryKind* kind : telemetry::TelemetryKinds().kinds()) {
    const telemetry::TelemetryData* data = profile.telemetry.Find(*kind);
    report::ReportExtras::DataSection& s = extras.data.emplace_back();
    s.key = kind->report_key();
    s.title = kind->title();
    s.present = data != nullptr;
    if (!data) continue;
    s.write_json = [data](base::JsonWriter& w) { data->WriteJson(w); };
    s.render_text = [data](std::string* out) { data->RenderText(out); };
  }
  report::ReportExtras::DataSection& cost = extras.data.emplace_back();
  cost.key = "cost";
  cost.title = "Cost";
  cost.present = profile.cost.has_value();
  if (profile.cost) {
    cost.write_json = [&c = *profile.cost](base::JsonWriter& w) { analyze::WriteCostJson(c, w); };
    cost.render_text = [&c = *profile.cost](std::string* out) { analyze::RenderCostText(c, out); };
  }
  extras.json = [&profile](base::JsonWriter& w) {
    w.Key("range").BeginObject();
    w.Key("from_unix_ns").Int(profile.from_ns);
    w.Key("to_unix_ns").Int(profile.to_ns);
    w.Key("open_ended").Bool(profile.open_ended);
    w.Key("from_utc").String(base::FormatIsoTime(profile.from_ns, true));
    w.Key("to_utc").String(base::FormatIsoTime(profile.to_ns, true));
    w.Key("from_local").String(base::FormatIsoTime(profile.from_ns, false));
    w.Key("to_local").String(base::FormatIsoTime(profile.to_ns, false));
    w.Key("processes").UInt(profile.processes);
    w.Key("windows").UInt(profile.windows);
    w.Key("telemetry_windows").UInt(profile.telemetry_windows);
    w.EndObject();
  };
  return report::Render(profile.analysis, format, extras);
}

}  // namespace inferscope::query
