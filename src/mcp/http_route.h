// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The MCP tools over streamable HTTP on the agent's loopback listener: POST /mcp, one JSON-RPC
// request per body, a JSON answer (no SSE: every tool answers at once). Host, Origin and the
// agent's access token are checked before the route, as for every route of the listener
// (server::AccessControl, docs/agent.md "Access").

#include <memory>
#include <string>

#include "src/server/http_server.h"

namespace inferscope::mcp {

// Registers POST /mcp (and GET /mcp, answered 405: no server-initiated stream) on `server`,
// serving the store of `state_dir`.
void AddMcpRoute(server::HttpServer* server, const std::string& state_dir);

}  // namespace inferscope::mcp
