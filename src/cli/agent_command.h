// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope agent`: runs the host agent in the foreground until SIGTERM/SIGINT (or, with
// --exit-when-idle, until no profiled process has been connected for that long).

#include <optional>
#include <string>
#include <vector>

#include "src/agentd/agent.h"
#include "src/cli/fleet_report.h"
#include "src/cli/report_command.h"

namespace CLI {
class App;
}  // namespace CLI

namespace inferscope::cli {

// Exit code when another agent already runs for the state dir (documented in docs/agent.md).
inline constexpr int kExitAgentAlreadyRunning = 6;

// Starts the agent, stops it cleanly on SIGTERM/SIGINT (everything already received is stored),
// and returns the exit code: 0 after a clean stop, 6 when another agent holds the state dir,
// 1 on other errors (the reason on stderr).
int RunAgent(const agentd::AgentOptions& options);

// Registers the `agent` and `report` subcommands on the binary's CLI11 app (kept out of main.cc so
// the two commands and their flags live in one place), and runs whichever was parsed.
class AgentAndReportCommands {
 public:
  explicit AgentAndReportCommands(CLI::App* app);
  // The exit code of the parsed command, or nullopt when neither was on the command line.
  std::optional<int> RunIfParsed();

 private:
  CLI::App* agent_cmd_ = nullptr;
  CLI::App* report_cmd_ = nullptr;
  std::string state_dir_, retention_ = "7d", max_store_ = "1GiB", exit_when_idle_;
  std::string rollup_retention_;
  std::string metrics_token_;  // --metrics-token FILE
  bool verbose_ = false;
  int http_port_ = agentd::AgentOptions::kDefaultHttpPort;
  bool no_nvml_ = false, no_scrape_ = false, no_otlp_ = false;
  std::string window_ = "10s", gpu_sample_interval_ = "1s", scrape_interval_ = "5s",
              span_grace_ = "10s";
  std::string metrics_url_, nvml_library_ = "libnvidia-ml.so.1";
  std::vector<int> watch_pids_;
  std::string sink_, sink_credentials_, sink_spool_ = "256MiB", sink_retention_;
  std::vector<std::string> labels_;
  std::string report_state_dir_, last_, format_ = "text", csv_table_ = "kernels";
  std::string report_views_;  // report --views
  std::optional<uint32_t> pid_, device_;
  std::optional<int32_t> rank_;
  ReportOptions report_;
  FleetReportOptions fleet_;  // report --source clickhouse://
};

}  // namespace inferscope::cli
