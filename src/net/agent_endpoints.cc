// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/net/agent_endpoints.h"

#include <simdjson.h>

#include "src/base/access_token.h"
#include "src/base/file.h"
#include "src/base/state_dir.h"

namespace inferscope::net {

base::StatusOr<AgentEndpoints> ReadAgentEndpoints(const std::string& state_dir) {
  // An agent.json someone else could have written may name their server, and the CLI would send
  // it the token: only a directory of this user's is believed.
  if (base::Status trusted = base::CheckStateDirTrusted(state_dir);
      !trusted.ok() && trusted.code() != base::StatusCode::kNotFound)
    return trusted;
  const std::string path = state_dir + "/" + kAgentEndpointsFile;
  auto text = base::ReadSmallFile(path, "the agent endpoints");
  if (!text.ok()) return base::NotFoundError(path + ": no agent endpoints (is the agent running?)");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(*text).get(doc) != simdjson::SUCCESS)
    return base::DataLossError(path + ": not valid JSON");
  AgentEndpoints e;
  std::string_view v;
  int64_t pid = 0;
  if (doc["pid"].get(pid) == simdjson::SUCCESS) e.pid = pid;
  if (doc["socket"].get(v) == simdjson::SUCCESS) e.socket = std::string(v);
  simdjson::dom::element endpoints;
  if (doc["endpoints"].get(endpoints) != simdjson::SUCCESS)
    return base::DataLossError(path + ": no endpoints object");
  if (endpoints["api"].get(v) == simdjson::SUCCESS) e.api = std::string(v);
  if (endpoints["metrics"].get(v) == simdjson::SUCCESS) e.metrics = std::string(v);
  if (endpoints["otlp_http"].get(v) == simdjson::SUCCESS) e.otlp_http = std::string(v);
  if (endpoints["ui"].get(v) == simdjson::SUCCESS) e.ui = std::string(v);
  if (auto token = base::ReadAccessToken(state_dir); token.ok())
    e.access_token = *token;
  else
    e.access_token_error = token.status().message();
  return e;
}

}  // namespace inferscope::net
