// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/context/context.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "src/context/report_view.h"

namespace inferscope::context {
namespace {

// A report JSON (docs/report-schema.md keys the view reads) with `kernels` kernels per rank on
// two hosts; kernel i takes (kernels - i) ms, so the order and every share are known.
std::string Report(int kernels) {
  std::string ranks;
  for (int r = 0; r < 2; ++r) {
    std::string top;
    int64_t total = 0;
    for (int i = 0; i < kernels; ++i) {
      const int64_t ns = static_cast<int64_t>(kernels - i) * 1'000'000;
      total += ns;
      top += fmt::format(
          R"({}{{"name":"k{}","display_name":"kernel_{}","category":"{}","total_ns":{},"count":10}})",
          i ? "," : "", i, i, i % 2 ? "matmul" : "attention", ns);
    }
    const int64_t other = 5'000'000;  // outside the top list
    total += other;
    ranks += fmt::format(
        R"({}{{"rank":{},"pid":{},"device":{},"hostname":"node-{}","device_name":"H100",)"
        R"("temporal_breakdown":{{"span_ns":{},"busy_ns":{},"idle_ns":{},"compute_ns":{}}},)"
        R"("kernel_time_ns":{},"kernel_count":{},)"
        R"("categories":{{"attention":{{"time_ns":{}}},"matmul":{{"time_ns":{}}}}},)"
        R"("top_kernels":[{}],"other_kernels":{{"total_ns":{},"distinct_names":3}},)"
        R"("idle_causes":{{"intervals":3,"launch":{{"total_ns":1000000,"pct":50}},"sync":{{"total_ns":1000000,"pct":50}}}},)"
        R"("sync_waits":{{"stream":{{"count":2,"total_ns":500,"max_ns":300,"waited_on":[{{"display_name":"[memcpy dtoh]"}}]}}}},)"
        R"("data_quality":{{"records_dropped":{}}},"timeline":{{"bin_ns":1000,"origin_ns":0,"bins":[]}}}})",
        r ? "," : "", r, 100 + r, r, r ? "b" : "a", total + 2'000'000, total, 2'000'000, total,
        total, kernels * 10, total / 2, total - total / 2, top, other, r);
  }
  return fmt::format(
      R"({{"schema_version":1,"inputs":[{{"path":"t.json"}}],"range":null,)"
      R"("diagnosis":{{"primary":"launch_overhead","findings":[{{"id":"launch_overhead",)"
      R"("severity":"warning","confidence":0.75,"score":0.19,"summary":"GPU idle 19%",)"
      R"("rank":-1,"evidence":[{{"name":"busy_pct","value":45.9,"unit":"%"}}],"fixes":["Use CUDA graphs"]}}]}},)"
      R"("ranks":[{}],"gpu_metrics":null,"engine":null,"requests":null}})",
      ranks);
}

TEST(ContextTest, FullTextHasEverySectionInOrder) {
  auto view = ParseReport(Report(5), "", "");
  ASSERT_TRUE(view.ok()) << view.status().message();
  ContextOptions options;
  options.source = "traces:t.json";
  options.command = "inferscope context";
  ContextResult r = RenderContext(*view, options);
  EXPECT_FALSE(r.truncated);
  const char* kOrder[] = {"## What was profiled", "## Diagnosis",    "## GPU time by category",
                          "## Top kernels",       "## Per rank",     "## Why the GPU was idle",
                          "## Host sync waits",   "## Data quality", "## Tags"};
  size_t at = 0;
  for (const char* section : kOrder) {
    const size_t found = r.text.find(section);
    ASSERT_NE(found, std::string::npos) << section << "\n" << r.text;
    EXPECT_GT(found, at) << section;
    at = found;
  }
  EXPECT_NE(r.text.find("launch_overhead"), std::string::npos);
  EXPECT_NE(r.text.find("2 host(s) [node-a, node-b]"), std::string::npos) << r.text;
  // records_dropped is 1 on rank 1 only.
  EXPECT_NE(r.text.find("- records_dropped: 1"), std::string::npos) << r.text;
  // Kernels outside the top lists: 2 x 5 ms of 2 x (15 + 5) ms = 25%.
  EXPECT_NE(r.text.find("10.0 ms, 25.0% of GPU time"), std::string::npos) << r.text;
}

TEST(ContextTest, PhasesAreOneLineSummedOverRanks) {
  // Each of the two ranks: 2 prefill steps (20 ms of steps, 18 ms of GPU time), 30 decode steps
  // (60 ms, 54 ms) and 8 ms outside any counted step.
  std::string json = Report(5);
  const std::string phases =
      R"("phases":{"list":[{"phase":"prefill","steps":2,"step_total_ns":20000000,)"
      R"("step_mean_ns":10000000,"busy_ns":18000000,"gpu_time_ns":18000000,"ops":40,"pct":22.5,)"
      R"("categories":{}},{"phase":"decode","steps":30,"step_total_ns":60000000,)"
      R"("step_mean_ns":2000000,"busy_ns":54000000,"gpu_time_ns":54000000,"ops":900,"pct":67.5,)"
      R"("categories":{}}],"outside_ns":8000000,"outside_ops":7,"outside_pct":10.0},)";
  for (size_t at = json.find(R"("idle_causes":)"); at != std::string::npos;
       at = json.find(R"("idle_causes":)", at + phases.size() + 1))
    json.insert(at, phases);
  auto view = ParseReport(json, "", "");
  ASSERT_TRUE(view.ok()) << view.status().message();
  ASSERT_EQ(view->ranks.size(), 2u);
  ASSERT_EQ(view->ranks[1].phases.size(), 2u);
  ContextOptions options;
  options.command = "inferscope context";
  ContextResult r = RenderContext(*view, options);
  // Both ranks: prefill 4 steps, 36 ms; decode 60 steps, 108 ms; outside 16 ms of 160 ms.
  EXPECT_NE(r.text.find("## Forward phases (prefill vs decode; shares of the steps' GPU time "
                        "160 ms)\nprefill 4 steps (mean 10.0 ms) 22.5%; decode 60 steps (mean "
                        "2.00 ms) 67.5%; outside 10.0%\n"),
            std::string::npos)
      << r.text;
  // After where the GPU time went, before the kernels.
  EXPECT_LT(r.text.find("## GPU time by category"), r.text.find("## Forward phases"));
  EXPECT_LT(r.text.find("## Forward phases"), r.text.find("## Top kernels"));
  // Narrowed to one host: that rank's figures only.
  auto one = ParseReport(json, "node-b", "");
  ASSERT_TRUE(one.ok());
  EXPECT_NE(RenderContext(*one, options)
                .text.find("prefill 2 steps (mean 10.0 ms) 22.5%; decode 30 steps"),
            std::string::npos);
  // A report without phase data (no whole step) has no such section.
  auto plain = ParseReport(Report(5), "", "");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(RenderContext(*plain, options).text.find("Forward phases"), std::string::npos);
}

TEST(ContextTest, BudgetIsKeptAndCutsAreMarkedWithTheirShare) {
  auto view = ParseReport(Report(60), "", "");
  ASSERT_TRUE(view.ok());
  ContextOptions options;
  options.budget_tokens = 700;
  options.command = "inferscope context";
  ContextResult r = RenderContext(*view, options);
  EXPECT_TRUE(r.truncated);
  EXPECT_LE(r.text.size(), 700 * kBytesPerToken);
  EXPECT_LE(EstimateTokens(r.text.size()), 700u);
  // The kernel table was cut: the cut line says how many and their share of GPU time.
  const size_t cut = r.text.find(" more kernels, ");
  ASSERT_NE(cut, std::string::npos) << r.text;
  // Count the rows shown and check the share the cut line states from first principles.
  int shown = 0;
  for (int i = 0; i < 60; ++i)
    if (r.text.find(fmt::format(" kernel_{}\n", i)) != std::string::npos) ++shown;
  ASSERT_GT(shown, 0);
  int64_t cut_ns = 0, total = 0;
  for (int i = 0; i < 60; ++i) {
    total += 2 * (60 - i);
    if (i >= shown) cut_ns += 2 * (60 - i);
  }
  total += 10;  // the other kernels, 5 ms per rank
  EXPECT_NE(r.text.find(
                fmt::format("… {} more kernels, {} of GPU time", 60 - shown, Share(cut_ns, total))),
            std::string::npos)
      << r.text;
  // Less important sections did not fit and are named at the end.
  EXPECT_FALSE(r.omitted.empty());
  EXPECT_NE(r.text.find("omitted for the budget"), std::string::npos);
}

TEST(ContextTest, ExtraSectionsFollowTheDiagnosisAndAreCutLikeTheOthers) {
  auto view = ParseReport(Report(5), "", "");
  ASSERT_TRUE(view.ok());
  ContextOptions options;
  options.command = "inferscope context";
  options.narrow_flags = "--host, --label";
  ExtraSection fleet;
  fleet.title = "Fleet: worst hosts by idle (200 of 200)";
  fleet.head = {"fleet: 80 GPUs"};
  fleet.rows.push_back({"host", "idle"});
  for (int i = 0; i < 200; ++i) fleet.rows.push_back({fmt::format("node-{}", i), "50.0%"});
  fleet.right = {false, true};
  fleet.cut_noun = "hosts";
  options.extra_sections = {fleet};
  ContextResult r = RenderContext(*view, options);
  const size_t diagnosis = r.text.find("## Diagnosis");
  const size_t extra = r.text.find("## Fleet: worst hosts by idle (200 of 200)\nfleet: 80 GPUs\n");
  const size_t categories = r.text.find("## GPU time by category");
  ASSERT_NE(extra, std::string::npos) << r.text;
  EXPECT_LT(diagnosis, extra);
  EXPECT_LT(extra, categories);
  EXPECT_NE(r.text.find("node-199  50.0%"), std::string::npos) << r.text;
  // A small budget cuts the host rows from the end and says how many went.
  options.budget_tokens = 600;
  r = RenderContext(*view, options);
  EXPECT_LE(r.text.size(), 600 * kBytesPerToken);
  const size_t cut = r.text.find(" more hosts cut (of 200)");
  ASSERT_NE(cut, std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("node-199"), std::string::npos);
  EXPECT_NE(r.text.find("narrow with inferscope context (--host, --label)."), std::string::npos)
      << r.text;
  options.budget_tokens = 20000;
  r = RenderContext(*view, options);
  EXPECT_NE(r.text.find("narrow with inferscope context --host H --label K=V --pid P"),
            std::string::npos)
      << r.text;
}

TEST(ContextTest, TinyBudgetsNeverOverflow) {
  auto view = ParseReport(Report(40), "", "");
  ASSERT_TRUE(view.ok());
  for (int budget : {kMinBudgetTokens, 300, 500, 1000, 2000, 4000}) {
    ContextOptions options;
    options.budget_tokens = budget;
    ContextResult r = RenderContext(*view, options);
    EXPECT_LE(r.text.size(), static_cast<size_t>(budget) * kBytesPerToken) << budget;
    EXPECT_NE(r.text.find("# inferscope context"), std::string::npos);
  }
}

TEST(ContextTest, HostFilterRecomputesTotals) {
  auto view = ParseReport(Report(3), "node-b", "");
  ASSERT_TRUE(view.ok());
  ASSERT_EQ(view->ranks.size(), 1u);
  EXPECT_EQ(view->ranks[0].hostname, "node-b");
  EXPECT_EQ(view->kernel_time_ns(), (3 + 2 + 1 + 5) * 1'000'000);
  EXPECT_EQ(view->all_hosts.size(), 2u);
  auto none = ParseReport(Report(3), "node-z", "");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("node-a, node-b"), std::string::npos);
}

TEST(ContextTest, OutputIsStable) {
  auto view = ParseReport(Report(20), "", "");
  ASSERT_TRUE(view.ok());
  ContextOptions options;
  options.budget_tokens = 900;
  EXPECT_EQ(RenderContext(*view, options).text, RenderContext(*view, options).text);
}

TEST(ContextTest, TelemetrySections) {
  std::string json = Report(3);
  const std::string telemetry =
      R"("gpu_metrics":{"unavailable":"","devices":[{"index":0,"name":"NVIDIA H100","metrics":{)"
      R"("gpu_util_pct":{"unit":"%","samples":4,"min":10,"max":90,"sum":200},)"
      R"("mem_used_bytes":{"unit":"B","samples":2,"min":1073741824,"max":3221225472,)"
      R"("sum":4294967296}},"throttle":{"sw_power_cap":{"active_samples":2,"fraction":0.5}},)"
      R"("xid_count":1}]},"engine":{"engine":"vllm","backend":"v1","model_names":["qwen"],)"
      R"("gauges":{"running_requests":{"min":1,"max":3,"sum":8,"samples":4}},)"
      R"("derived":{"ttft_p50_s":0.125}},"requests":{"requests":5,"prompt_tokens":60,)"
      R"("completion_tokens":150,"stages":{"e2e":{"count":5,"p50_ns":900000000,)"
      R"("p90_ns":950000000,"p99_ns":990000000}},"models":[{"model":"qwen","requests":5}],)"
      R"("counters":{"spans_received":9,"dropped_late":4}}})";
  const std::string nulls = R"("gpu_metrics":null,"engine":null,"requests":null})";
  json.replace(json.find(nulls), nulls.size(), telemetry);
  auto view = ParseReport(json, "", "");
  ASSERT_TRUE(view.ok()) << view.status().message();
  ContextResult r = RenderContext(*view, {});
  // Means from sum / samples; bytes in GiB; throttling as a share of samples.
  EXPECT_NE(r.text.find("gpu_util_pct 50 (10..90) %"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("mem_used_bytes 2 (1..3) GiB"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("throttled: sw_power_cap 50%"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("XID errors: 1"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("engine: vllm (v1); models: qwen"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("running_requests (mean)"), std::string::npos) << r.text;
  // One duration style in the engine table: the engine's seconds and the spans' percentiles both
  // as base::FormatDuration prints them (not "0.125" next to "900.0/950.0/990.0 ms").
  EXPECT_NE(r.text.find("900 ms / 950 ms / 990 ms (n=5)"), std::string::npos) << r.text;
  const size_t ttft = r.text.find("\nttft_p50 ");
  ASSERT_NE(ttft, std::string::npos) << r.text;
  const std::string ttft_row = r.text.substr(ttft + 1, r.text.find('\n', ttft + 1) - ttft - 1);
  EXPECT_TRUE(ttft_row.ends_with(" 125 ms")) << ttft_row;
  EXPECT_EQ(r.text.find("0.125"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("- spans dropped_late: 4"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("spans_received"), std::string::npos) << r.text;
  // An engine filter naming another engine drops its section.
  auto other = ParseReport(json, "", "sglang");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(RenderContext(*other, {}).text.find("running_requests"), std::string::npos);
}

// The views' host range tables (docs/report-schema.md, `views`), per process: rows and the
// other row; a process without ranges is skipped, and a host filter keeps its ranks' pids.
TEST(ContextTest, RangeTablesPerProcess) {
  std::string json = Report(2);
  auto table = [](int pid, int instances, const char* rows) {
    return fmt::format(
        R"({{"pid":{},"devices":[],"ranges":{{"instances":{},"list":[{}],)"
        R"("other":{{"distinct_names":2,"count":3,"total_ns":30,"gpu":{{"ops":4,"time_ns":40}}}},)"
        R"("late":0,"gpu_annotations":{{"instances":0,"list":[],"other":{{}}}}}}}})",
        pid, instances, rows);
  };
  const std::string forward =
      R"({"name":"forward","duration":{"count":5,"total_ns":500},"gpu":{"ops":7,"time_ns":700}})";
  json.pop_back();  // the closing brace
  json += R"(,"views":{"selected":["ranges"],"inputs":[{"input":0,"from_windows":true,)"
          R"("processes":[)" +
          table(100, 8, forward.c_str()) + "," + table(101, 3, "") + "," + table(102, 0, "") +
          "]}]}}";
  auto view = ParseReport(json, "", "");
  ASSERT_TRUE(view.ok()) << view.status().message();
  ASSERT_EQ(view->range_tables.size(), 2u);  // pid 102 saw no ranges
  const RangeTableView& t = view->range_tables[0];
  EXPECT_EQ(t.pid, 100);
  EXPECT_EQ(t.instances, 8);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].name, "forward");
  EXPECT_EQ(t.rows[0].count, 5);
  EXPECT_EQ(t.rows[0].host_ns, 500);
  EXPECT_EQ(t.rows[0].gpu_ops, 7);
  EXPECT_EQ(t.rows[0].gpu_time_ns, 700);
  EXPECT_EQ(t.other.count, 3);
  EXPECT_EQ(t.other.host_ns, 30);
  EXPECT_EQ(t.other.gpu_ops, 4);
  EXPECT_EQ(t.other.gpu_time_ns, 40);
  EXPECT_EQ(t.other_names, 2);
  EXPECT_TRUE(view->range_tables[1].rows.empty());
  // node-b holds rank 1, pid 101.
  auto one = ParseReport(json, "node-b", "");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->range_tables.size(), 1u);
  EXPECT_EQ(one->range_tables[0].pid, 101);
  // A report without views has none.
  auto plain = ParseReport(Report(2), "", "");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->range_tables.empty());
}

TEST(ContextTest, AlignedTableAlignsColumns) {
  EXPECT_EQ(AlignedTable({{"a", "1"}, {"bbb", "22"}}, {false, true}), "a     1\nbbb  22\n");
}

}  // namespace
}  // namespace inferscope::context
