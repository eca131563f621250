// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope analyze`: import trace files, aggregate each over its whole length, analyze, render.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "src/report/report.h"

namespace inferscope::cli {

struct AnalyzeOptions {
  std::vector<std::string> paths;  // files or directories (non-recursive)
  report::ReportFormat format = report::ReportFormat::kText;
  int top = 15;
  int64_t bin_ns = 100'000'000;
  int64_t kernel_wait_threshold_ns = 30'000;
  std::string rules_path;
  std::string output_path;  // empty: `out`
  bool verbose = false;     // progress lines on `err` even when it is not a terminal
  bool progress = false;    // progress lines on `err` (set by the caller for a terminal)
};

// Runs the command. The report goes to `out` (or the output file); progress, skipped files and the
// single error line ("inferscope: error: <path>: <problem>") go to `err`. Returns the exit code.
// Never throws.
int RunAnalyze(const AnalyzeOptions& options, std::ostream& out, std::ostream& err);

}  // namespace inferscope::cli
