// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope analyze`: import trace files, aggregate each over its whole length, analyze, render.
// The work is src/pipeline's; this is flags, messages and exit codes.

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/import/trace_importer.h"
#include "src/model/profile.h"
#include "src/model/taxonomy.h"
#include "src/model/views.h"
#include "src/pipeline/trace_pipeline.h"
#include "src/report/report.h"

namespace inferscope::cli {

struct AnalyzeOptions {
  std::vector<std::string> paths;  // files or directories (non-recursive)
  report::ReportFormat format = report::ReportFormat::kText;
  int top = 15;
  int64_t bin_ns = 100'000'000;  // 0: chosen from each trace's span (at most kAutoTimelineBins)
  int64_t kernel_wait_threshold_ns = 30'000;
  std::string rules_path;
  std::string thresholds_path;  // --diagnosis-thresholds
  std::string output_path;      // empty: `out`
  bool verbose = false;         // progress lines on `err` even when it is not a terminal
  bool progress = false;        // progress lines on `err` (set by the caller for a terminal)
  int text_width = 100;         // columns of the text report (the terminal's, when it is one)
  // `--views`: the views computed beside the report (model/views.h); `--step-range` prefixes.
  model::ViewSelection views;
  std::vector<std::string> step_prefixes;
  // `--format csv`: print this one table (report::CsvTableNames()) instead of the report; the
  // view it needs is computed whether or not --views names it.
  bool csv = false;
  std::string csv_table = "kernels";
  aggregate::TimeSlice slice;  // --from / --to
};

// Parses `--from` / `--to` values into `slice`: a duration ("1.5s") is an offset from the trace's
// first event, "@NS" a timestamp on the trace clock (integer ns, as the JSON report prints them).
// Empty strings leave that bound open. Both bounds must be of one kind and from < to; errors are
// kInvalidArgument naming the flag.
base::Status ParseTimeSlice(const std::string& from, const std::string& to,
                            aggregate::TimeSlice* slice);

// Parses `--views`: a comma-separated list of kernels, streams, steps, ranges, or all. A bad name
// is kInvalidArgument naming it.
base::Status ParseViewList(std::string_view list, model::ViewSelection* views);

// Bins a timeline gets when --bin is not given (pipeline::kAutoTimelineBins).
inline constexpr int kAutoTimelineBins = pipeline::kAutoTimelineBins;

// The pipeline settings of these options (what `analyze` hands to src/pipeline).
pipeline::TraceOptions TraceOptionsOf(const AnalyzeOptions& options);

// Runs the command. The report goes to `out` (or the output file); progress, skipped files and the
// single error line ("inferscope: error: <path>: <problem>") go to `err`. Returns the exit code.
// Never throws.
int RunAnalyze(const AnalyzeOptions& options, std::ostream& out, std::ostream& err);

// Forwarders kept for callers written against the CLI (src/context, src/mcp). New code calls
// src/pipeline/trace_pipeline.h directly: these pull in nothing more, but live in the CLI layer.
inline base::Status ExpandTracePaths(const std::vector<std::string>& paths,
                                     std::vector<std::string>* files, std::string* failed_path,
                                     std::ostream& err) {
  return pipeline::ExpandTracePaths(paths, files, failed_path, err);
}
inline base::Status ImportTraceFile(const std::string& path, const AnalyzeOptions& options,
                                    const model::KernelClassifier& classifier, int64_t window_ns,
                                    const std::function<void(model::ProfileWindow&&)>& on_window,
                                    std::string* format, std::ostream& err) {
  auto stats = pipeline::ImportTraceFile(path, TraceOptionsOf(options), classifier, window_ns,
                                         on_window, err);
  if (!stats.ok()) return stats.status();
  *format = import::TraceFormatName(stats->format);
  return base::OkStatus();
}

}  // namespace inferscope::cli
