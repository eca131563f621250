// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/analysis.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "src/model/kernel_names.h"

namespace inferscope::analyze {

int64_t StreamIdleNs(const std::vector<IdleGapRow>& rows) {
  int64_t total = 0;
  for (const IdleGapRow& g : rows) total += g.total_ns;
  return total;
}

namespace {

using model::kCategoryCount;
using model::kCategoryNames;

std::vector<std::pair<std::string, uint64_t>> DataQualityRows(
    const std::array<uint64_t, static_cast<size_t>(model::DataQuality::kCount)>& counters) {
  std::vector<std::pair<std::string, uint64_t>> rows;
  for (size_t i = 0; i < counters.size(); ++i)
    rows.emplace_back(model::kDataQualityNames[i], counters[i]);
  return rows;
}

KernelRow MakeKernelRow(const model::KernelStats& k, int64_t kernel_time_ns, bool display_name) {
  KernelRow row;
  row.name = k.name;
  if (display_name) row.display_name = model::DisplayKernelName(k.name);
  row.category = kCategoryNames[static_cast<int>(k.category)];
  row.subcategory = k.subcategory;
  row.count = k.duration.count;
  row.total_ns = k.duration.total_ns;
  row.mean_ns = k.duration.mean_ns();
  row.min_ns = k.duration.min_or_zero_ns();
  row.max_ns = k.duration.max_ns;
  row.median_ns = k.histogram.QuantileLowerBoundNs(0.5);
  row.pct = Pct(static_cast<double>(row.total_ns), static_cast<double>(kernel_time_ns));
  // A merge of windows keeps more configurations than a row lists (kMaxMergedLaunchConfigs).
  row.launch_configs.assign(k.configs.begin(),
                            k.configs.begin() + static_cast<ptrdiff_t>(std::min(
                                                    k.configs.size(), model::kMaxLaunchConfigs)));
  row.distinct_launch_configs = k.distinct_configs;
  return row;
}

std::vector<IdleGapRow> IdleGapRows(const model::IdleGapStats& gaps) {
  std::vector<IdleGapRow> rows;
  const std::pair<const char*, const model::DurationStats*> kinds[] = {
      {"host_wait", &gaps.host_wait}, {"kernel_wait", &gaps.kernel_wait}, {"other", &gaps.other}};
  for (const auto& [kind, stats] : kinds) {
    IdleGapRow row;
    row.kind = kind;
    row.count = stats->count;
    row.total_ns = stats->total_ns;
    row.max_ns = stats->max_ns;
    rows.push_back(row);
  }
  const double stream_idle_ns = static_cast<double>(StreamIdleNs(rows));
  for (IdleGapRow& row : rows) row.pct = Pct(static_cast<double>(row.total_ns), stream_idle_ns);
  return rows;
}

std::vector<IdleCauseRow> IdleCauseRows(const model::IdleCauseStats& causes, int64_t idle_ns) {
  std::vector<IdleCauseRow> rows;
  for (size_t c = 0; c < model::kIdleCauseCount; ++c)
    rows.push_back({model::kIdleCauseNames[c], causes.ns[c],
                    Pct(static_cast<double>(causes.ns[c]), static_cast<double>(idle_ns))});
  return rows;
}

StepSummary Steps(const model::StepStats& s) {
  StepSummary out;
  out.plain_count = s.plain.count;
  out.plain_total_ns = s.plain.total_ns;
  out.plain_mean_ns = s.plain.mean_ns();
  out.prefill_count = s.prefill.count;
  out.prefill_total_ns = s.prefill.total_ns;
  out.prefill_mean_ns = s.prefill.mean_ns();
  return out;
}

}  // namespace

PhaseSummary Phases(const model::PhaseSplit& split) {
  PhaseSummary out;
  out.split = split;
  if (split.empty()) return out;
  out.outside_ns = split.outside_time_ns();
  out.outside_ops = split.outside_ops;
  out.phased_ns = out.outside_ns;
  for (const model::PhaseStats& p : split.phases) out.phased_ns += p.gpu_time_ns();
  for (size_t i = 0; i < model::kPhaseCount; ++i) {
    const model::PhaseStats& p = split.phases[i];
    if (p.steps == 0) continue;
    PhaseSummaryRow row;
    row.phase = model::kPhaseNames[i];
    row.steps = p.steps;
    row.step_total_ns = p.step_ns;
    row.step_mean_ns = p.step_ns / static_cast<int64_t>(p.steps);
    row.busy_ns = p.busy_ns;
    row.gpu_time_ns = p.gpu_time_ns();
    row.ops = p.ops;
    row.pct = Pct(static_cast<double>(row.gpu_time_ns), static_cast<double>(out.phased_ns));
    for (int c = 0; c < kCategoryCount; ++c) {
      if (p.category_ns[c] == 0) continue;
      row.categories.push_back(
          {kCategoryNames[c], p.category_ns[c], 0,
           Pct(static_cast<double>(p.category_ns[c]), static_cast<double>(row.gpu_time_ns))});
    }
    std::stable_sort(
        row.categories.begin(), row.categories.end(),
        [](const CategoryRow& a, const CategoryRow& b) { return a.time_ns > b.time_ns; });
    out.phases.push_back(std::move(row));
  }
  out.outside_pct = Pct(static_cast<double>(out.outside_ns), static_cast<double>(out.phased_ns));
  return out;
}

namespace {

void FinishCategoryPcts(std::vector<CategoryRow>* rows, int64_t kernel_time_ns) {
  for (CategoryRow& row : *rows)
    row.pct = Pct(static_cast<double>(row.time_ns), static_cast<double>(kernel_time_ns));
}

Spread SpreadOf(const std::vector<RankComparisonRow>& rows, int64_t RankComparisonRow::*field) {
  Spread s;
  if (rows.empty()) return s;
  s.min_ns = s.max_ns = rows[0].*field;
  s.min_rank = s.max_rank = rows[0].rank;
  double sum = 0;
  for (const RankComparisonRow& r : rows) {
    const int64_t v = r.*field;
    sum += static_cast<double>(v);
    if (v < s.min_ns) s.min_ns = v, s.min_rank = r.rank;
    if (v > s.max_ns) s.max_ns = v, s.max_rank = r.rank;
  }
  s.mean_ns = sum / static_cast<double>(rows.size());
  s.imbalance = s.mean_ns > 0 ? static_cast<double>(s.max_ns - s.min_ns) / s.mean_ns : 0;
  return s;
}

}  // namespace

double Pct(double part, double whole) { return whole > 0 ? part * 100.0 / whole : 0.0; }

void TemporalBreakdown::Finalize() {
  idle_ns = span_ns - busy_ns;
  if (idle_ns < 0) idle_ns = 0;  // a union longer than the span would be an aggregator bug
  non_compute_ns = busy_ns - compute_ns;
  const auto span = static_cast<double>(span_ns);
  busy_pct = Pct(static_cast<double>(busy_ns), span);
  idle_pct = Pct(static_cast<double>(idle_ns), span);
  compute_pct = Pct(static_cast<double>(compute_ns), span);
  non_compute_pct = Pct(static_cast<double>(non_compute_ns), span);
}

RankAnalysis AnalyzeDevice(const model::DeviceProfile& d, const AnalysisOptions& options) {
  RankAnalysis r;
  r.device = d.device;
  r.device_name = d.device_name;
  r.device_uuid = d.device_uuid;
  r.first_start_ns = d.first_start_ns;
  r.last_end_ns = d.last_end_ns;
  r.temporal.span_ns = d.span_ns();
  r.temporal.busy_ns = d.busy_ns;
  r.temporal.compute_ns = d.compute_ns;
  r.temporal.Finalize();

  // Categories: kernel time is the sum of category times (memcpy/memset included as "memory").
  r.kernel_count = d.kernel_count;
  for (int c = 0; c < kCategoryCount; ++c) {
    r.categories.push_back({kCategoryNames[c], d.categories[c].time_ns, d.categories[c].count, 0});
    r.kernel_time_ns += d.categories[c].time_ns;
  }
  FinishCategoryPcts(&r.categories, r.kernel_time_ns);
  for (const auto& [name, stats] : d.subcategories)
    r.subcategories.push_back({name, stats.time_ns, stats.count, 0});
  FinishCategoryPcts(&r.subcategories, r.kernel_time_ns);
  std::stable_sort(
      r.subcategories.begin(), r.subcategories.end(),
      [](const CategoryRow& a, const CategoryRow& b) { return a.time_ns > b.time_ns; });

  // Top kernels: the aggregator kept top_k; the report may ask for fewer, and the rest join the
  // tail.
  std::vector<const model::KernelStats*> sorted;
  for (const model::KernelStats& k : d.top_kernels) sorted.push_back(&k);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return a->duration.total_ns > b->duration.total_ns;
  });
  const size_t top = static_cast<size_t>(std::max(options.top, 0));
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i < top) {
      r.top_kernels.push_back(MakeKernelRow(*sorted[i], r.kernel_time_ns, options.display_names));
    } else {
      r.other_kernels.distinct_names += 1;
      r.other_kernels.count += sorted[i]->duration.count;
      r.other_kernels.total_ns += sorted[i]->duration.total_ns;
    }
  }
  if (d.tail.duration.count > 0) {
    r.other_kernels.distinct_names += d.tail.distinct_names;
    r.other_kernels.count += d.tail.duration.count;
    r.other_kernels.total_ns += d.tail.duration.total_ns;
  }
  r.other_kernels.pct =
      Pct(static_cast<double>(r.other_kernels.total_ns), static_cast<double>(r.kernel_time_ns));

  r.idle_gaps = IdleGapRows(d.idle_gaps);
  r.idle_causes = IdleCauseRows(d.idle_causes, r.temporal.idle_ns);
  r.idle_intervals = d.idle_causes.intervals;
  r.steps = Steps(d.steps);
  r.phases = Phases(d.phases);

  const model::LaunchStats& l = d.launch;
  r.launch.cpu_launch_count = l.cpu_launch.count;
  r.launch.cpu_launch_mean_ns = l.cpu_launch.mean_ns();
  r.launch.cpu_launch_max_ns = l.cpu_launch.max_ns;
  r.launch.cpu_launch_total_ns = l.cpu_launch.total_ns;
  r.launch.launch_delay_count = l.launch_delay.count;
  r.launch.launch_delay_mean_ns = l.launch_delay.mean_ns();
  r.launch.launch_delay_max_ns = l.launch_delay.max_ns;
  r.launch.short_kernels = l.short_kernels;
  r.launch.short_kernel_pct =
      Pct(static_cast<double>(l.short_kernels), static_cast<double>(d.kernel_count));
  r.launch.graph_launches = l.graph_launches;
  r.launch.kernels_from_graphs = l.kernels_from_graphs;

  for (size_t t = 0; t < d.syncs.size(); ++t) {
    const model::SyncStats& s = d.syncs[t];
    SyncRow row;
    row.type = model::kSyncTypeNames[t];
    row.count = s.wait.count;
    row.total_ns = s.wait.total_ns;
    row.mean_ns = s.wait.mean_ns();
    row.max_ns = s.wait.max_ns;
    for (const model::SyncTarget& target : s.waited_on)
      row.waited_on.push_back(
          {target.kernel_name,
           options.display_names ? model::DisplayKernelName(target.kernel_name) : std::string(),
           target.count, target.wait_ns});
    r.syncs.push_back(std::move(row));
  }

  auto transfer = [](std::string direction, const model::TransferStats& t) {
    TransferRow row;
    row.direction = std::move(direction);
    row.count = t.count;
    row.bytes = t.bytes;
    row.time_ns = t.time_ns;
    // bytes per ns == GB/s (10^9 bytes per second).
    row.bandwidth_gbps =
        t.time_ns > 0 ? static_cast<double>(t.bytes) / static_cast<double>(t.time_ns) : 0;
    row.pageable_count = t.pageable_count;
    return row;
  };
  for (size_t k = 0; k < d.memcpy.size(); ++k)
    r.transfers.push_back(transfer(model::kMemcpyKindNames[k], d.memcpy[k]));
  r.transfers.push_back(transfer("memset", d.memset));

  const model::AllocationStats& a = d.allocations;
  r.allocations.malloc_calls = a.malloc_calls.count;
  r.allocations.malloc_total_ns = a.malloc_calls.total_ns;
  r.allocations.malloc_max_ns = a.malloc_calls.max_ns;
  r.allocations.malloc_bytes = a.malloc_bytes;
  r.allocations.free_calls = a.free_calls.count;
  r.allocations.free_total_ns = a.free_calls.total_ns;
  r.allocations.free_max_ns = a.free_calls.max_ns;
  r.allocations.slow_calls = a.slow_calls;
  r.allocations.slow_total_ns = a.slow_total_ns;
  r.graphs = d.graphs;

  r.communication_ns = d.communication_ns;
  r.communication_overlap_ns = d.communication_overlap_ns;
  r.comm_compute_overlap_pct =
      Pct(static_cast<double>(d.communication_overlap_ns), static_cast<double>(d.communication_ns));

  r.timeline.bin_ns = d.timeline.bin_ns;
  r.timeline.origin_ns = d.timeline.origin_ns;
  r.timeline.truncated = d.timeline.truncated;
  const size_t bins = std::max(d.timeline.busy_ns.size(), d.timeline.category_ns.size());
  for (size_t i = 0; i < bins; ++i) {
    TimelineBin bin;
    bin.start_ns = static_cast<int64_t>(i) * d.timeline.bin_ns;
    bin.busy_ns = i < d.timeline.busy_ns.size() ? d.timeline.busy_ns[i] : 0;
    bin.busy_pct = Pct(static_cast<double>(bin.busy_ns), static_cast<double>(d.timeline.bin_ns));
    bin.category_ns.assign(kCategoryCount, 0);
    if (i < d.timeline.category_ns.size())
      for (int c = 0; c < kCategoryCount; ++c) bin.category_ns[c] = d.timeline.category_ns[i][c];
    r.timeline.bins.push_back(std::move(bin));
  }
  return r;
}

