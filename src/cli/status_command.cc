// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/status_command.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "src/base/state_dir.h"
#include "src/base/time_point.h"
#include "src/cli/cli_voice.h"
#include "src/cli/exit_codes.h"
#include "src/cli/status_probe.h"
#include "src/cli/status_render.h"

namespace inferscope::cli {

int RunStatus(const StatusOptions& options, std::ostream& out, std::ostream& err) {
  return RunGuarded(
      [&] {
        const int64_t now_ns = options.now_unix_ns != 0 ? options.now_unix_ns : base::UnixNowNs();
        const Gathered g = Gather(options, now_ns);
        out << (options.json ? RenderStatusJson(g, now_ns) : RenderStatusText(g, now_ns));
        out.flush();
        if (!out) {
          err << "inferscope: error: cannot write the status\n";
          return kExitError;
        }
        return g.running ? kExitOk : kExitNotFound;
      },
      err);
}

StatusCommand::StatusCommand(CLI::App* app) {
  cmd_ = app->add_subcommand(
      "status", "Show whether the agent runs, its endpoints, what it sees and its collectors");
  cmd_->footer(
      "\nFinds the agent through <state-dir>/agent.json (pid and endpoint URLs) and asks its API\n"
      "(1 s timeout); also tries the ingest socket <state-dir>/agent.sock. Shows the endpoints,\n"
      "what the store holds, the processes and GPUs seen in the last 5 minutes, and the state\n"
      "of each collector (nvml, scrape, otlp: on, off or degraded, with the reason). When the\n"
      "agent is down it says how to start it and still shows the store.\n"
      "JSON keys are documented in docs/cli.md.\n\n"
      "Exit codes: 0 the agent runs, 1 error, 2 usage error, 3 the agent is not running.\n\n"
      "Examples:\n"
      "  inferscope status\n"
      "  inferscope status --format json | jq .endpoints.otlp_http\n");
  cmd_->add_option("--state-dir", state_dir_,
                   "Agent socket and store directory (default: $INFERSCOPE_STATE_DIR, else\n"
                   "$XDG_STATE_HOME/inferscope, else ~/.local/state/inferscope)")
      ->type_name("DIR");
  cmd_->add_option("-f,--format", format_, "Output format: text or json")
      ->capture_default_str()
      ->type_name("FORMAT")
      ->check(OneOf({"text", "json"}));
}

std::optional<int> StatusCommand::RunIfParsed() {
  if (!cmd_->parsed()) return std::nullopt;
  StatusOptions options;
  options.state_dir =
      state_dir_.empty()
          ? base::DefaultStateDir([](const char* n) -> const char* { return std::getenv(n); })
          : state_dir_;
  options.json = format_ == "json";
  return RunStatus(options, std::cout, std::cerr);
}

}  // namespace inferscope::cli