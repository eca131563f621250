// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope status`, probing: what the state dir's agent.json names, whether the pid lives and
// the ingest socket answers, what the agent's API says, and what the store holds. Everything it
// learns, or why it could not, lands in one Gathered value for the renderers.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/cli/status_parse.h"
#include "src/net/agent_endpoints.h"
#include "src/store/sqlite_store.h"

namespace inferscope::cli {

struct StatusOptions {
  std::string state_dir;
  bool json = false;
  int64_t now_unix_ns = 0;  // 0: the clock (tests pin it)
  int timeout_ms = 1000;    // per HTTP request to the agent
};

// Everything `status` learned, whichever way it learned it.
struct Gathered {
  std::string state_dir;
  bool running = false;
  std::optional<int64_t> pid;
  std::optional<net::AgentEndpoints> endpoints;  // agent.json, when it names a live agent
  std::string socket_path;
  bool socket_answers = false;
  std::optional<AgentStatusResponse> agent;  // GET /api/v1/status answered
  std::string store_path;
  std::optional<store::StoreSummary> store;
  bool processes_from_store = false;
  std::vector<StatusProcess> processes;
  std::vector<StatusDevice> devices;
  std::vector<std::string> notes;  // why something is missing; one line each
};

// Probes the agent of options.state_dir and reads its store; `now_ns` bounds "lately" (5 minutes).
Gathered Gather(const StatusOptions& options, int64_t now_ns);

}  // namespace inferscope::cli