model::RangeRow RangeRowOf(const model::RangeStats& r) {
  model::RangeRow out;
  out.name = r.name;
  out.duration.count = r.duration.count;
  out.duration.total_ns = r.duration.total_ns;
  out.duration.mean_ns = r.duration.mean_ns();
  out.duration.min_ns = r.duration.min_or_zero_ns();
  out.duration.max_ns = r.duration.max_ns;
  out.gpu.ops = r.gpu_ops;
  out.gpu.time_ns = r.gpu_time_ns;
  return out;
}

model::TraceViews RangeViewsOf(const model::ProfileWindow& window) {
  model::TraceViews views;
  views.selection.ranges = true;
  views.from_windows = true;
  auto row = RangeRowOf;
  for (const model::ProcessProfile& p : window.processes) {
    if (p.ranges.empty()) continue;
    model::ProcessViews& v = views.processes.emplace_back();
    v.pid = p.pid;
    for (const model::RangeStats& r : p.ranges.rows) v.ranges.push_back(row(r));
    v.range_tail = row(p.ranges.tail);
    v.range_tail_names = p.ranges.tail_names;
    v.nvtx_ranges = p.ranges.instances();
    v.late_ranges = p.ranges.late;
  }
  std::sort(
      views.processes.begin(), views.processes.end(),
      [](const model::ProcessViews& a, const model::ProcessViews& b) { return a.pid < b.pid; });
  return views;
}

