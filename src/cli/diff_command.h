// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope diff BASELINE CANDIDATE`: regression detection between two profiles. Each side is
// trace files (imported in time slices), a saved JSON report, or a time range of the agent's store
// (one slice per stored window). docs/diff.md describes the inputs, the method and the output.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "src/analyze/compare.h"
#include "src/report/report.h"

namespace CLI {
class App;
}

namespace inferscope::cli {

// diff's exit codes (for CI): they differ from the other commands' on purpose.
inline constexpr int kDiffNoRegression = 0;
inline constexpr int kDiffRegression = 1;
inline constexpr int kDiffError = 2;

struct DiffOptions {
  std::vector<std::string> baseline_paths;      // trace files / directories, or one JSON report
  std::vector<std::string> candidate_paths;     // same
  std::string baseline_range, candidate_range;  // "FROM..TO" over the store (instead of paths)
  std::string state_dir;                        // the store for the ranges
  // The fleet in ClickHouse (--source clickhouse://...) instead of the store: each side is a
  // range and a host/label selection; the baseline's selection defaults to the candidate's and a
  // missing range to the other side's.
  std::string source, source_credentials;
  std::vector<std::string> hosts, labels;                    // the candidate's
  std::vector<std::string> baseline_hosts, baseline_labels;  // the baseline's
  bool exact = false;                                        // FINAL
  report::ReportFormat format = report::ReportFormat::kText;
  bool all = false;  // every compared quantity, not only the significant and the largest
  analyze::CompareOptions compare;
  std::string rules_path;             // extra classification rules for traces
  int64_t base_slice_ns = 5'000'000;  // traces are cut into windows this long, then coarsened
  size_t max_slices = 64;             // ... until at most this many slices remain
  int64_t now_unix_ns = 0;            // "now" for the ranges (0 = the clock; tests set it)
  bool verbose = false;
  bool progress = false;
};

// Runs the comparison; the report goes to `out`, notes and the single error line to `err`.
// Returns kDiffNoRegression, kDiffRegression or kDiffError. Never throws.
int RunDiff(const DiffOptions& options, std::ostream& out, std::ostream& err);

// Registers `diff` on the binary's CLI11 app and runs it when it was parsed.
class DiffCommand {
 public:
  explicit DiffCommand(CLI::App* app);
  // The exit code when `diff` was on the command line, else nullopt.
  std::optional<int> RunIfParsed();

 private:
  CLI::App* cmd_ = nullptr;
  std::vector<std::string> positional_;
  std::string format_ = "text";
  std::string state_dir_;
  double min_change_pct_ = 10;
  DiffOptions options_;
};

}  // namespace inferscope::cli
