// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The MCP server and tools without an SDK: the protocol of both eras, every tool on the bundled
// example trace and on the largest shared trace (budgets, truncation, errors), and
// the range parser. The SDK client test (tests/mcp, ctest mcp_sdk_client) drives the same server
// over real transports.

#include <fmt/format.h>
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
#include "src/store/sqlite_store.h"
#include "src/store/test_rollup_windows.h"
#include "src/wire/test_frames.h"
#include "tests/temp_dir.h"
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

// A store holding two runs of rank 0 (pid 101, then its restart pid 201) in the last hour: the
// tools answer from the latest run only and say that the earlier one was left out, as `report`.
TEST(McpStoreTest, ARestartIsTwoRunsNotTwoRanks) {
  constexpr int64_t kSec = store::testing::kSec, kMin = 60 * kSec;
  constexpr int64_t kNow = 1'800'000'000 * kSec;
  inferscope::testing::TempDir dir;
  {
    auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    int index = 0;
    for (const auto& [pid, start] : {std::pair<uint32_t, int64_t>{101, kNow - 50 * kMin},
                                     std::pair<uint32_t, int64_t>{201, kNow - 25 * kMin}}) {
      wire::Hello hello = wire::testing::MakeHello(pid, 0);
      hello.process_start_unix_ns = start;
      auto id = (*store)->UpsertProcess(hello, start);
      ASSERT_TRUE(id.ok());
      for (int i = 0; i < 5; ++i) {
        const int64_t t = start + (i + 1) * kMin;
        model::ProfileWindow w = store::testing::RollupTestWindow(pid, 0, t, index++);
        ASSERT_TRUE((*store)->AppendWindow(store::testing::PendingOf(*id, w, t + 11 * kSec)).ok());
      }
    }
  }
  auto source = MakeStoreSource(dir.path(), kNow);
  Server server(source.get(), "9.9");
  const std::string context = Call(server, "get_context", R"({"range":{"from":"-1h"}})");
  EXPECT_NE(context.find("warning: the range spans 2 runs"), std::string::npos) << context;
  EXPECT_NE(context.find("pid 101, rank 0 on node-a, started"), std::string::npos) << context;
  const std::string targets = Call(server, "list_targets", R"({"range":{"from":"-1h"}})");
  EXPECT_EQ(targets.find(R"(\"pid\":101)"), std::string::npos) << targets;
  EXPECT_NE(targets.find(R"(\"pid\":201)"), std::string::npos) << targets;
}

// A store whose windows carry NVTX range tables (`run --nvtx`), in four hours: -4h long names,
// -3h without ranges, -2h the baseline and -1h the candidate, five 10 s windows each
// (store::testing's rollup windows, one process).
class McpCompareRangesTest : public ::testing::Test {
 protected:
  static constexpr int64_t kSec = store::testing::kSec;
  static constexpr int64_t kHour = 3600 * kSec;
  static constexpr int64_t kMs = 1'000'000;
  static constexpr int64_t kNow = 1'800'000'000 * kSec;

  static model::RangeStats Row(const std::string& name, int64_t count, int64_t host_each_ns,
                               int64_t gpu_ns) {
    model::RangeStats r;
    r.name = name;
    for (int64_t i = 0; i < count; ++i) r.duration.Add(host_each_ns);
    r.gpu_ops = static_cast<uint64_t>(count) * 2;
    r.gpu_time_ns = gpu_ns;
    return r;
  }

