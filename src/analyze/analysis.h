// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Analyses over profile windows: per-rank breakdowns (where GPU time went, why the GPU was idle,
// how kernels were launched, where the host waited) and a job-wide summary with a rank comparison.
// The result is plain data, already in report units (ns, bytes, percent, GB/s); the renderers in
// src/report only format it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/analyze/diagnose.h"
#include "src/model/profile.h"
#include "src/model/views.h"

namespace inferscope::analyze {

struct AnalysisOptions {
  int top = 15;                  // top kernels listed per rank; the rest form the "other" row
  int64_t bin_ns = 100'000'000;  // timeline bin width the windows were aggregated with
  int64_t kernel_wait_threshold_ns = 30'000;
  std::string rules_path;  // user taxonomy rules, if any (echoed in reports)
  // Shortened kernel names for people (KernelRow::display_name). Off where only the verdict is
  // read (/metrics' verdict gauge): shortening every name was a fifth of the agent's event loop.
  bool display_names = true;
  // `analyze --from/--to` as the report header says it (aggregate::DescribeSlice); "" for the
  // whole trace (echoed in reports).
  std::string slice;
  // Windows (not traces): also the kernels view from their top kernels (`report --views
  // kernels`): count, total, mean, min and max per kernel (no order statistics) and the launch
  // configurations the windows carried (format 1.5).
  bool window_kernels_view = false;
};

// One analyzed input file and the window its events were folded into.
struct AnalysisInput {
  std::string path;
  std::string format;  // "kineto_json", "nsys_sqlite"
  const model::ProfileWindow* window = nullptr;
  const model::TraceViews* views = nullptr;  // the views computed for it (`analyze --views`)
};

// Percent of `part` in `whole`, from exact integers; 0 when `whole` is 0.
double Pct(double part, double whole);

// HTA's temporal breakdown of one device's activity span.
struct TemporalBreakdown {
  int64_t span_ns = 0;  // last end - first start of GPU activity
  int64_t busy_ns = 0;  // union of all GPU activity
  int64_t idle_ns = 0;  // span - busy
  int64_t compute_ns = 0;
  int64_t non_compute_ns = 0;                                               // busy - compute
  double busy_pct = 0, idle_pct = 0, compute_pct = 0, non_compute_pct = 0;  // of span

  void Finalize();  // sets idle/non-compute and the percentages from the first fields
};

struct CategoryRow {
  std::string name;  // a category ("matmul") or sub-category ("matmul.cublas") name
  int64_t time_ns = 0;
  uint64_t count = 0;
  double pct = 0;  // of total kernel time (sum of kernel durations)
};

struct KernelRow {
  std::string name;          // as recorded
  std::string display_name;  // demangled, without template arguments and parameter lists
  std::string category;
  std::string subcategory;
  uint64_t count = 0;
  int64_t total_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0;
  int64_t median_ns = 0;  // lower edge of the log2 histogram bucket holding the median (within 2x)
  double pct = 0;         // of total kernel time
  // Live windows' launch configurations (model::KernelStats::configs); empty for traces (their
  // exact ones are in the kernels view) and windows of an injection library before format 1.5.
  std::vector<model::LaunchConfig> launch_configs;
  uint64_t distinct_launch_configs = 0;
};

// The kernels beyond the top list, as one row.
struct OtherKernels {
  uint64_t distinct_names = 0;
  uint64_t count = 0;
  int64_t total_ns = 0;
  double pct = 0;
};

// One kind of per-stream idle gap (the HTA gap kinds). Gaps are measured per stream and summed
// over the device's streams, so their whole is the summed stream idle time (the three kinds'
// total), not the device's idle time: several streams idle at once count once per stream.
struct IdleGapRow {
  std::string kind;  // host_wait, kernel_wait, other
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
  double pct = 0;  // of StreamIdleNs(rows): the three kinds' total
};

// The whole the gap rows share: idle time summed over streams (the sum of the rows' totals).
int64_t StreamIdleNs(const std::vector<IdleGapRow>& rows);

// One cause of the causal idle split (model::IdleCause): device idle time attributed to what the
// launching host thread was doing.
struct IdleCauseRow {
  std::string cause;  // model::kIdleCauseNames
  int64_t total_ns = 0;
  double pct = 0;  // of idle_ns
};

// Steps between the host's turns (model::StepStats): with and without prefill attention.
struct StepSummary {
  uint64_t plain_count = 0, prefill_count = 0;
  int64_t plain_total_ns = 0, prefill_total_ns = 0;
  int64_t plain_mean_ns = 0, prefill_mean_ns = 0;
};

// GPU time of the steps of one forward phase (model::PhaseStats), in report units.
struct PhaseSummaryRow {
  std::string phase;  // model::kPhaseNames
  uint64_t steps = 0;
  int64_t step_total_ns = 0, step_mean_ns = 0;
  int64_t busy_ns = 0;      // summed GPU busy (union) inside its steps
  int64_t gpu_time_ns = 0;  // summed GPU operation durations
  uint64_t ops = 0;
  double pct = 0;                       // of phased_ns (the GPU time of the windows with steps)
  std::vector<CategoryRow> categories;  // those with time, by time descending; pct of gpu_time_ns
};

// The forward-phase split of the live steps (model::PhaseSplit): prefill, decode, mixed and
// unknown steps, and the GPU time of the same windows that was in no whole step.
struct PhaseSummary {
  std::vector<PhaseSummaryRow> phases;  // the phases with steps, kPhaseNames order
  int64_t outside_ns = 0;               // GPU operation time in no whole step
  uint64_t outside_ops = 0;
  double outside_pct = 0;   // of phased_ns
  int64_t phased_ns = 0;    // phases' GPU time + outside_ns
  model::PhaseSplit split;  // the sums it was made from (job totals add these)

