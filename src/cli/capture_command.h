// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope capture [--pid P | --rank R | --all] --duration 2s -o FILE`: asks the running agent
// (POST /api/v1/capture) to record every kernel, copy, sync and CUDA call of its profiled
// processes for a few seconds, waits for it and downloads the trace. The work is the agent's
// (src/agentd/capture.h); this is flags, messages and exit codes.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace inferscope::cli {

struct CaptureOptions {
  std::string state_dir;
  std::optional<uint32_t> pid;
  std::optional<int32_t> rank;
  std::string duration = "2s";
  std::string max_size = "256MB";  // the capture's memory, all processes together
  std::string output_path;         // .pftrace[.gz] or .json[.gz]
  bool graph_nodes = false;        // trace CUDA graph nodes as kernels for the span
};

// The format the agent writes for `path`: pftrace.gz, json, json.gz, else pftrace.
std::string CaptureFormatFor(const std::string& path);

// Runs the command: progress and the summary on `err`. Returns the exit code (docs/cli.md).
int RunCapture(const CaptureOptions& options, std::ostream& err);

class CaptureCommand {
 public:
  explicit CaptureCommand(CLI::App* app);
  std::optional<int> RunIfParsed();

 private:
  CLI::App* cmd_ = nullptr;
  CaptureOptions options_;
  uint32_t pid_ = 0;
  int32_t rank_ = -1;
  bool all_ = false;
};

}  // namespace inferscope::cli
