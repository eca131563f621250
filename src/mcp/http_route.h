// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The MCP tools over streamable HTTP on the agent's loopback listener: POST /mcp, one JSON-RPC
// request per body, a JSON answer (no SSE: every tool answers at once). The Origin header is
// checked against loopback (DNS rebinding), and when <state dir>/mcp.token exists every request
// must carry `Authorization: Bearer <its content>`.

#include <memory>
#include <string>

#include "src/server/http_server.h"

namespace inferscope::mcp {

inline constexpr const char* kMcpTokenFile = "mcp.token";

// Registers POST /mcp (and GET /mcp, answered 405: no server-initiated stream) on `server`,
// serving the store of `state_dir`.
void AddMcpRoute(server::HttpServer* server, const std::string& state_dir);

// Whether an Origin header value names a loopback origin (http(s)://127.0.0.1, localhost, [::1],
// any port). An absent Origin (non-browser clients) is allowed by the caller.
bool IsLoopbackOrigin(const std::string& origin);

}  // namespace inferscope::mcp
