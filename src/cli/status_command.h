// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope status`: whether the host agent of a state dir runs, where its endpoints are, what
// its store holds, which processes and GPUs it saw lately and how its collectors (NVML, engine
// metrics scrape, OTLP) fare. Plain text for people, `--format json` for scripts
// (docs/cli.md, "inferscope status").

#include <optional>
#include <ostream>
#include <string>

#include "src/cli/status_parse.h"
#include "src/cli/status_probe.h"

namespace CLI {
class App;
}  // namespace CLI

namespace inferscope::cli {

// Runs the command: the summary goes to `out`, errors to `err`. Exit codes: 0 the agent runs,
// 3 it does not (kExitNotFound), 1 other error (the output cannot be written).
int RunStatus(const StatusOptions& options, std::ostream& out, std::ostream& err);

// Registers the `status` subcommand on the binary's CLI11 app and runs it when parsed.
class StatusCommand {
 public:
  explicit StatusCommand(CLI::App* app);
  // The exit code when `status` was on the command line, else nullopt.
  std::optional<int> RunIfParsed();

 private:
  CLI::App* cmd_ = nullptr;
  std::string state_dir_;
  std::string format_ = "text";
};

}  // namespace inferscope::cli
