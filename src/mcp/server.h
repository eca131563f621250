// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The MCP server, tools only (docs/agent.md, "MCP"): JSON-RPC 2.0 messages in, replies out, for
// both protocol eras. Legacy clients (2025-11-25 and earlier) do the initialize handshake; modern
// ones (2026-07-28) are stateless: every request carries `_meta` with its protocol version, the
// server answers `server/discover`, and every result carries `resultType`. One Server serves the
// stdio loop or the HTTP route; it holds no session state, so both eras mix freely.

#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "src/mcp/data_source.h"
#include "src/mcp/tools.h"

namespace inferscope::mcp {

inline constexpr const char* kModernProtocol = "2026-07-28";
inline constexpr const char* kLegacyProtocol = "2025-11-25";

// The headers of a streamable-HTTP request that the protocol checks (absent on stdio).
struct HttpMeta {
  std::optional<std::string> protocol_version;  // MCP-Protocol-Version
  std::optional<std::string> method;            // Mcp-Method
  std::optional<std::string> name;              // Mcp-Name
};

struct Reply {
  std::string body;  // one JSON-RPC response, no newline; empty for a notification
  int http_status = 200;
};

class Server {
 public:
  Server(DataSource* source, std::string version);

  // Handles one message. `http` is set for the HTTP transport (header checks, status codes).
  // Thread-safe: tool calls are serialized.
  Reply Handle(std::string_view message, const HttpMeta* http = nullptr);

 private:
  Tools tools_;
  std::string version_;
  std::mutex mu_;
};

// The stdio transport: newline-delimited JSON-RPC on `in`/`out`, logs on `log`, until EOF.
// Returns 0.
int ServeStdio(Server* server, std::istream& in, std::ostream& out, std::ostream& log);

}  // namespace inferscope::mcp
