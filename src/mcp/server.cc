// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/mcp/server.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <cstdlib>
#include <iostream>

#include "src/base/json_writer.h"

namespace inferscope::mcp {
namespace {

namespace dom = simdjson::dom;

constexpr std::array<std::string_view, 4> kLegacyVersions = {"2025-11-25", "2025-06-18",
                                                             "2025-03-26", "2024-11-05"};
constexpr const char* kMetaVersionKey = "io.modelcontextprotocol/protocolVersion";
constexpr const char* kInstructions =
    "inferscope: CUDA profiles of LLM inference. Call get_context first (one bounded text for a "
    "time range), then narrow with get_breakdown, get_findings, compare or get_timeseries.";

// JSON-RPC error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kHeaderMismatch = -32020;
constexpr int kUnsupportedVersion = -32022;

std::string ErrorReply(const std::string& id, int code, const std::string& message,
                       const std::string& data_json = "") {
  std::string out = "{\"jsonrpc\":\"2.0\",\"id\":" + id +
                    ",\"error\":{\"code\":" + std::to_string(code) +
                    ",\"message\":" + base::JsonWriter::Quote(message);
  if (!data_json.empty()) out += ",\"data\":" + data_json;
  return out + "}}";
}

std::string ResultReply(const std::string& id, const std::string& result_json) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":" + result_json + "}";
}

// `{... "resultType":"complete"}` for modern requests: the object with the key added at its end.
std::string Complete(std::string object, bool modern) {
  if (!modern) return object;
  object.pop_back();
  return object + (object.size() > 1 ? "," : "") + "\"resultType\":\"complete\"}";
}

std::string SupportedJson() {
  std::string out = "[\"" + std::string(kModernProtocol) + "\"";
  for (std::string_view v : kLegacyVersions) out += ",\"" + std::string(v) + "\"";
  return out + "]";
}

std::string ServerInfo(const std::string& version) {
  return "{\"name\":\"inferscope\",\"version\":" + base::JsonWriter::Quote(version) + "}";
}

std::string ToolResultJson(const ToolResult& r, bool modern) {
  std::string out =
      "{\"content\":[{\"type\":\"text\",\"text\":" + base::JsonWriter::Quote(r.text) + "}]";
  if (!r.structured.empty()) out += ",\"structuredContent\":" + r.structured;
  out += std::string(",\"isError\":") + (r.is_error ? "true" : "false") + "}";
  return Complete(out, modern);
}

}  // namespace

Server::Server(DataSource* source, std::string version)
    : tools_(source), version_(std::move(version)) {}

