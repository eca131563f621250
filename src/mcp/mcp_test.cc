// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The MCP server and tools without an SDK: the protocol of both eras, every tool on the bundled
// example trace and on the largest shared trace (budgets, truncation, errors), the Origin check and
// the range parser. The SDK client test (tests/mcp, ctest mcp_sdk_client) drives the same server
// over real transports.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "src/context/context.h"
#include "src/mcp/data_source.h"
#include "src/mcp/http_route.h"
#include "src/mcp/server.h"
#include "src/mcp/tools.h"
#include "tests/test_traces.h"

namespace inferscope::mcp {
namespace {

const std::string kExample = std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode";

// Parses a reply; fails the test on invalid JSON.
simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& json) {
  simdjson::dom::element e;
  EXPECT_EQ(parser.parse(json).get(e), simdjson::SUCCESS) << json;
  return e;
}

std::string Call(Server& server, const std::string& tool, const std::string& arguments) {
  return server
      .Handle(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":")" + tool +
              R"(","arguments":)" + arguments + "}}")
      .body;
}

TEST(McpToolsTest, DefinitionsAreSmallValidAndDeterministic) {
  const std::string& defs = Tools::DefinitionsJson();
  // All six together under 2,000 tokens at the conservative 3 bytes a token.
  EXPECT_LT(context::EstimateTokens(defs.size()), 2000u) << defs.size() << " bytes";
  simdjson::dom::parser parser;
  simdjson::dom::array tools;
  ASSERT_EQ(Parse(parser, defs).get(tools), simdjson::SUCCESS);
  std::vector<std::string> names;
  for (simdjson::dom::element t : tools) {
    std::string_view name;
    ASSERT_EQ(t["name"].get(name), simdjson::SUCCESS);
    names.emplace_back(name);
    EXPECT_TRUE(Tools::Has(name));
    simdjson::dom::element schema;
    EXPECT_EQ(t["inputSchema"].get(schema), simdjson::SUCCESS) << name;
    EXPECT_EQ(t["outputSchema"]["type"].get(schema), simdjson::SUCCESS) << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"list_targets", "get_context", "get_breakdown",
                                             "get_findings", "compare", "get_timeseries"}));
}

TEST(McpServerTest, LegacyHandshakeAndModernDiscover) {
  auto source = MakeTraceSource({kExample});
  Server server(source.get(), "9.9");
  simdjson::dom::parser parser;
  auto init = Parse(parser, server
                                .Handle(R"({"jsonrpc":"2.0","id":"a","method":"initialize",)"
                                        R"("params":{"protocolVersion":"2025-06-18"}})")
                                .body);
  std::string_view v;
  ASSERT_EQ(init["result"]["protocolVersion"].get(v), simdjson::SUCCESS);
  EXPECT_EQ(v, "2025-06-18");  // a supported legacy version is echoed
  ASSERT_EQ(init["id"].get(v), simdjson::SUCCESS);
  EXPECT_EQ(v, "a");
  // An unknown requested version gets the newest legacy one.
  auto init2 = Parse(parser, server
                                 .Handle(R"({"jsonrpc":"2.0","id":1,"method":"initialize",)"
                                         R"("params":{"protocolVersion":"1999-01-01"}})")
                                 .body);
  ASSERT_EQ(init2["result"]["protocolVersion"].get(v), simdjson::SUCCESS);
  EXPECT_EQ(v, kLegacyProtocol);
  EXPECT_TRUE(
      server.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").body.empty());
  auto discover = Parse(
      parser, server
                  .Handle(R"({"jsonrpc":"2.0","id":2,"method":"server/discover","params":)"
                          R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})")
                  .body);
  ASSERT_EQ(discover["result"]["resultType"].get(v), simdjson::SUCCESS);
  EXPECT_EQ(v, "complete");
  // Legacy results carry no resultType; modern ones do.
  std::string legacy_list = server.Handle(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})").body;
  EXPECT_EQ(legacy_list.find("resultType"), std::string::npos);
  std::string modern_list =
      server
          .Handle(R"({"jsonrpc":"2.0","id":4,"method":"tools/list","params":)"
                  R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})")
          .body;
  EXPECT_NE(modern_list.find(R"("resultType":"complete")"), std::string::npos);
  EXPECT_NE(modern_list.find(R"("ttlMs")"), std::string::npos);
}

