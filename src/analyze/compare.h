// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Regression detection between two profiles (`inferscope diff`): the figures of each side (a whole
// trace, saved report or store range, plus the same figures per time slice or stored window), the
// normalized quantities compared, and the significance test that judges every change against the
// slice-to-slice spread of that quantity. docs/diff.md describes the method and its parameters.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/base/json_writer.h"

namespace inferscope::analyze {

// What diff reads from one profile: a whole side, or one slice of it. Times are summed over ranks.
struct ProfileFigures {
  struct Timed {
    int64_t time_ns = 0;
    uint64_t count = 0;
  };
  int64_t span_ns = 0;  // summed GPU activity spans (GPU-seconds of the range)
  int64_t busy_ns = 0;
  int64_t kernel_time_ns = 0;
  uint64_t kernel_count = 0;
  std::map<std::string, Timed> categories;  // "attention", ... (all 14)
  std::map<std::string, Timed> kernels;     // by display name, the listed top kernels
  std::map<std::string, Timed> idle_gaps;   // "host_wait", "kernel_wait", "other"
  std::map<std::string, Timed> syncs;       // host sync waits by type ("stream", "device", ...)
  // GPU time and whole steps per forward phase ("prefill", "decode", "mixed", "unknown"): all four
  // when the profile has phase data (windows with whole steps), none otherwise.
  std::map<std::string, Timed> phases;
  // NVTX / annotation ranges (the report's ranges view: live `run --nvtx` windows, Kineto
  // user_annotation, Nsight NVTX), by range-table name, summed over processes: instances, host
  // time and the GPU work launched inside them. Not part of the verdict (ranges nest: the same
  // GPU time counts in every enclosing name); Compare lists them as a table.
  struct Range {
    uint64_t count = 0;
    int64_t host_ns = 0;
    uint64_t gpu_ops = 0;
    int64_t gpu_time_ns = 0;
    void Add(const Range& r) {
      count += r.count;
      host_ns += r.host_ns;
      gpu_ops += r.gpu_ops;
      gpu_time_ns += r.gpu_time_ns;
    }
  };
  bool has_ranges = false;  // the profile carried a range table (else: not recorded)
  std::map<std::string, Range> ranges;
  Range range_tail;  // the names the processes' tables folded into their `other` row
  // From the engine metrics of the same range, when known.
  std::optional<double> generation_tokens;         // tokens generated in the range
  std::optional<double> generation_tokens_per_s;   // their rate over the range's wall time
  std::map<std::string, double> stage_latency_ms;  // "ttft.p50", "e2e.p99", ... (milliseconds)
};

// The figures of an analysis (its job summary; sync waits summed over ranks).
ProfileFigures FiguresFromAnalysis(const Analysis& analysis);

// One side of a comparison: the whole and, when known, the same figures per slice.
struct ComparisonSide {
  std::string label;       // "trace a.sqlite", "store range 10:00..10:30", "report r.json"
  std::string slice_kind;  // how slices were made ("32 time slices of 10 ms"); "" without
  ProfileFigures whole;
  std::vector<ProfileFigures> slices;
};

struct CompareOptions {
  double alpha = 0.01;  // two-sided: the (1 - alpha) bootstrap interval must exclude 0
  int bootstrap_samples = 2000;
  uint64_t seed = 0x5eed;        // fixed: the same inputs always give the same verdict
  size_t min_slices = 4;         // fewer on either side: the fixed threshold applies
  double min_relative = 0.10;    // |change| / baseline at least this (both methods)
  double fixed_relative = 0.20;  // without slices: |change| / baseline at least this
  double min_time_share =
      0.005;                    // GPU-time quantities: change worth at least this share of GPU time
  double min_latency_ms = 1.0;  // latency quantities: change of at least this many milliseconds
  int top_kernels = 10;         // kernels compared (by time over both sides)
  size_t top_ranges = 10;       // NVTX range names listed (by |GPU time change|); the rest: other
};

enum class Better { kLower, kHigher };

// One compared quantity.
struct MetricChange {
  std::string key;  // stable id: "category.attention.share", "kernel.<name>.mean", "busy", ...
  // "busy", "category", "kernel", "phase", "idle", "sync", "stage", "throughput"
  std::string group;
  std::string label;  // for people: "attention: share of GPU time"
  // How much of `label` is the item's name ("attention", a kernel's name); the rest is the
  // quantity. A narrow column cuts the name, never the quantity. 0: no name part.
  size_t name_size = 0;
  std::string unit;  // "%", "ns", "ns/token", "ms", "tokens/s"
  Better better = Better::kLower;
  double baseline = 0, candidate = 0;
  double delta = 0;     // candidate - baseline
  double relative = 0;  // delta / |baseline|; +-1 when the baseline is 0 and the candidate is not
  std::string method;   // "bootstrap" (against the slice spread) or "fixed_threshold"
  size_t baseline_slices = 0, candidate_slices = 0;
  double ci_low = 0, ci_high = 0;  // interval of the slice-mean difference (bootstrap only)
  double impact = 0;               // share of GPU time (or relative latency) at stake: the sort key
  bool significant = false;
  bool regression = false;   // significant and worse
  bool improvement = false;  // significant and better
  // Per GPU-second only: a worse busy/idle/sync share that faster kernels account for (the same
  // host loop around quicker kernels leaves the GPU idle longer). Significant, not a regression.
  bool explained = false;
};

// One NVTX range name on both sides (the range table of the diff): not judged for significance.
struct RangeChange {
  std::string name;  // "" for the other row
  // "changed" (on both sides), "new" (candidate only), "gone" (baseline only); "" for other.
  std::string status;
  ProfileFigures::Range baseline, candidate;
  double baseline_gpu_pct = 0, candidate_gpu_pct = 0;  // GPU time as % of the side's GPU span
  int64_t gpu_delta_ns() const { return candidate.gpu_time_ns - baseline.gpu_time_ns; }
  int64_t host_delta_ns() const { return candidate.host_ns - baseline.host_ns; }
};

struct Comparison {
  std::string normalization;  // "per_token" or "per_gpu_second"
  std::string baseline_label, candidate_label;
  std::string baseline_slices, candidate_slices;  // slice kinds ("" = none)
  std::vector<MetricChange> changes;              // by impact, descending (significant first)
  // NVTX ranges, when both sides carried range tables: the top `top_ranges` names by |GPU time
  // change| (then |host time change|, then name), every other name summed into `ranges_other`
  // with both sides' own tails (the top-K + tail rule).
  bool ranges_compared = false;
  std::vector<RangeChange> ranges;
  RangeChange ranges_other;
  uint64_t ranges_other_names = 0;  // named rows folded into ranges_other
  bool ranges_other_tails = false;  // ranges_other holds some side's own tail
  std::vector<std::string> notes;   // caveats for the reader (fallbacks, missing data)
  bool regression = false;          // any change is a regression
};

// The NVTX range table of the comparison alone (Compare calls it): when both sides carry range
// tables, sets `ranges_compared`, every name of either side ("changed", "new", "gone"), the top
// `options.top_ranges` by |GPU time change| in `ranges`, the rest and both sides' own tails in
// `ranges_other`; appends its caveats to `notes` (a range only one side recorded; a one-sided
// name that may hide in the other side's tail; sides of different GPU time). Public so that a
// surface with only the figures' ranges (the MCP `compare` tool, from two report JSONs) gives
// the same table as `diff`.
void CompareRanges(const ProfileFigures& baseline, const ProfileFigures& candidate,
                   const CompareOptions& options, Comparison* out);

// Compares the two sides. Deterministic for the same inputs and options.
Comparison Compare(const ComparisonSide& baseline, const ComparisonSide& candidate,
                   const CompareOptions& options);

// The bootstrap interval of mean(b) - mean(a) at level 1 - alpha (exposed for tests).
std::pair<double, double> BootstrapMeanDifference(const std::vector<double>& a,
                                                  const std::vector<double>& b, double alpha,
                                                  int samples, uint64_t seed);

// `diff --format json`: the Comparison as an object (docs/diff.md, "JSON").
void WriteComparisonJson(const Comparison& comparison, base::JsonWriter& w);
// Text (markdown = false) or GitHub markdown: verdict, then changes by impact. Unless `all`,
// at most `max_rows` changes, and not-significant ones only while there is room.
std::string RenderComparison(const Comparison& comparison, bool markdown, bool all,
                             size_t max_rows = 25);

}  // namespace inferscope::analyze