// The kernels view of a window (AnalysisOptions::window_kernels_view) added to `views`: one row per
// top kernel with its launch configurations, the tail as the "other" row.
void AddKernelViews(const model::ProfileWindow& window, model::TraceViews* views) {
  views->selection.kernels = true;
  views->from_windows = true;
  auto summary = [](const model::DurationStats& d) {
    model::DurationSummary s;
    s.count = d.count;
    s.total_ns = d.total_ns;
    s.mean_ns = d.mean_ns();
    s.min_ns = d.min_or_zero_ns();
    s.max_ns = d.max_ns;
    return s;
  };
  for (const model::ProcessProfile& p : window.processes) {
    if (p.devices.empty()) continue;
    auto it = std::find_if(views->processes.begin(), views->processes.end(),
                           [&p](const model::ProcessViews& v) { return v.pid == p.pid; });
    model::ProcessViews& v = it != views->processes.end() ? *it : views->processes.emplace_back();
    v.pid = p.pid;
    for (const model::DeviceProfile& d : p.devices) {
      model::DeviceViews& dv = v.devices.emplace_back();
      dv.device = d.device;
      for (const model::KernelStats& k : d.top_kernels) {
        model::KernelStatRow& row = dv.kernels.emplace_back();
        row.name = k.name;
        row.category = k.category;
        row.duration = summary(k.duration);
        row.configs.assign(k.configs.begin(),
                           k.configs.begin() + static_cast<ptrdiff_t>(std::min(
                                                   k.configs.size(), model::kMaxLaunchConfigs)));
        row.distinct_configs = k.distinct_configs;
      }
      dv.kernel_tail.duration = summary(d.tail.duration);
      dv.kernel_tail_names = d.tail.duration.count ? d.tail.distinct_names : 0;
    }
  }
}