TEST(McpServerTest, ProtocolErrors) {
  auto source = MakeTraceSource({kExample});
  Server server(source.get(), "9.9");
  EXPECT_NE(server.Handle("{not json").body.find("-32700"), std::string::npos);
  EXPECT_NE(server.Handle("[]").body.find("-32600"), std::string::npos);
  EXPECT_NE(server.Handle(R"({"jsonrpc":"1.0","id":1,"method":"ping"})").body.find("-32600"),
            std::string::npos);
  Reply unknown = server.Handle(R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})");
  EXPECT_NE(unknown.body.find("-32601"), std::string::npos);
  EXPECT_EQ(unknown.http_status, 404);
  EXPECT_NE(Call(server, "no_such_tool", "{}").find("-32602"), std::string::npos);
  Reply version = server.Handle(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":)"
                                R"({"io.modelcontextprotocol/protocolVersion":"2030-01-01"}}})");
  EXPECT_NE(version.body.find("-32022"), std::string::npos);
  EXPECT_NE(version.body.find(R"("supported":["2026-07-28")"), std::string::npos);
  // HTTP: the required headers of 2026-07-28 must match the body.
  HttpMeta meta;
  meta.protocol_version = "2026-07-28";
  meta.method = "tools/call";
  Reply no_name = server.Handle(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_findings","_meta":)"
      R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})",
      &meta);
  EXPECT_EQ(no_name.http_status, 400);
  EXPECT_NE(no_name.body.find("-32020"), std::string::npos);
  meta.name = "get_findings";
  Reply ok = server.Handle(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_findings","_meta":)"
      R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})",
      &meta);
  EXPECT_EQ(ok.http_status, 200);
  EXPECT_NE(ok.body.find("launch_overhead"), std::string::npos);
  // A legacy request over HTTP with a version header the server does not speak.
  HttpMeta legacy;
  legacy.protocol_version = "1999-01-01";
  Reply bad_header = server.Handle(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", &legacy);
  EXPECT_EQ(bad_header.http_status, 400);
  EXPECT_NE(bad_header.body.find("-32022"), std::string::npos);
  legacy.protocol_version = "2025-11-25";
  EXPECT_EQ(server.Handle(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", &legacy).http_status, 200);
  // Replies never hold a newline (stdio frames).
  EXPECT_EQ(ok.body.find('\n'), std::string::npos);
}

// Every tool on `paths`: valid JSON, within budget, and errors that say how to fix the call.
void CheckEveryTool(const std::vector<std::string>& paths) {
  auto source = MakeTraceSource(paths);
  Server server(source.get(), "9.9");
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"list_targets", "{}"},
      {"get_context", "{}"},
      {"get_context", R"({"budget":300})"},
      {"get_breakdown", R"({"group_by":"kernel","top_n":100})"},
      {"get_breakdown", R"({"group_by":"subcategory"})"},
      {"get_breakdown", R"({"group_by":"rank"})"},
      {"get_findings", "{}"},
      {"get_timeseries", R"({"metric":"busy_pct"})"},
      {"get_timeseries", R"({"step":"1ns"})"},
  };
  simdjson::dom::parser parser;
  for (const auto& [tool, args] : calls) {
    const std::string reply = Call(server, tool, args);
    auto doc = Parse(parser, reply);
    bool is_error = true;
    ASSERT_EQ(doc["result"]["isError"].get(is_error), simdjson::SUCCESS) << reply.substr(0, 500);
    EXPECT_FALSE(is_error) << tool << " " << args << ": " << reply.substr(0, 500);
    simdjson::dom::element structured;
    ASSERT_EQ(doc["result"]["structuredContent"].get(structured), simdjson::SUCCESS);
    const size_t bytes = simdjson::to_string(structured).size();
    if (tool == "get_context") {
      std::string_view text;
      ASSERT_EQ(structured["text"].get(text), simdjson::SUCCESS);
      const int64_t budget = args.find("300") != std::string::npos ? 300 : 6000;
      EXPECT_LE(text.size(), static_cast<size_t>(budget) * context::kBytesPerToken) << args;
    } else {
      EXPECT_LE(bytes, kToolBudgetBytes) << tool << " " << args;
    }
    // The whole result (text + structured) stays far below clients' 25,000-token cap.
    EXPECT_LT(context::EstimateTokens(reply.size()), 25000u) << tool;
  }
  // Errors say how to fix the call.
  EXPECT_NE(Call(server, "get_breakdown", R"({"top_n":1000000})").find("top_n must be an integer"),
            std::string::npos);
  EXPECT_NE(Call(server, "get_context", R"({"budget":"big"})").find("budget must be"),
            std::string::npos);
  EXPECT_NE(Call(server, "get_context", R"({"filters":{"gpu":1}})").find("unknown key 'gpu'"),
            std::string::npos);
  EXPECT_NE(Call(server, "get_timeseries", R"({"metric":"bogus"})").find("metric must be"),
            std::string::npos);
  EXPECT_NE(Call(server, "compare", "{}").find("inferscope diff"), std::string::npos);
  EXPECT_NE(Call(server, "get_findings", R"({"filters":{"rank":999}})").find("No data"),
            std::string::npos);
}

