// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// <state dir>/agent.json: the running agent's pid and the URLs of its HTTP endpoints, written by
// the agent once it listens and removed when it stops. How `status`, `run` and tests find it.

#include <cstdint>
#include <string>

#include "src/base/status.h"

namespace inferscope::net {

struct AgentEndpoints {
  int64_t pid = 0;
  std::string socket;
  std::string api;        // http://127.0.0.1:PORT/api/v1
  std::string metrics;    // http://127.0.0.1:PORT/metrics
  std::string otlp_http;  // http://127.0.0.1:PORT/v1/traces
  std::string ui;         // http://127.0.0.1:PORT/ui/ (the dashboard); "" from agents before it
};

inline constexpr const char* kAgentEndpointsFile = "agent.json";

// kNotFound when the file is absent (no agent, or one without HTTP); kDataLoss when unreadable.
base::StatusOr<AgentEndpoints> ReadAgentEndpoints(const std::string& state_dir);

}  // namespace inferscope::net