  void SetUp() override {
    auto store = store::SqliteStore::Open(dir_.path(), store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    auto id = (*store)->UpsertProcess(wire::testing::MakeHello(100, 0), kNow - 4 * kHour);
    ASSERT_TRUE(id.ok());
    // Per window. Baseline: forward (2 x 1.5 ms, 1 ms of GPU), sample (gone in the candidate),
    // and a tail. Candidate: forward with 3 ms of GPU and twelve new names r00..r11 with
    // 0.1..1.2 ms of GPU: 14 names, so the top 10 by |GPU change| and four in `other`.
    model::RangeTable a, b;
    a.rows = {Row("forward", 2, 1'500'000, 1 * kMs), Row("sample", 1, 1 * kMs, 450'000)};
    a.tail.duration.Add(100'000);
    a.tail.gpu_ops = 1;
    a.tail.gpu_time_ns = 10'000;
    a.tail_names = 1;
    b.rows = {Row("forward", 2, 1'500'000, 3 * kMs)};
    for (int i = 0; i < 12; ++i)
      b.rows.push_back(Row(fmt::format("r{:02}", i), 1, 1 * kMs, (i + 1) * 100'000));
    // -4h: twelve names of 1,500 bytes, too long for ten rows in the result budget.
    model::RangeTable c;
    for (int i = 0; i < 12; ++i)
      c.rows.push_back(
          Row(std::string(1500, 'x') + fmt::format("{:02}", i), 1, 1 * kMs, (i + 1) * 100'000));
    int index = 0;
    for (const auto& [start, table] :
         {std::pair{kNow - 4 * kHour, c}, std::pair{kNow - 3 * kHour, model::RangeTable{}},
          std::pair{kNow - 2 * kHour, a}, std::pair{kNow - 1 * kHour, b}}) {
      for (int i = 0; i < 5; ++i) {
        const int64_t t = start + i * 60 * kSec;
        model::ProfileWindow w = store::testing::RollupTestWindow(100, 0, t, index++);
        w.processes[0].ranges = table;  // the template's own table replaced
        ASSERT_TRUE((*store)->AppendWindow(store::testing::PendingOf(*id, w, t + 11 * kSec)).ok());
      }
    }
  }

  // The structured result of compare over the half hours from `a` and `b` ("-2h": -2h..-90m).
  std::string Compare(int a_hours, int b_hours) {
    auto source = MakeStoreSource(dir_.path(), kNow);
    Server server(source.get(), "9.9");
    auto range = [](int h) {
      return fmt::format(R"({{"from":"-{}h","to":"-{}m"}})", h, h * 60 - 30);
    };
    const std::string reply =
        Call(server, "compare",
             R"({"range_a":)" + range(a_hours) + R"(,"range_b":)" + range(b_hours) + "}");
    simdjson::dom::parser parser;
    simdjson::dom::element structured;
    EXPECT_EQ(Parse(parser, reply)["result"]["structuredContent"].get(structured),
              simdjson::SUCCESS)
        << reply.substr(0, 500);
    return simdjson::to_string(structured);
  }

  inferscope::testing::TempDir dir_;
};

TEST_F(McpCompareRangesTest, RangeTableLikeDiff) {
  const std::string json = Compare(2, 1);
  EXPECT_LE(json.size(), kToolBudgetBytes);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, json), ranges;
  ASSERT_EQ(doc["ranges"].get(ranges), simdjson::SUCCESS) << json;
  simdjson::dom::array rows;
  ASSERT_EQ(ranges["rows"].get(rows), simdjson::SUCCESS) << json;
  ASSERT_EQ(rows.size(), 10u) << json;  // the top 10 of 14 names
  std::vector<std::string> names, statuses;
  for (simdjson::dom::element r : rows) {
    std::string_view name, status;
    ASSERT_EQ(r["range"].get(name), simdjson::SUCCESS);
    ASSERT_EQ(r["status"].get(status), simdjson::SUCCESS);
    names.emplace_back(name);
    statuses.emplace_back(status);
  }
  // By |GPU time change|: forward +10 ms, r11..r04 +6..+2.5 ms, sample -2.25 ms.
  EXPECT_EQ(names, (std::vector<std::string>{"forward", "r11", "r10", "r09", "r08", "r07", "r06",
                                             "r05", "r04", "sample"}));
  EXPECT_EQ(statuses, (std::vector<std::string>{"changed", "new", "new", "new", "new", "new", "new",
                                                "new", "new", "gone"}));
  auto integer = [](simdjson::dom::element e, const char* key) {
    int64_t v = -1;
    EXPECT_EQ(e[key].get(v), simdjson::SUCCESS) << key;
    return v;
  };
  simdjson::dom::element forward = rows.at(0), sample = rows.at(9), r11 = rows.at(1);
  EXPECT_EQ(integer(forward, "a_count"), 10);  // 2 a window, 5 windows
  EXPECT_EQ(integer(forward, "b_count"), 10);
  EXPECT_EQ(integer(forward, "a_host_ns"), 15 * kMs);
  EXPECT_EQ(integer(forward, "a_gpu_time_ns"), 5 * kMs);
  EXPECT_EQ(integer(forward, "b_gpu_time_ns"), 15 * kMs);
  EXPECT_EQ(integer(forward, "delta_gpu_time_ns"), 10 * kMs);
  double a_pct = 0, b_pct = 0;
  ASSERT_EQ(forward["a_gpu_pct"].get(a_pct), simdjson::SUCCESS);
  ASSERT_EQ(forward["b_gpu_pct"].get(b_pct), simdjson::SUCCESS);
  EXPECT_GT(a_pct, 0);
  EXPECT_NEAR(b_pct / a_pct, 3.0, 0.01);  // equal GPU spans (the windows differ by a few ns)
  EXPECT_EQ(integer(sample, "a_count"), 5);
  EXPECT_EQ(integer(sample, "b_count"), 0);
  EXPECT_EQ(integer(sample, "delta_gpu_time_ns"), -2'250'000);
  EXPECT_EQ(integer(r11, "a_count"), 0);
  EXPECT_EQ(integer(r11, "b_gpu_time_ns"), 6 * kMs);
  // r03..r00 (2 + 1.5 + 1 + 0.5 ms, 20 instances) and the baseline's tail in `other`.
  simdjson::dom::element other;
  ASSERT_EQ(ranges["other"].get(other), simdjson::SUCCESS);
  EXPECT_EQ(integer(other, "names"), 4);
  bool tails = false;
  ASSERT_EQ(other["tails"].get(tails), simdjson::SUCCESS);
  EXPECT_TRUE(tails);
  EXPECT_EQ(integer(other, "a_count"), 5);
  EXPECT_EQ(integer(other, "a_gpu_time_ns"), 50'000);
  EXPECT_EQ(integer(other, "b_count"), 20);
  EXPECT_EQ(integer(other, "b_gpu_time_ns"), 5 * kMs);
  EXPECT_EQ(integer(other, "delta_gpu_time_ns"), 5 * kMs - 50'000);
  // The baseline has a tail, so a new name may have run there too: the note says so.
  EXPECT_NE(json.find("may have run on the other side too"), std::string::npos) << json;
  bool truncated = true;
  ASSERT_EQ(doc["truncated"].get(truncated), simdjson::SUCCESS);
  EXPECT_FALSE(truncated);

  // The other way round the same table, mirrored: sample is new, forward's change negative.
  const std::string back = Compare(1, 2);
  simdjson::dom::parser parser2;
  simdjson::dom::element rev = Parse(parser2, back);
  ASSERT_EQ(rev["ranges"]["rows"].get(rows), simdjson::SUCCESS) << back;
  EXPECT_EQ(integer(rows.at(0), "delta_gpu_time_ns"), -10 * kMs);
  std::string_view status;
  ASSERT_EQ(rows.at(9)["status"].get(status), simdjson::SUCCESS);
  EXPECT_EQ(status, "new");
}

TEST_F(McpCompareRangesTest, OneSidedAndNoRanges) {
  // Neither side recorded ranges: no `ranges` key at all.
  const std::string none = Compare(3, 3);
  EXPECT_EQ(none.find("\"ranges\""), std::string::npos) << none;
  EXPECT_NE(none.find("\"kernels\""), std::string::npos) << none;
  // Only the candidate did: one note, no rows.
  const std::string one = Compare(3, 2);
  simdjson::dom::parser parser;
  simdjson::dom::element ranges;
  ASSERT_EQ(Parse(parser, one)["ranges"].get(ranges), simdjson::SUCCESS) << one;
  simdjson::dom::element rows;
  EXPECT_NE(ranges["rows"].get(rows), simdjson::SUCCESS) << one;
  simdjson::dom::array notes;
  ASSERT_EQ(ranges["notes"].get(notes), simdjson::SUCCESS) << one;
  ASSERT_EQ(notes.size(), 1u) << one;
  std::string_view note;
  ASSERT_EQ(notes.at(0).get(note), simdjson::SUCCESS);
  EXPECT_NE(note.find("only the candidate recorded them"), std::string::npos) << note;
}

// Range names so long that ten rows overflow the result budget: kernels go first, then range
// rows, which join `other` (the totals stay whole) and the hint says so.
TEST_F(McpCompareRangesTest, LongRangeNamesStayWithinTheBudget) {
  const std::string json = Compare(2, 4);
  EXPECT_LE(json.size(), kToolBudgetBytes);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, json);
  simdjson::dom::array kernels, rows;
  ASSERT_EQ(doc["kernels"].get(kernels), simdjson::SUCCESS);
  EXPECT_EQ(kernels.size(), 0u);
  ASSERT_EQ(doc["ranges"]["rows"].get(rows), simdjson::SUCCESS) << json.substr(0, 2000);
  EXPECT_GT(rows.size(), 0u);
  EXPECT_LT(rows.size(), 10u);
  int64_t a_count = 0, b_count = 0, b_gpu = 0, names = 0;
  // Adds a row's (or `other`'s) figures to the totals; false when one is missing.
  auto add = [&](simdjson::dom::element r) {
    int64_t a = 0, b = 0, gpu = 0;
    if (r["a_count"].get(a) || r["b_count"].get(b) || r["b_gpu_time_ns"].get(gpu)) return false;
    a_count += a;
    b_count += b;
    b_gpu += gpu;
    return true;
  };
  for (simdjson::dom::element r : rows) ASSERT_TRUE(add(r)) << simdjson::to_string(r);
  simdjson::dom::element other = doc["ranges"]["other"];
  ASSERT_TRUE(add(other)) << simdjson::to_string(other);
  ASSERT_EQ(other["names"].get(names), simdjson::SUCCESS);
  EXPECT_EQ(static_cast<size_t>(names), 14 - rows.size());
  EXPECT_EQ(a_count, 20);              // forward 10, sample 5, the tail 5
  EXPECT_EQ(b_count, 60);              // 12 names, once a window
  EXPECT_EQ(b_gpu, 5 * 78 * 100'000);  // 5 windows x (1 + ... + 12) x 0.1 ms
  bool truncated = false;
  ASSERT_EQ(doc["truncated"].get(truncated), simdjson::SUCCESS);
  EXPECT_TRUE(truncated);
  std::string_view hint;
  ASSERT_EQ(doc["hint"].get(hint), simdjson::SUCCESS);
  EXPECT_NE(hint.find("NVTX range rows cut into ranges.other"), std::string::npos) << hint;
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