TEST(McpToolsTest, EveryToolOnTheExampleTrace) { CheckEveryTool({kExample}); }

TEST(McpToolsTest, EveryToolWithinBudgetOnTheLargestSharedTrace) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  std::string largest;
  uintmax_t largest_bytes = 0;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(inferscope::testing::SharedTracesDir(), ec)) {
    const std::string p = e.path().string();
    const bool trace = p.ends_with(".json.gz") || p.ends_with(".json") || p.ends_with(".sqlite");
    if (!e.is_regular_file() || !trace) continue;
    if (e.file_size() > largest_bytes) {
      largest_bytes = e.file_size();
      largest = p;
    }
  }
  if (largest.empty()) GTEST_SKIP() << "no trace file in the shared traces";
  SCOPED_TRACE(largest);
  CheckEveryTool({largest});
}

TEST(McpHttpTest, OnlyLoopbackOrigins) {
  EXPECT_TRUE(IsLoopbackOrigin("http://127.0.0.1:9470"));
  EXPECT_TRUE(IsLoopbackOrigin("http://localhost"));
  EXPECT_TRUE(IsLoopbackOrigin("https://[::1]:8080"));
  EXPECT_FALSE(IsLoopbackOrigin("http://127.0.0.1.evil.com"));
  EXPECT_FALSE(IsLoopbackOrigin("http://localhost.evil.com:80"));
  EXPECT_FALSE(IsLoopbackOrigin("https://example.com"));
  EXPECT_FALSE(IsLoopbackOrigin("null"));
  EXPECT_FALSE(IsLoopbackOrigin("http://localhost:80x"));
}

TEST(McpRangeTest, ResolvesAndExplains) {
  constexpr int64_t kNow = 1'800'000'000'000'000'000;
  auto r = ResolveRange({}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->from_ns, kNow - 15LL * 60 * 1'000'000'000);
  EXPECT_TRUE(r->open_ended);
  r = ResolveRange({"", "-2h", "-1h"}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->to_ns - r->from_ns, 3600LL * 1'000'000'000);
  EXPECT_FALSE(r->open_ended);
  auto bad = ResolveRange({"soon", "", ""}, kNow);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("range.last"), std::string::npos);
  EXPECT_FALSE(ResolveRange({"1h", "-2h", ""}, kNow).ok());
  EXPECT_FALSE(ResolveRange({"", "-1h", "-2h"}, kNow).ok());
}

TEST(McpMinifyTest, KeepsStringsIntact) {
  EXPECT_EQ(MinifyJson("{\n  \"a b\": [1, 2],\n  \"c\": \"x \\\" y\"\n}"),
            "{\"a b\":[1,2],\"c\":\"x \\\" y\"}");
}

}  // namespace
}  // namespace inferscope::mcp
