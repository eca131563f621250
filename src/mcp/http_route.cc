// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/mcp/http_route.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "src/base/json_writer.h"
#include "src/mcp/data_source.h"
#include "src/mcp/server.h"
#include "src/report/report.h"

namespace inferscope::mcp {
namespace {

server::HttpResponse JsonRpcError(int status, int code, const std::string& message) {
  server::HttpResponse r;
  r.status = status;
  r.body = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":" + std::to_string(code) +
           ",\"message\":" + base::JsonWriter::Quote(message) + "}}";
  return r;
}

// The token of <state dir>/mcp.token, whitespace trimmed; "" when there is none.
std::string ReadToken(const std::string& state_dir) {
  std::ifstream in(state_dir + "/" + kMcpTokenFile);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  size_t start = 0;
  while (start < token.size() && std::isspace(static_cast<unsigned char>(token[start]))) ++start;
  return token.substr(start);
}

// Constant-time comparison: the token check does not leak how many bytes matched.
bool SameToken(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

bool IsLoopbackOrigin(const std::string& origin) {
  for (const char* scheme : {"http://", "https://"}) {
    const std::string s = scheme;
    if (origin.compare(0, s.size(), s) != 0) continue;
    std::string host = origin.substr(s.size());
    if (!host.empty() && host.back() == '/') host.pop_back();
    if (host.compare(0, 5, "[::1]") == 0) {
      host = host.substr(5);
    } else {
      const size_t colon = host.find(':');
      const std::string name = host.substr(0, colon);
      if (name != "127.0.0.1" && name != "localhost") return false;
      host = colon == std::string::npos ? "" : host.substr(colon);
    }
    if (host.empty()) return true;
    if (host[0] != ':' || host.size() < 2) return false;
    for (size_t i = 1; i < host.size(); ++i)
      if (!std::isdigit(static_cast<unsigned char>(host[i]))) return false;
    return true;
  }
  return false;
}

void AddMcpRoute(server::HttpServer* server, const std::string& state_dir) {
  struct State {
    std::unique_ptr<DataSource> source;
    std::unique_ptr<Server> server;
  };
  auto state = std::make_shared<State>();
  state->source = MakeStoreSource(state_dir);
  state->server = std::make_unique<Server>(state->source.get(), report::ToolVersion());
  server->Post("/mcp", [state, state_dir](const server::HttpRequest& req) {
    if (const std::string* origin = req.Header("origin"); origin && !IsLoopbackOrigin(*origin))
      return JsonRpcError(403, -32600, "Forbidden: Origin " + *origin + " is not loopback");
    if (const std::string token = ReadToken(state_dir); !token.empty()) {
      const std::string* auth = req.Header("authorization");
      if (auth == nullptr || !SameToken(*auth, "Bearer " + token)) {
        server::HttpResponse r =
            JsonRpcError(401, -32600,
                         "Unauthorized: send Authorization: Bearer <the content of " + state_dir +
                             "/" + kMcpTokenFile + ">");
        return r;
      }
    }
    HttpMeta meta;
    if (const std::string* v = req.Header("mcp-protocol-version")) meta.protocol_version = *v;
    if (const std::string* v = req.Header("mcp-method")) meta.method = *v;
    if (const std::string* v = req.Header("mcp-name")) meta.name = *v;
    Reply reply = state->server->Handle(req.body, &meta);
    server::HttpResponse r;
    r.status = reply.http_status;
    if (reply.body.empty()) {  // a notification or a client's response: accepted, no body
      r.status = 202;
      r.content_type = "text/plain";
      return r;
    }
    r.body = reply.body;
    return r;
  });
  server->Get("/mcp", [](const server::HttpRequest&) {
    return JsonRpcError(405, -32601,
                        "Method Not Allowed: this server sends no stream; POST JSON-RPC requests");
  });
}

}  // namespace inferscope::mcp