Analysis Analyze(const std::vector<AnalysisInput>& inputs, const AnalysisOptions& options,
                 const HostSignals& host, const DiagnosisThresholds& thresholds) {
  Analysis result;
  result.options = options;
  result.inputs = inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].views != nullptr) {
      result.views.resize(inputs.size());
      result.views[i] = *inputs[i].views;
    } else if (inputs[i].window != nullptr) {
      // Live windows with NVTX range tables (`run --nvtx`): the ranges view of the same shape;
      // on request the kernels view too.
      model::TraceViews live = RangeViewsOf(*inputs[i].window);
      if (options.window_kernels_view) {
        AddKernelViews(*inputs[i].window, &live);
        bool ranges = false;  // the ranges view only where the windows had range tables
        for (const model::ProcessViews& p : live.processes) ranges = ranges || p.nvtx_ranges > 0;
        live.selection.ranges = ranges;
      }
      if (live.processes.empty()) continue;
      result.views.resize(inputs.size());
      result.views[i] = std::move(live);
    }
  }

  // Ranks known from the traces are kept; unknown ones get the next free number in input order.
  std::set<int32_t> used_ranks;
  for (const AnalysisInput& in : inputs)
    if (in.window)
      for (const model::ProcessProfile& p : in.window->processes)
        if (p.rank >= 0) used_ranks.insert(p.rank);
  int32_t next_rank = 0;
  std::array<uint64_t, static_cast<size_t>(model::DataQuality::kCount)> dq_sum{};
  for (size_t input = 0; input < inputs.size(); ++input) {
    if (!inputs[input].window) continue;
    for (const model::ProcessProfile& p : inputs[input].window->processes) {
      int32_t rank = p.rank;
      if (rank < 0) {
        while (used_ranks.count(next_rank)) ++next_rank;
        rank = next_rank;
        used_ranks.insert(rank);
      }
      ++result.summary.process_count;
      for (size_t q = 0; q < dq_sum.size(); ++q) dq_sum[q] += p.data_quality[q];
      for (const model::DeviceProfile& d : p.devices) {
        RankAnalysis r = AnalyzeDevice(d, options);
        r.rank = rank;
        r.rank_from_trace = p.rank >= 0;
        r.world_size = p.world_size;
        r.pid = p.pid;
        r.hostname = p.hostname;
        r.input_index = input;
        r.data_quality = DataQualityRows(p.data_quality);
        r.profiler_cpu_ns = p.profiler_cpu_ns;
        result.ranks.push_back(std::move(r));
      }
    }
  }
  std::stable_sort(result.ranks.begin(), result.ranks.end(),
                   [](const RankAnalysis& a, const RankAnalysis& b) {
                     return a.rank != b.rank ? a.rank < b.rank : a.device < b.device;
                   });

  // Job summary.
  JobSummary& s = result.summary;
  s.rank_count = result.ranks.size();
  s.data_quality = DataQualityRows(dq_sum);
  s.categories.resize(kCategoryCount);
  for (int c = 0; c < kCategoryCount; ++c) s.categories[c].name = kCategoryNames[c];
  model::IdleGapStats gaps_sum;
  model::IdleCauseStats causes_sum;
  model::StepStats steps_sum;
  model::PhaseSplit phases_sum;
  std::map<std::string, KernelRow> merged;  // by recorded name
  std::map<std::string, CategoryRow> subcategories;
  for (const RankAnalysis& r : result.ranks) {
    s.span_ns = std::max(s.span_ns, r.temporal.span_ns);
    s.temporal.span_ns += r.temporal.span_ns;
    s.temporal.busy_ns += r.temporal.busy_ns;
    s.temporal.compute_ns += r.temporal.compute_ns;
    s.kernel_count += r.kernel_count;
    s.kernel_time_ns += r.kernel_time_ns;
    s.communication_ns += r.communication_ns;
    s.communication_overlap_ns += r.communication_overlap_ns;
    for (int c = 0; c < kCategoryCount; ++c) {
      s.categories[c].time_ns += r.categories[c].time_ns;
      s.categories[c].count += r.categories[c].count;
    }
    model::DurationStats* sums[] = {&gaps_sum.host_wait, &gaps_sum.kernel_wait, &gaps_sum.other};
    for (size_t g = 0; g < r.idle_gaps.size() && g < 3; ++g) {
      sums[g]->count += r.idle_gaps[g].count;
      sums[g]->total_ns += r.idle_gaps[g].total_ns;
      sums[g]->max_ns = std::max(sums[g]->max_ns, r.idle_gaps[g].max_ns);
    }
    for (size_t c = 0; c < r.idle_causes.size() && c < model::kIdleCauseCount; ++c)
      causes_sum.ns[c] += r.idle_causes[c].total_ns;
    causes_sum.intervals += r.idle_intervals;
    steps_sum.plain.count += r.steps.plain_count;
    steps_sum.plain.total_ns += r.steps.plain_total_ns;
    steps_sum.prefill.count += r.steps.prefill_count;
    steps_sum.prefill.total_ns += r.steps.prefill_total_ns;
    phases_sum.Merge(r.phases.split);
    for (const CategoryRow& sub : r.subcategories) {
      CategoryRow& m = subcategories[sub.name];
      m.name = sub.name;
      m.time_ns += sub.time_ns;
      m.count += sub.count;
    }
    s.other_kernels.count += r.other_kernels.count;
    s.other_kernels.total_ns += r.other_kernels.total_ns;
    s.other_kernels.distinct_names =
        std::max(s.other_kernels.distinct_names, r.other_kernels.distinct_names);
    for (const KernelRow& k : r.top_kernels) {
      auto [it, inserted] = merged.try_emplace(k.name, k);
      if (inserted) continue;
      KernelRow& m = it->second;
      m.count += k.count;
      m.total_ns += k.total_ns;
      m.min_ns = std::min(m.min_ns, k.min_ns);
      m.max_ns = std::max(m.max_ns, k.max_ns);
      m.median_ns = std::max(m.median_ns, k.median_ns);
      model::MergeLaunchConfigs(k.launch_configs, k.distinct_launch_configs, &m.launch_configs,
                                &m.distinct_launch_configs, model::kMaxLaunchConfigs);
    }
  }
  s.temporal.Finalize();
  FinishCategoryPcts(&s.categories, s.kernel_time_ns);
  s.idle_gaps = IdleGapRows(gaps_sum);
  s.idle_causes = IdleCauseRows(causes_sum, s.temporal.idle_ns);
  s.idle_intervals = causes_sum.intervals;
  s.steps = Steps(steps_sum);
  s.phases = Phases(phases_sum);
  s.comm_compute_overlap_pct =
      Pct(static_cast<double>(s.communication_overlap_ns), static_cast<double>(s.communication_ns));
  for (auto& [name, k] : merged) {
    k.mean_ns = k.count ? k.total_ns / static_cast<int64_t>(k.count) : 0;
    k.pct = Pct(static_cast<double>(k.total_ns), static_cast<double>(s.kernel_time_ns));
    s.top_kernels.push_back(std::move(k));
  }
  std::stable_sort(s.top_kernels.begin(), s.top_kernels.end(),
                   [](const KernelRow& a, const KernelRow& b) { return a.total_ns > b.total_ns; });
  const size_t top = static_cast<size_t>(std::max(options.top, 0));
  for (size_t i = top; i < s.top_kernels.size(); ++i) {
    s.other_kernels.distinct_names += 1;
    s.other_kernels.count += s.top_kernels[i].count;
    s.other_kernels.total_ns += s.top_kernels[i].total_ns;
  }
  if (s.top_kernels.size() > top) s.top_kernels.resize(top);
  s.other_kernels.pct =
      Pct(static_cast<double>(s.other_kernels.total_ns), static_cast<double>(s.kernel_time_ns));
  for (auto& [name, row] : subcategories) s.subcategories.push_back(row);
  FinishCategoryPcts(&s.subcategories, s.kernel_time_ns);
  std::stable_sort(
      s.subcategories.begin(), s.subcategories.end(),
      [](const CategoryRow& a, const CategoryRow& b) { return a.time_ns > b.time_ns; });

  // Rank comparison.
  RankComparison& cmp = result.comparison;
  for (const RankAnalysis& r : result.ranks) {
    cmp.ranks.push_back({r.rank, r.device, r.temporal.span_ns, r.temporal.busy_ns,
                         r.temporal.idle_ns, r.temporal.compute_ns, r.communication_ns,
                         r.temporal.busy_pct});
  }
  cmp.busy = SpreadOf(cmp.ranks, &RankComparisonRow::busy_ns);
  cmp.idle = SpreadOf(cmp.ranks, &RankComparisonRow::idle_ns);
  cmp.compute = SpreadOf(cmp.ranks, &RankComparisonRow::compute_ns);
  cmp.communication = SpreadOf(cmp.ranks, &RankComparisonRow::communication_ns);
  if (cmp.ranks.size() > 1 && cmp.compute.imbalance >= kStragglerMinImbalance) {
    cmp.straggler_rank = cmp.compute.max_rank;
    cmp.straggler_excess_compute_ns =
        cmp.compute.max_ns - static_cast<int64_t>(cmp.compute.mean_ns + 0.5);
  }
  result.diagnosis = Diagnose(result, host, thresholds);
  return result;
}

}  // namespace inferscope::analyze
