// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The offline pipeline: trace files -> profile windows -> one analysis. Every front end (the
// `analyze` and `diff` commands, an HTTP or MCP server, the analyze benchmark) calls it here, so
// none of them has to link another front end, and none of it links agent code.

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "src/aggregate/slice_sink.h"
#include "src/analyze/analysis.h"
#include "src/analyze/diagnose.h"
#include "src/base/status.h"
#include "src/import/import_stats.h"
#include "src/model/profile.h"
#include "src/model/taxonomy.h"
#include "src/model/views.h"

namespace inferscope::pipeline {

// Bins a timeline gets when no bin width is given: a terminal-wide sparkline at full resolution,
// and a JSON timeline of a few hundred bins whatever the trace's length.
inline constexpr int kAutoTimelineBins = 500;

struct TraceOptions {
  int top = 15;                  // top kernels kept per rank
  int64_t bin_ns = 100'000'000;  // 0: chosen from each trace's span (at most kAutoTimelineBins)
  int64_t kernel_wait_threshold_ns = 30'000;
  std::string rules_path;  // echoed in the analysis; the classifier is the caller's to load
  bool progress = false;   // "analyzing PATH (12 MB)... done in 1.2 s (N kernels)" lines on `err`
  // The views to compute beside the windows (`analyze --views`; model/views.h), and the name
  // prefixes of step ranges (empty: `ProfilerStep#`).
  model::ViewSelection views;
  std::vector<std::string> step_prefixes;
  // The windows carry NVTX range tables (ProcessProfile::ranges, as live `run --nvtx` windows):
  // `diff` compares ranges per time slice from them.
  bool window_ranges = false;
  // `analyze --from/--to`: only the events that start in the slice (each file's own origin when
  // relative).
  aggregate::TimeSlice slice;
};

// Expands command-line paths: files stay, directories become their trace files (sorted,
// non-recursive; skipped entries are named on `err`). On failure `*failed_path` names the culprit.
base::Status ExpandTracePaths(const std::vector<std::string>& paths,
                              std::vector<std::string>* files, std::string* failed_path,
                              std::ostream& err);

// Imports one trace file and folds its events into profile windows handed to `on_window` in time
// order: one window over the whole trace when `window_ns` is 0, else windows aligned to multiples
// of `window_ns` on the trace clock (events are buffered until the end, as importers deliver them
// in file order). The importer and the aggregator run on two threads.
base::StatusOr<import::ImportStats> ImportTraceFile(
    const std::string& path, const TraceOptions& options, const model::KernelClassifier& classifier,
    int64_t window_ns, const std::function<void(model::ProfileWindow&&)>& on_window,
    std::ostream& err);

// One trace file folded into one window over its whole length.
struct ImportedTrace {
  std::string path;
  std::string format;  // import::TraceFormatName: "kineto_json", "nsys_sqlite"
  import::ImportStats stats;
  model::ProfileWindow window;
  model::TraceViews views;  // the views options.views selected (none: empty)
};

// Traces of one job, by index into the list GroupTracesByJob was given (in input order).
struct JobGroup {
  std::vector<size_t> traces;
  std::string why_separate;  // why its first trace is not of the first group's job; "" for that one
};

// Groups traces by the job they come from, so that unrelated runs in one directory are not read
// as one job's ranks (and their differences as imbalance). A trace joins the first group it fits,
// in input order; it does not fit a group that already has one of its ranks, has another world
// size (Kineto distributedInfo), has the same process (hostname and pid, when the trace names its
// host), or, when both are on the wall clock (Kineto: timestamps plus baseTimeNanoseconds), ran
// apart from it by more than the longer of the two. Traces that say nothing of the kind stay
// together.
std::vector<JobGroup> GroupTracesByJob(const std::vector<ImportedTrace>& traces);

struct TraceSet {
  std::vector<ImportedTrace> traces;  // in input order (directories expanded and sorted)
  int64_t bin_ns = 0;                 // the timeline bin width every trace now has
  // When the inputs were several jobs (GroupTracesByJob), `traces` holds the largest (most
  // processes; the first of equals) and these the paths of the others; `job_warning` names every
  // group in one line.
  std::vector<std::string> left_out;
  std::string job_warning;
  std::vector<analyze::OtherJob> other_jobs;  // the jobs of `left_out`, with why each is apart
};

// Expands `paths`, imports every trace whole and keeps one job's (GroupTracesByJob). With
// automatic bins (options.bin_ns 0) the
// timelines are brought to the widest trace's bin, so ranks line up; a given bin too small for a
// trace is kInvalidArgument naming the smallest that fits, with `*failed_path` left empty (a usage
// error, not a bad file). Any other failure names its file in `*failed_path`.
base::StatusOr<TraceSet> ImportTraces(const std::vector<std::string>& paths,
                                      const TraceOptions& options,
                                      const model::KernelClassifier& classifier,
                                      std::string* failed_path, std::ostream& err);

// Analyzes a TraceSet (one rank per process and device) and diagnoses it once with `thresholds`
// (a trace has no host signals). The analysis names the jobs left out (job_warning, other_jobs).
analyze::Analysis AnalyzeTraces(const TraceSet& traces, const TraceOptions& options,
                                const analyze::DiagnosisThresholds& thresholds = {});

// No verdict without evidence: whether the analysis saw any kernel, copy or memset.
bool HasGpuActivity(const analyze::Analysis& analysis);

}  // namespace inferscope::pipeline
