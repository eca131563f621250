// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Adapter: a running agent as a DataSource, through GET /api/v1/profile (docs/agent.md).

#include <httplib.h>
#include <simdjson.h>

#include <algorithm>
#include <string>

#include "src/mcp/data_source.h"

namespace inferscope::mcp {
namespace {

constexpr int kAgentTop = 15;  // query::RangeQuery's default; this file does not link the agent

// Splits "http://host:port/path" into the origin cpp-httplib connects to and the path prefix.
bool SplitUrl(const std::string& url, std::string* origin, std::string* path) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return false;
  const size_t slash = url.find('/', scheme + 3);
  *origin = url.substr(0, slash);
  *path = slash == std::string::npos ? "" : url.substr(slash);
  while (!path->empty() && path->back() == '/') path->pop_back();
  return origin->size() > scheme + 3;
}

// The API's `{"error": ..., "range_holds": [...]}` as one message.
std::string ErrorText(const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body).get(doc) != simdjson::SUCCESS) return body.substr(0, 200);
  std::string_view error;
  std::string out = doc["error"].get(error) == simdjson::SUCCESS ? std::string(error) : "error";
  simdjson::dom::array holds;
  if (doc["range_holds"].get(holds) == simdjson::SUCCESS) {
    out += "; the range holds:";
    for (simdjson::dom::element line : holds) {
      std::string_view s;
      if (line.get(s) == simdjson::SUCCESS) out += " [" + std::string(s) + "]";
    }
  }
  return out;
}

class AgentSource : public DataSource {
 public:
  AgentSource(std::string url, std::string token)
      : url_(std::move(url)), token_(std::move(token)) {}

  std::string Describe() const override { return "agent:" + url_; }
  bool HasTimeRanges() const override { return true; }

  base::StatusOr<std::string> ProfileJson(const ProfileRequest& request) override {
    std::string origin, prefix;
    if (!SplitUrl(url_, &origin, &prefix))
      return base::InvalidArgumentError("--url " + url_ + ": use http://HOST:PORT");
    if (prefix.size() < 7 || prefix.compare(prefix.size() - 7, 7, "/api/v1") != 0)
      prefix += "/api/v1";
    httplib::Params params;
    const Range& r = request.range;
    if (!r.last.empty() && (!r.from.empty() || !r.to.empty()))
      return base::InvalidArgumentError("range: give either last or from/to, not both");
    if (r.from.empty() && r.to.empty())
      params.emplace("last", r.last.empty() ? kDefaultLast : r.last);
    if (!r.from.empty()) params.emplace("from", r.from);
    if (!r.to.empty()) params.emplace("to", r.to);
    if (request.filters.pid) params.emplace("pid", std::to_string(*request.filters.pid));
    if (request.filters.rank) params.emplace("rank", std::to_string(*request.filters.rank));
    if (request.filters.device) params.emplace("device", std::to_string(*request.filters.device));
    // The agent's default top-K is what its rollup tiers hold (see data_source_store.cc).
    params.emplace("top", std::to_string(std::min(request.top, kAgentTop)));
    params.emplace("format", "json");
    httplib::Client client(origin);
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(30, 0);
    httplib::Headers headers;
    if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
    httplib::Result result = client.Get(prefix + "/profile", params, headers);
    if (!result)
      return base::UnavailableError("GET " + url_ + prefix +
                                    "/profile: " + httplib::to_string(result.error()) +
                                    " (is the agent running? `inferscope status`)");
    if (result->status == 200) return result->body;
    if (result->status == 404) return base::NotFoundError(ErrorText(result->body));
    if (result->status == 400) return base::InvalidArgumentError(ErrorText(result->body));
    return base::UnavailableError("agent answered HTTP " + std::to_string(result->status) + ": " +
                                  ErrorText(result->body));
  }

 private:
  std::string url_, token_;
};

}  // namespace

std::unique_ptr<DataSource> MakeAgentSource(const std::string& url,
                                            const std::string& bearer_token) {
  return std::make_unique<AgentSource>(url, bearer_token);
}

}  // namespace inferscope::mcp
