// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope analyze`: import trace files, aggregate each over its whole length, analyze, render.

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/model/profile.h"
#include "src/model/taxonomy.h"
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
};

// Bins a timeline gets when --bin is not given: a terminal-wide sparkline at full resolution,
// and a JSON timeline of a few hundred bins whatever the trace's length.
inline constexpr int kAutoTimelineBins = 500;

// Runs the command. The report goes to `out` (or the output file); progress, skipped files and the
// single error line ("inferscope: error: <path>: <problem>") go to `err`. Returns the exit code.
// Never throws.
int RunAnalyze(const AnalyzeOptions& options, std::ostream& out, std::ostream& err);

// The trace loading of `analyze`, shared with `diff`.

// Expands command-line paths: files stay, directories become their trace files (sorted,
// non-recursive; skipped entries are named on `err`). On failure `*failed_path` names the culprit.
base::Status ExpandTracePaths(const std::vector<std::string>& paths,
                              std::vector<std::string>* files, std::string* failed_path,
                              std::ostream& err);

// Imports one trace file and folds its events into profile windows handed to `on_window` in time
// order: one window over the whole trace when `window_ns` is 0, else windows aligned to multiples
// of `window_ns` on the trace clock (events are buffered until the end, as importers deliver them
// in file order). `*format` is set to "kineto_json" or "nsys_sqlite". Progress goes to `err` when
// options.verbose or options.progress.
base::Status ImportTraceFile(const std::string& path, const AnalyzeOptions& options,
                             const model::KernelClassifier& classifier, int64_t window_ns,
                             const std::function<void(model::ProfileWindow&&)>& on_window,
                             std::string* format, std::ostream& err);

}  // namespace inferscope::cli
