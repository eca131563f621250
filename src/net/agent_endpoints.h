// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// <state dir>/agent.json: the running agent's pid and the URLs of its HTTP endpoints, written by
// the agent once it listens and removed when it stops. How `status`, `run` and tests find it, and
// with it the access token its API needs.

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
  // <state dir>/agent.token, for `Authorization: Bearer` on every request but /metrics; "" when
  // it cannot be read, and then access_token_error says why (requests will get 401).
  std::string access_token;
  std::string access_token_error;
};

inline constexpr const char* kAgentEndpointsFile = "agent.json";

// kNotFound when the file is absent (no agent, or one without HTTP); kDataLoss when unreadable;
// kUnavailable when the state dir is not trusted (base::CheckStateDirTrusted).
base::StatusOr<AgentEndpoints> ReadAgentEndpoints(const std::string& state_dir);

}  // namespace inferscope::net
