// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/mcp/http_route.h"

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

}  // namespace

void AddMcpRoute(server::HttpServer* server, const std::string& state_dir) {
  struct State {
    std::unique_ptr<DataSource> source;
    std::unique_ptr<Server> server;
  };
  auto state = std::make_shared<State>();
  state->source = MakeStoreSource(state_dir);
  state->server = std::make_unique<Server>(state->source.get(), report::ToolVersion());
  // Origin, Host and the access token are checked before any route (server::AccessControl).
  server->Post("/mcp", [state](const server::HttpRequest& req) {
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
