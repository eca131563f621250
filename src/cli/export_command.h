// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope export TRACE... -o FILE.pftrace`: a trace seen through inferscope's taxonomy in
// Perfetto. The work is src/perfetto's; this is flags, messages and exit codes.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace inferscope::cli {

struct ExportOptions {
  std::vector<std::string> paths;  // files or directories (non-recursive)
  std::string output_path;         // .pftrace (or .pftrace.gz)
  std::string rules_path;          // extra classification rules
  bool verbose = false;            // a summary line on `err`
};

// Runs the command; the single error line ("inferscope: error: <path>: <problem>") goes to `err`.
// Returns the exit code (docs/cli.md). Never throws.
int RunExport(const ExportOptions& options, std::ostream& err);

class ExportCommand {
 public:
  explicit ExportCommand(CLI::App* app);
  // The exit code when `export` was on the command line, else nullopt.
  std::optional<int> RunIfParsed();

 private:
  CLI::App* cmd_ = nullptr;
  ExportOptions options_;
};

}  // namespace inferscope::cli