  bool empty() const { return phases.empty(); }
};
PhaseSummary Phases(const model::PhaseSplit& split);

struct LaunchSummary {
  uint64_t cpu_launch_count = 0;
  int64_t cpu_launch_mean_ns = 0, cpu_launch_max_ns = 0, cpu_launch_total_ns = 0;
  uint64_t launch_delay_count = 0;
  int64_t launch_delay_mean_ns = 0, launch_delay_max_ns = 0;
  uint64_t short_kernels = 0;
  double short_kernel_pct = 0;  // of kernel count
  uint64_t graph_launches = 0;
  uint64_t kernels_from_graphs = 0;
};

struct WaitedOnRow {
  std::string kernel_name;
  std::string display_name;
  uint64_t count = 0;
  int64_t wait_ns = 0;
};

struct SyncRow {
  std::string type;  // kSyncTypeNames
  uint64_t count = 0;
  int64_t total_ns = 0, mean_ns = 0, max_ns = 0;
  std::vector<WaitedOnRow> waited_on;
};

struct TransferRow {
  std::string direction;  // kMemcpyKindNames, or "memset"
  uint64_t count = 0;
  uint64_t bytes = 0;
  int64_t time_ns = 0;
  double bandwidth_gbps = 0;  // bytes / time_ns (1 GB/s = 1e9 bytes/s = 1 byte/ns)
  uint64_t pageable_count = 0;
};

struct AllocationSummary {
  uint64_t malloc_calls = 0;
  int64_t malloc_total_ns = 0, malloc_max_ns = 0;
  uint64_t malloc_bytes = 0;
  uint64_t free_calls = 0;
  int64_t free_total_ns = 0, free_max_ns = 0;
  uint64_t slow_calls = 0;  // malloc/free calls over the slow threshold (1 ms)
  int64_t slow_total_ns = 0;
};

struct TimelineBin {
  int64_t start_ns = 0;  // offset from the timeline origin
  int64_t busy_ns = 0;
  double busy_pct = 0;               // of bin_ns
  std::vector<int64_t> category_ns;  // indexed like model::kCategoryNames
};

struct TimelineSummary {
  int64_t bin_ns = 0;
  int64_t origin_ns = 0;  // absolute timestamp (trace clock) of bin 0
  std::vector<TimelineBin> bins;
  bool truncated = false;  // activity past the bin limit is missing from the bins
};

// Everything about one (process, device) pair: a "rank" in the reports.
struct RankAnalysis {
  int32_t rank = 0;  // from the trace, or numbered in input order when unknown
  bool rank_from_trace = false;
  int32_t world_size = -1;
  uint32_t pid = 0;
  std::string hostname;
  uint32_t device = 0;
  std::string device_name;
  std::string device_uuid;  // "GPU-..." (live windows from an injection library that sends it)
  size_t input_index = 0;   // into Analysis::inputs