Reply Server::Handle(std::string_view message, const HttpMeta* http) {
  dom::parser parser;
  dom::element doc;
  if (parser.parse(message.data(), message.size()).get(doc) != simdjson::SUCCESS)
    return {ErrorReply("null", kParseError, "Parse error: the message is not valid JSON"), 400};
  dom::object request;
  if (doc.get(request) != simdjson::SUCCESS)
    return {ErrorReply("null", kInvalidRequest,
                       "Invalid Request: send one JSON-RPC 2.0 object (batches are not supported)"),
            400};
  dom::element id_element;
  const bool has_id = request["id"].get(id_element) == simdjson::SUCCESS && !id_element.is_null();
  const std::string id = has_id ? simdjson::to_string(id_element) : "null";
  std::string_view jsonrpc, method;
  if (request["jsonrpc"].get(jsonrpc) != simdjson::SUCCESS || jsonrpc != "2.0" ||
      request["method"].get(method) != simdjson::SUCCESS) {
    if (!has_id) {
      dom::element ignored;  // a response from the client (we never send requests): ignore
      if (request["result"].get(ignored) == simdjson::SUCCESS ||
          request["error"].get(ignored) == simdjson::SUCCESS)
        return {"", 202};
    }
    return {ErrorReply(id, kInvalidRequest,
                       "Invalid Request: needs \"jsonrpc\":\"2.0\" and a string \"method\""),
            400};
  }
  if (!has_id) return {"", 202};  // notifications (initialized, cancelled): nothing to answer

  dom::element params;
  const bool has_params = request["params"].get(params) == simdjson::SUCCESS;
  if (has_params && !params.is_object())
    return {ErrorReply(id, kInvalidParams, "Invalid params: params must be an object"), 400};

  // The era: a modern request names its protocol version in _meta.
  std::string_view meta_version;
  const bool modern =
      has_params && params["_meta"][kMetaVersionKey].get(meta_version) == simdjson::SUCCESS;
  if (modern && meta_version != kModernProtocol &&
      std::find(kLegacyVersions.begin(), kLegacyVersions.end(), meta_version) ==
          kLegacyVersions.end())
    return {ErrorReply(id, kUnsupportedVersion,
                       fmt::format("Unsupported protocol version {}", meta_version),
                       "{\"supported\":" + SupportedJson() + "}"),
            400};
  // Any era over HTTP: a protocol version header the server does not speak is a 400.
  if (http && http->protocol_version && *http->protocol_version != kModernProtocol &&
      std::find(kLegacyVersions.begin(), kLegacyVersions.end(), *http->protocol_version) ==
          kLegacyVersions.end())
    return {ErrorReply(id, kUnsupportedVersion,
                       "Unsupported MCP-Protocol-Version header " + *http->protocol_version,
                       "{\"supported\":" + SupportedJson() + "}"),
            400};
  if (http && modern) {
    if (http->protocol_version && *http->protocol_version != meta_version)
      return {ErrorReply(id, kHeaderMismatch,
                         "HeaderMismatch: MCP-Protocol-Version header differs from _meta"),
              400};
    if (!http->method || *http->method != method)
      return {ErrorReply(id, kHeaderMismatch,
                         "HeaderMismatch: the Mcp-Method header must name the method"),
              400};
  }

  if (method == "initialize") {
    std::string_view asked;
    std::string version = kLegacyProtocol;
    if (has_params && params["protocolVersion"].get(asked) == simdjson::SUCCESS &&
        std::find(kLegacyVersions.begin(), kLegacyVersions.end(), asked) != kLegacyVersions.end())
      version = std::string(asked);
    return {ResultReply(id, "{\"protocolVersion\":\"" + version +
                                "\",\"capabilities\":{\"tools\":{\"listChanged\":false}},"
                                "\"serverInfo\":" +
                                ServerInfo(version_) + ",\"instructions\":" +
                                base::JsonWriter::Quote(kInstructions) + "}")};
  }
  if (method == "server/discover")
    return {ResultReply(
        id, Complete("{\"supportedVersions\":" + SupportedJson() +
                         ",\"capabilities\":{\"tools\":{}},\"serverInfo\":" + ServerInfo(version_) +
                         ",\"instructions\":" + base::JsonWriter::Quote(kInstructions) + "}",
                     true))};
  if (method == "ping") return {ResultReply(id, Complete("{}", modern))};
  if (method == "tools/list") {
    std::string result = "{\"tools\":" + Tools::DefinitionsJson();
    if (modern) result += ",\"ttlMs\":3600000";
    return {ResultReply(id, Complete(result + "}", modern))};
  }
  if (method == "tools/call") {
    std::string_view name;
    if (!has_params || params["name"].get(name) != simdjson::SUCCESS)
      return {ErrorReply(id, kInvalidParams, "Invalid params: tools/call needs params.name"), 400};
    if (http && modern && (!http->name || *http->name != name))
      return {
          ErrorReply(id, kHeaderMismatch, "HeaderMismatch: the Mcp-Name header must name the tool"),
          400};
    if (!Tools::Has(name))
      return {ErrorReply(id, kInvalidParams,
                         fmt::format("Unknown tool: {}; tools are list_targets, get_context, "
                                     "get_breakdown, get_findings, compare, get_timeseries",
                                     name)),
              200};
    dom::element arguments;
    if (params["arguments"].get(arguments) != simdjson::SUCCESS) {
      // No arguments: every one is optional. An empty object from a tiny parser of our own.
      static const dom::element* kEmpty = [] {
        static dom::parser p;
        static dom::element e;
        if (p.parse(std::string("{}")).get(e) != simdjson::SUCCESS) std::abort();
        return &e;
      }();
      arguments = *kEmpty;
    }
    std::lock_guard<std::mutex> lock(mu_);
    return {ResultReply(id, ToolResultJson(tools_.Call(name, arguments), modern))};
  }
  return {ErrorReply(id, kMethodNotFound,
                     fmt::format("Method not found: {} (this server offers tools only: "
                                 "initialize, server/discover, ping, tools/list, tools/call)",
                                 method)),
          404};
}

int ServeStdio(Server* server, std::istream& in, std::ostream& out, std::ostream& log) {
  log << "inferscope mcp: serving on stdio (newline-delimited JSON-RPC)\n" << std::flush;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    Reply reply = server->Handle(line);
    if (reply.body.empty()) continue;
    out << reply.body << '\n' << std::flush;
  }
  log << "inferscope mcp: stdin closed, exiting\n";
  return 0;
}

}  // namespace inferscope::mcp
