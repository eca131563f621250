// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/ui_command.h"

#include <simdjson.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "src/base/state_dir.h"
#include "src/cli/exit_codes.h"
#include "src/net/agent_endpoints.h"
#include "src/net/http_client.h"

namespace inferscope::cli {

int RunUi(const std::string& state_dir, std::ostream& out, std::ostream& err) {
  auto endpoints = net::ReadAgentEndpoints(state_dir);
  if (!endpoints.ok()) {
    err << "inferscope: error: "
        << (endpoints.status().code() == base::StatusCode::kNotFound
                ? "no agent is running for " + state_dir +
                      " (start one with 'inferscope agent' or 'inferscope run')"
                : endpoints.status().message())
        << "\n";
    return endpoints.status().code() == base::StatusCode::kNotFound ? kExitNotFound : kExitError;
  }
  if (endpoints->access_token.empty()) {
    err << "inferscope: error: " << endpoints->access_token_error << "\n";
    return kExitError;
  }
  auto target = net::ParseHttpUrl(endpoints->api + "/ui/login", "agent API URL");
  if (!target.ok()) {
    err << "inferscope: error: " << target.status().message() << "\n";
    return kExitError;
  }
  net::FetchOptions options;
  options.bearer_token = endpoints->access_token;
  auto r = net::HttpPost(*target, options);
  if (!r.ok()) {
    err << "inferscope: error: agent API: " << r.status().message() << "\n";
    return kExitError;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view url, error;
  int64_t expires = 0;
  const bool parsed = parser.parse(r->body).get(doc) == simdjson::SUCCESS;
  if (r->status != 200 || !parsed || doc["url"].get(url) != simdjson::SUCCESS) {
    if (parsed && doc["error"].get(error) != simdjson::SUCCESS) error = {};
    err << "inferscope: error: the agent gave no sign-in link (HTTP " << r->status
        << (error.empty() ? "" : ": " + std::string(error)) << ")\n";
    return kExitError;
  }
  if (doc["expires_in_s"].get(expires) != simdjson::SUCCESS) expires = 0;
  out << url << "\n";
  err << "inferscope: open this link in a browser on this host within " << expires
      << " s; it works once and signs that browser in to the dashboard\n";
  return out ? kExitOk : kExitError;
}

UiCommand::UiCommand(CLI::App* app) {
  cmd_ =
      app->add_subcommand("ui", "Print a one-time link that signs a browser in to the dashboard");
  cmd_->footer(
      "\nAsks the running agent (with the access token of <state-dir>/agent.token) for a link\n"
      "that works once, within 2 minutes. Opening it sets an HttpOnly, SameSite=Strict session\n"
      "cookie for the dashboard at <ui URL of agent.json>; the session reads (the dashboard\n"
      "starts no capture) and lasts until the agent's token changes.\n\n"
      "Exit codes: 0 printed, 1 error, 2 usage error, 3 no agent is running.\n\n"
      "Example:\n"
      "  inferscope ui        # then open the printed http://127.0.0.1:9470/ui/login?code=...\n");
  cmd_->add_option("--state-dir", state_dir_,
                   "Agent socket and store directory (default: $INFERSCOPE_STATE_DIR, else\n"
                   "$XDG_STATE_HOME/inferscope, else ~/.local/state/inferscope)")
      ->type_name("DIR");
}

std::optional<int> UiCommand::RunIfParsed() {
  if (!cmd_->parsed()) return std::nullopt;
  const std::string dir =
      state_dir_.empty()
          ? base::DefaultStateDir([](const char* n) -> const char* { return std::getenv(n); })
          : state_dir_;
  return RunUi(dir, std::cout, std::cerr);
}

}  // namespace inferscope::cli