  int64_t first_start_ns = 0, last_end_ns = 0;
  TemporalBreakdown temporal;
  uint64_t kernel_count = 0;
  int64_t kernel_time_ns = 0;           // sum of kernel durations (concurrent kernels both count)
  std::vector<CategoryRow> categories;  // all 14, in kCategoryNames order
  std::vector<CategoryRow> subcategories;  // by time, descending
  std::vector<KernelRow> top_kernels;      // by total time, at most options.top
  OtherKernels other_kernels;
  std::vector<IdleGapRow> idle_gaps;      // host_wait, kernel_wait, other
  std::vector<IdleCauseRow> idle_causes;  // every cause, kIdleCauseNames order
  uint64_t idle_intervals = 0;            // device idle intervals the causes cover
  StepSummary steps;
  PhaseSummary phases;  // empty unless the windows had whole steps
  LaunchSummary launch;
  std::vector<SyncRow> syncs;          // every type, kSyncTypeNames order
  std::vector<TransferRow> transfers;  // memcpy kinds then "memset"
  AllocationSummary allocations;
  // CUDA graph launches and how their time was attributed (live path; zero for traces).
  model::CudaGraphStats graphs;
  int64_t communication_ns = 0;          // union of communication kernels
  int64_t communication_overlap_ns = 0;  // of that, time overlapped with compute
  double comm_compute_overlap_pct = 0;   // overlap / communication
  TimelineSummary timeline;
  // Data-quality counters of the process (shared by all its devices), kDataQualityNames order.
  std::vector<std::pair<std::string, uint64_t>> data_quality;
  int64_t profiler_cpu_ns = 0;  // the process's profiler CPU time (live windows only)
};

// Min / max / mean of one metric over ranks and the imbalance (max - min) / mean.
struct Spread {
  int64_t min_ns = 0, max_ns = 0;
  double mean_ns = 0;
  double imbalance = 0;  // 0 when mean is 0
  int32_t min_rank = 0, max_rank = 0;
};

struct RankComparisonRow {
  int32_t rank = 0;
  uint32_t device = 0;
  int64_t span_ns = 0, busy_ns = 0, idle_ns = 0, compute_ns = 0, communication_ns = 0;
  double busy_pct = 0;
};

inline constexpr double kStragglerMinImbalance = 0.05;

struct RankComparison {
  std::vector<RankComparisonRow> ranks;
  Spread busy, idle, compute, communication;
  // The rank with the most compute time: in a collective job the others wait for it (their extra
  // time shows up as communication). -1 with fewer than two ranks, or when compute imbalance is
  // under kStragglerMinImbalance (the ranks are balanced; naming one would be noise).
  int32_t straggler_rank = -1;
  int64_t straggler_excess_compute_ns = 0;  // its compute minus the mean compute
};

// Totals over all ranks.
struct JobSummary {
  size_t rank_count = 0;
  size_t process_count = 0;
  int64_t span_ns = 0;  // the longest rank span (ranks of different files may not share a clock)
  TemporalBreakdown temporal;  // sums over ranks; percentages of the summed spans
  uint64_t kernel_count = 0;
  int64_t kernel_time_ns = 0;
  std::vector<CategoryRow> categories;     // summed, pct of summed kernel time
  std::vector<CategoryRow> subcategories;  // summed, by time descending
  std::vector<KernelRow> top_kernels;  // ranks' top lists merged by name (a lower bound for each)
  OtherKernels
      other_kernels;  // the rest; distinct_names is a lower bound (names repeat over ranks)
  int64_t communication_ns = 0;
  int64_t communication_overlap_ns = 0;
  double comm_compute_overlap_pct = 0;
  std::vector<IdleGapRow> idle_gaps;
  std::vector<IdleCauseRow> idle_causes;  // summed over ranks, pct of the summed idle time
  uint64_t idle_intervals = 0;
  StepSummary steps;                                           // summed over ranks
  PhaseSummary phases;                                         // summed over ranks
  std::vector<std::pair<std::string, uint64_t>> data_quality;  // summed over processes
};

// Inputs left out of an analysis because they are of another job than the one analyzed
// (offline: other trace files; a store range: other runs of its processes), and why.
struct OtherJob {
  std::vector<std::string> inputs;  // trace paths; for a store range, one line per process run
  std::string why;                  // "rank 0 again", "nsys_sqlite, not kineto_json"
};

struct Analysis {
  AnalysisOptions options;
  // The inputs were several jobs and only one is analyzed: one line naming them all (the report
  // header's "warning:" line and JSON "jobs"), and the jobs left out. Empty for one job.
  std::string job_warning;
  std::vector<OtherJob> other_jobs;
  std::vector<AnalysisInput> inputs;  // window pointers are not used after Analyze()
  std::vector<RankAnalysis> ranks;    // by rank, then device
  JobSummary summary;
  RankComparison comparison;  // meaningful when ranks.size() > 1
  // The views of each input (indexed like `inputs`; empty unless some input had views): kernel
  // statistics, streams, steps and ranges as model/views.h computes them, keyed by pid; for live
  // windows with NVTX range tables, their ranges view (RangeViewsOf).
  std::vector<model::TraceViews> views;
  // Verdicts, computed once by Analyze() with the host signals and thresholds it was given (a
  // trace has no host signals; a store range passes its telemetry's).
  Diagnosis diagnosis;
};

// The ranges view (model/views.h) of the NVTX range tables a (merged) live window carries
// (`inferscope run --nvtx`); no processes when it carries none. Analyze() uses it for inputs
// without views of their own, so `report` shows the table as `analyze --views ranges` does.
model::TraceViews RangeViewsOf(const model::ProfileWindow& window);
// One row of a live range table (model::RangeStats) as a row of the ranges view: durations with
// count, total, mean, min and max (no order statistics), the GPU work's ops and time.
model::RangeRow RangeRowOf(const model::RangeStats& stats);

// Analyzes the windows of one or more inputs. Each (process, device) becomes one rank entry. The
// diagnosis runs once, at the end, with `host` and `thresholds`: callers pass what they have
// rather than diagnosing again with other settings.
Analysis Analyze(const std::vector<AnalysisInput>& inputs, const AnalysisOptions& options,
                 const HostSignals& host = {}, const DiagnosisThresholds& thresholds = {});

// Analyzes one device of one process (exposed for tests).
RankAnalysis AnalyzeDevice(const model::DeviceProfile& device, const AnalysisOptions& options);

}  // namespace inferscope::analyze
