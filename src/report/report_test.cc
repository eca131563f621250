// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/report/report.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "src/analyze/test_profiles.h"

namespace inferscope::report {
namespace {

using analyze::testing::MakeWindow;

analyze::Analysis OneRank() {
  static const model::ProfileWindow w = [] {
    model::ProfileWindow window = MakeWindow(42, 0, 600, 450);
    // A very long kernel name, to check truncation.
    window.processes[0].devices[0].top_kernels[2].name =
        "an_unmangled_kernel_name_that_is_far_"
        "too_long_to_fit_into_any_reasonable_terminal_table_column_without_being_cut_short_x";
    window.processes[0].data_quality[static_cast<int>(model::DataQuality::kZeroTimestamp)] = 3;
    return window;
  }();
  analyze::AnalysisOptions options;
  options.top = 15;
  options.bin_ns = 500;
  return analyze::Analyze({{"trace \"one\".json", "kineto_json", &w}}, options);
}

analyze::Analysis ThreeRanks() {
  static const model::ProfileWindow w1 = MakeWindow(10, 0, 600, 450);
  static const model::ProfileWindow w2 = MakeWindow(20, 1, 800, 700);
  static const model::ProfileWindow w3 = MakeWindow(30, 2, 400, 200);
  return analyze::Analyze({{"r0.json", "kineto_json", &w1},
                           {"r1.json", "kineto_json", &w2},
                           {"r2.json.gz", "kineto_json", &w3}},
                          analyze::AnalysisOptions{});
}

void ExpectLinesFit(const std::string& text, size_t width) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    EXPECT_LE(line.size(), width) << "line " << n << ": " << line;
  }
  EXPECT_GT(n, 20);
}

TEST(TextReportTest, OneRankHasAllSectionsAndFits100Columns) {
  const std::string text = RenderText(OneRank());
  ExpectLinesFit(text, 100);
  for (const char* s :
       {"Temporal breakdown", "GPU time by category", "Top kernels", "Idle gaps",
        "Why the GPU was idle", "Kernel launch", "Host synchronization", "Memory transfers",
        "Allocations", "Communication", "Timeline", "Data quality"})
    EXPECT_NE(text.find(s), std::string::npos) << s;
  EXPECT_EQ(text.find("Rank comparison"), std::string::npos);
  EXPECT_NE(text.find("flashinfer::BatchDecodeKernel"), std::string::npos);
  EXPECT_EQ(text.find("BatchDecodeKernel<"), std::string::npos);  // template args stripped
  EXPECT_NE(text.find("..."), std::string::npos);                 // the long name was cut
  EXPECT_NE(text.find("other (2 kernels)"), std::string::npos);
  EXPECT_NE(text.find("zero_timestamp"), std::string::npos);
  EXPECT_NE(text.find("attention"), std::string::npos);
  EXPECT_NE(text.find("50.0%"), std::string::npos);  // attention share, idle host wait 75%
  EXPECT_NE(text.find("75.0%"), std::string::npos);
  EXPECT_NE(text.find("25.0"), std::string::npos);  // htod GB/s
}

TEST(TextReportTest, NarrowWidthStillFits) {
  ExpectLinesFit(RenderText(OneRank(), 80), 80);
  ExpectLinesFit(RenderText(ThreeRanks(), 80), 80);
}

TEST(TextReportTest, ThreeRanksShowComparisonAndStraggler) {
  const std::string text = RenderText(ThreeRanks());
  ExpectLinesFit(text, 100);
  EXPECT_NE(text.find("Rank comparison"), std::string::npos);
  EXPECT_NE(text.find("straggler: rank 1"), std::string::npos);
  EXPECT_NE(text.find("(all ranks)"), std::string::npos);
  EXPECT_NE(text.find("rank  2 gpu  0 |"), std::string::npos);
  EXPECT_NE(text.find("66.7%"), std::string::npos);  // busy imbalance (800-400)/600
}

TEST(TextReportTest, EmptyAnalysis) {
  const analyze::Analysis a = analyze::Analyze({}, analyze::AnalysisOptions{});
  const std::string text = RenderText(a);
  EXPECT_NE(text.find("No GPU activity"), std::string::npos);
}

TEST(MarkdownReportTest, GithubTables) {
  const std::string md = RenderMarkdown(ThreeRanks());
  EXPECT_EQ(md.rfind("# inferscope", 0), 0u);
  EXPECT_NE(md.find("## Temporal breakdown"), std::string::npos);
  EXPECT_NE(md.find("## Rank comparison"), std::string::npos);
  EXPECT_NE(md.find("| ---: |"), std::string::npos);
  EXPECT_NE(md.find("`flashinfer::BatchDecodeKernel`"), std::string::npos);
  EXPECT_NE(md.find("```"), std::string::npos);  // sparkline block
  // Every table row has the same number of cells as its header.
  std::istringstream in(md);
  std::string line;
  size_t header_cells = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|') {
      header_cells = 0;
      continue;
    }
    size_t cells = 0;
    for (size_t i = 0; i < line.size(); ++i)
      if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++cells;
    if (header_cells == 0) header_cells = cells;
    EXPECT_EQ(cells, header_cells) << line;
  }
}

// What `analyze --format json` renders (Render without extras) has the same top-level keys as a
// live report: the telemetry ones null (docs/report-schema.md: "always present").
TEST(JsonReportTest, TraceReportsHaveTheTelemetryKeysAsNull) {
  const std::string json = Render(OneRank(), ReportFormat::kJson);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json.substr(0, 2000);
  for (const char* key : {"range", "gpu_metrics", "engine", "requests", "cost"}) {
    simdjson::dom::element v;
    ASSERT_EQ(doc[key].get(v), simdjson::SUCCESS) << key << " missing";
    EXPECT_TRUE(v.is_null()) << key;
  }
  simdjson::dom::element r = doc["ranks"].at(0);
  simdjson::dom::element g;
  ASSERT_EQ(r["cuda_graphs"].get(g), simdjson::SUCCESS);
  EXPECT_TRUE(g.is_null());
}

TEST(JsonReportTest, ParsesAndHasDocumentedKeys) {
  const std::string json = RenderJson(OneRank());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json.substr(0, 2000);
  EXPECT_EQ(int64_t(doc["schema_version"]), 1);
  EXPECT_EQ(std::string_view(doc["tool"]["name"]), "inferscope");
  EXPECT_EQ(std::string_view(doc["inputs"].at(0)["path"]), "trace \"one\".json");
  EXPECT_EQ(int64_t(doc["options"]["bin_ns"]), 500);
  simdjson::dom::element r = doc["ranks"].at(0);
  EXPECT_EQ(int64_t(r["rank"]), 0);
  EXPECT_EQ(uint64_t(r["pid"]), 42u);
  EXPECT_EQ(std::string_view(r["device_name"]), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(int64_t(r["temporal_breakdown"]["span_ns"]), 1000);
  EXPECT_EQ(int64_t(r["temporal_breakdown"]["idle_ns"]), 400);
  EXPECT_DOUBLE_EQ(double(r["temporal_breakdown"]["compute_pct"]), 45.0);
  EXPECT_EQ(int64_t(r["categories"]["attention"]["time_ns"]), 300);
  EXPECT_DOUBLE_EQ(double(r["categories"]["attention"]["pct"]), 50.0);
  EXPECT_EQ(uint64_t(r["categories"]["kv_cache"]["count"]), 0u);
  EXPECT_EQ(int64_t(r["subcategories"]["matmul.cublas"]["time_ns"]), 150);
  simdjson::dom::element k = r["top_kernels"].at(0);
  EXPECT_EQ(std::string_view(k["display_name"]), "flashinfer::BatchDecodeKernel");
  for (const char* key : {"name", "category", "subcategory", "count", "total_ns", "mean_ns",
                          "min_ns", "max_ns", "median_ns", "pct"})
    EXPECT_EQ(k[key].error(), simdjson::SUCCESS) << key;
  EXPECT_EQ(uint64_t(r["other_kernels"]["distinct_names"]), 2u);
  EXPECT_EQ(int64_t(r["idle_gaps"]["host_wait"]["total_ns"]), 300);
  for (const char* cause : model::kIdleCauseNames)
    EXPECT_EQ(r["idle_causes"][cause]["pct"].error(), simdjson::SUCCESS) << cause;
  EXPECT_EQ(r["idle_causes"]["intervals"].error(), simdjson::SUCCESS);
  EXPECT_EQ(r["steps"]["prefill_count"].error(), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(r["launch"]["cpu_launch_mean_ns"]), 5);
  EXPECT_EQ(uint64_t(r["sync_waits"]["stream"]["count"]), 2u);
  EXPECT_EQ(uint64_t(r["sync_waits"]["stream"]["waited_on"].at(0)["count"]), 2u);
  EXPECT_DOUBLE_EQ(double(r["memory_transfers"]["htod"]["bandwidth_gbps"]), 25.0);
  EXPECT_EQ(uint64_t(r["memory_transfers"]["memset"]["bytes"]), 64u);
  EXPECT_EQ(uint64_t(r["allocations"]["slow_calls"]), 1u);
  EXPECT_EQ(int64_t(r["communication_ns"]), 100);
  EXPECT_DOUBLE_EQ(double(r["comm_compute_overlap_pct"]), 40.0);
  EXPECT_EQ(int64_t(r["timeline"]["bin_ns"]), 500);
  EXPECT_EQ(int64_t(r["timeline"]["origin_ns"]), 1000);
  EXPECT_EQ(int64_t(r["timeline"]["bins"].at(1)["categories_ns"]["matmul"]), 150);
  EXPECT_EQ(uint64_t(r["data_quality"]["zero_timestamp"]), 3u);
  EXPECT_EQ(uint64_t(doc["summary"]["rank_count"]), 1u);
  EXPECT_TRUE(doc["rank_comparison"]["straggler_rank"].is_null());
}

// The live forward-phase split (DeviceProfile::phases): a text section and `phases` in the JSON
// of the rank and the summary; without whole steps, no section and an empty list.
TEST(JsonReportTest, ForwardPhases) {
  model::ProfileWindow w = MakeWindow(42, 0, 600, 450);
  model::PhaseSplit& split = w.processes[0].devices[0].phases;
  constexpr auto kAttention = static_cast<size_t>(model::Category::kAttention);
  constexpr auto kMatmul = static_cast<size_t>(model::Category::kMatmul);
  model::PhaseStats& prefill = split.phases[static_cast<size_t>(model::Phase::kPrefill)];
  prefill = {2, 9'000'000, 8'000'000, 40, {}};
  prefill.category_ns[kAttention] = 3'000'000;
  prefill.category_ns[kMatmul] = 5'000'000;
  model::PhaseStats& decode = split.phases[static_cast<size_t>(model::Phase::kDecode)];
  decode = {10, 10'000'000, 1'500'000, 200, {}};
  decode.category_ns[kMatmul] = 1'500'000;
  split.outside_ops = 4;
  split.outside_ns[kMatmul] = 500'000;
  const analyze::Analysis a = analyze::Analyze({{"live", "inferscope_store", &w}}, {});

  const std::string text = RenderText(a);
  const size_t at = text.find("Forward phases (prefill vs decode)");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(text.find("prefill        2    4.50 ms   8.00 ms  80.0%", at), std::string::npos)
      << text.substr(at, 800);
  EXPECT_NE(text.find("matmul 62.5%, attention 37.5%", at), std::string::npos);
  EXPECT_NE(text.find("(outside)", at), std::string::npos);

  const std::string json = RenderJson(a);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS);
  const simdjson::dom::element rank_phases = doc["ranks"].at(0)["phases"];
  const simdjson::dom::element summary_phases = doc["summary"]["phases"];
  for (simdjson::dom::element phases : {rank_phases, summary_phases}) {
    simdjson::dom::array list = phases["list"];
    ASSERT_EQ(list.size(), 2u);
    simdjson::dom::element p = list.at(0);
    EXPECT_EQ(std::string_view(p["phase"]), "prefill");
    EXPECT_EQ(uint64_t(p["steps"]), 2u);
    EXPECT_EQ(int64_t(p["step_mean_ns"]), 4'500'000);
    EXPECT_EQ(int64_t(p["busy_ns"]), 8'000'000);
    EXPECT_EQ(int64_t(p["gpu_time_ns"]), 8'000'000);
    EXPECT_EQ(uint64_t(p["ops"]), 40u);
    EXPECT_DOUBLE_EQ(double(p["pct"]), 80.0);
    EXPECT_EQ(int64_t(p["categories"]["attention"]["time_ns"]), 3'000'000);
    EXPECT_DOUBLE_EQ(double(p["categories"]["matmul"]["pct"]), 62.5);
    EXPECT_EQ(std::string_view(list.at(1)["phase"]), "decode");
    EXPECT_EQ(int64_t(phases["outside_ns"]), 500'000);
    EXPECT_EQ(uint64_t(phases["outside_ops"]), 4u);
    EXPECT_DOUBLE_EQ(double(phases["outside_pct"]), 5.0);
  }

  // The CSV table: one row per rank, phase and category; outside as a phase.
  std::string csv;
  ASSERT_TRUE(RenderCsv(a, "phases", &csv));
  EXPECT_EQ(csv.rfind("rank,device,phase,steps,step_total_ns,busy_ns,category,time_ns,"
                      "pct_of_phase\r\n",
                      0),
            0u)
      << csv;
  EXPECT_NE(csv.find("0,0,prefill,2,9000000,8000000,matmul,5000000,62.50\r\n"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find("0,0,outside,0,0,0,matmul,500000,100.00\r\n"), std::string::npos) << csv;

  // No whole step: no section, an empty list.
  const std::string plain = RenderText(OneRank());
  EXPECT_EQ(plain.find("Forward phases"), std::string::npos);
  ASSERT_EQ(parser.parse(RenderJson(OneRank())).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(simdjson::dom::array(doc["summary"]["phases"]["list"]).size(), 0u);
}

// Launch configurations of live windows (format 1.5): per top kernel in the JSON, in the kernels
// view's shape (one writer); the text only on request (the kernels view from the windows).
TEST(JsonReportTest, LiveLaunchConfigs) {
  model::ProfileWindow w = MakeWindow(42, 0, 600, 450);
  model::KernelStats& k = w.processes[0].devices[0].top_kernels[0];
  model::LaunchConfig& c = k.configs.emplace_back();
  c.grid = {132, 2, 1};
  c.block = {128, 1, 1};
  c.count = k.duration.count;
  c.total_ns = k.duration.total_ns;
  c.registers_per_thread = 168;
  c.static_shared_bytes = 0;
  c.dynamic_shared_bytes = 49152;
  c.shared_bytes = 49152;
  k.distinct_configs = 3;
  const analyze::Analysis a = analyze::Analyze({{"live", "inferscope_store", &w}}, {});
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(RenderJson(a)).get(doc), simdjson::SUCCESS);
  for (const char* where : {"ranks", "summary"}) {
    const simdjson::dom::element row = std::string_view(where) == "ranks"
                                           ? doc["ranks"].at(0)["top_kernels"].at(0)
                                           : doc["summary"]["top_kernels"].at(0);
    EXPECT_EQ(std::string_view(row["name"]), k.name) << where;
    EXPECT_EQ(uint64_t(row["distinct_launch_configs"]), 3u) << where;
    const simdjson::dom::element config = row["launch_configs"].at(0);
    EXPECT_EQ(int64_t(config["grid"].at(0)), 132) << where;
    EXPECT_EQ(int64_t(config["grid"].at(1)), 2) << where;
    EXPECT_EQ(int64_t(config["block"].at(0)), 128) << where;
    EXPECT_EQ(int64_t(config["registers_per_thread"]), 168) << where;
    EXPECT_EQ(int64_t(config["static_shared_bytes"]), 0) << where;
    EXPECT_EQ(int64_t(config["dynamic_shared_bytes"]), 49152) << where;
    EXPECT_EQ(int64_t(config["shared_bytes"]), 49152) << where;
    EXPECT_EQ(uint64_t(config["count"]), k.duration.count) << where;
  }
  // A row without configurations (a window of an older library) has no keys; no views section.
  simdjson::dom::element second = doc["ranks"].at(0)["top_kernels"].at(1);
  EXPECT_EQ(second["launch_configs"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_TRUE(doc["views"].is_null());
  const std::string plain = RenderText(a);
  EXPECT_EQ(plain.find("Launch configurations"), std::string::npos);

  // On request: the kernels view from the windows, text, JSON and CSV.
  analyze::AnalysisOptions options;
  options.window_kernels_view = true;
  const analyze::Analysis v = analyze::Analyze({{"live", "inferscope_store", &w}}, options);
  const std::string text = RenderText(v);
  const size_t at = text.find("Launch configurations");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("132x2x1", at), std::string::npos) << text.substr(at);
  EXPECT_EQ(text.find("NVTX / annotation ranges"), std::string::npos);
  ASSERT_EQ(parser.parse(RenderJson(v)).get(doc), simdjson::SUCCESS);
  const simdjson::dom::element input = doc["views"]["inputs"].at(0);
  EXPECT_TRUE(bool(input["from_windows"]));
  const simdjson::dom::element stat =
      input["processes"].at(0)["devices"].at(0)["kernel_stats"].at(0);
  EXPECT_EQ(uint64_t(stat["distinct_launch_configs"]), 3u);
  EXPECT_EQ(int64_t(stat["launch_configs"].at(0)["grid"].at(0)), 132);
  EXPECT_TRUE(stat["duration"]["median_ns"].is_null());
  EXPECT_EQ(uint64_t(stat["duration"]["count"]), k.duration.count);
  std::string csv;
  ASSERT_TRUE(RenderCsv(v, "launch_configs", &csv));
  EXPECT_NE(csv.find(",132x2x1,128x1x1,168,49152,0,49152,"), std::string::npos) << csv;
}

// Live windows with NVTX range tables (`run --nvtx`): the ranges view of the report, in the shape
// `analyze --views ranges` writes, without the order statistics windows do not keep.
TEST(JsonReportTest, LiveRangeTables) {
  model::ProfileWindow w = MakeWindow(42, 0, 600, 450);
  model::RangeTable& t = w.processes[0].ranges;
  model::RangeStats& fwd = t.rows.emplace_back();
  fwd.name = "forward";
  fwd.duration.Add(3'000'000);
  fwd.duration.Add(1'000'000);
  fwd.gpu_ops = 12;
  fwd.gpu_time_ns = 2'500'000;
  t.tail.duration.Add(500);
  t.tail_names = 1;
  t.late = 1;
  const analyze::Analysis a = analyze::Analyze({{"live", "inferscope_store", &w}}, {});

  const std::string text = RenderText(a);
  const size_t at = text.find("NVTX / annotation ranges");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("forward", at), std::string::npos);
  EXPECT_NE(text.find("other (1 names)", at), std::string::npos);
  EXPECT_NE(text.find("median and stddev are not kept", at), std::string::npos);

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(RenderJson(a)).get(doc), simdjson::SUCCESS);
  const simdjson::dom::element input = doc["views"]["inputs"].at(0);
  EXPECT_TRUE(bool(input["from_windows"]));
  const simdjson::dom::element ranges = input["processes"].at(0)["ranges"];
  EXPECT_EQ(uint64_t(ranges["instances"]), 3u);
  EXPECT_EQ(uint64_t(ranges["late"]), 1u);
  const simdjson::dom::element row = ranges["list"].at(0);
  EXPECT_EQ(std::string_view(row["name"]), "forward");
  EXPECT_EQ(uint64_t(row["duration"]["count"]), 2u);
  EXPECT_EQ(int64_t(row["duration"]["total_ns"]), 4'000'000);
  EXPECT_EQ(int64_t(row["duration"]["mean_ns"]), 2'000'000);
  EXPECT_EQ(int64_t(row["duration"]["min_ns"]), 1'000'000);
  EXPECT_TRUE(row["duration"]["median_ns"].is_null());
  EXPECT_EQ(uint64_t(row["gpu"]["ops"]), 12u);
  EXPECT_EQ(int64_t(row["gpu"]["time_ns"]), 2'500'000);
  EXPECT_EQ(uint64_t(ranges["other"]["count"]), 1u);

  std::string csv;
  ASSERT_TRUE(RenderCsv(a, "ranges", &csv));
  EXPECT_NE(csv.find("0,forward,99.99,2,4000000,2000000,,1000000,3000000,,12,2500000\r\n"),
            std::string::npos)
      << csv;

  // Windows without ranges: no views at all (the JSON's views stay null).
  ASSERT_EQ(parser.parse(RenderJson(OneRank())).get(doc), simdjson::SUCCESS);
  EXPECT_TRUE(doc["views"].is_null());
}

TEST(JsonReportTest, RankComparison) {
  const std::string json = RenderJson(ThreeRanks());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(simdjson::dom::array(doc["ranks"]).size(), 3u);
  EXPECT_EQ(int64_t(doc["rank_comparison"]["straggler_rank"]), 1);
  EXPECT_EQ(int64_t(doc["rank_comparison"]["busy"]["max_ns"]), 800);
  EXPECT_NEAR(double(doc["rank_comparison"]["busy_imbalance"]), 0.6667, 1e-9);
  EXPECT_EQ(int64_t(doc["summary"]["temporal_breakdown"]["busy_ns"]), 1800);
  EXPECT_EQ(uint64_t(doc["summary"]["top_kernels"].at(0)["count"]), 9u);
}

analyze::Analysis WithDiagnosis() {
  analyze::Analysis a = OneRank();
  analyze::Finding launch;
  launch.id = "launch_overhead";
  launch.severity = "critical";
  launch.confidence = 0.65;
  launch.score = 0.84;
  launch.summary = "GPU idle 84% of the time waiting for kernel launches";
  launch.evidence = {{"busy_pct", 13.7, "%"},
                     {"host_wait_gaps", 662, "count"},
                     {"host_wait_gap_mean_us", 108, "us"}};
  launch.fixes = {"Capture the step in CUDA graphs", "torch.compile the model"};
  analyze::Finding comm;
  comm.id = "communication";
  comm.severity = "info";
  comm.confidence = 0.6;
  comm.score = 0.05;
  comm.summary = "rank 3 computes 12% more than the others";
  comm.rank = 3;
  a.diagnosis.findings = {launch, comm};
  a.diagnosis.primary = "launch_overhead";
  return a;
}

TEST(TextReportTest, DiagnosisSectionComesFirst) {
  const std::string text = RenderText(WithDiagnosis());
  ExpectLinesFit(text, 100);
  const size_t diag = text.find("Diagnosis\n---------");
  ASSERT_NE(diag, std::string::npos);
  EXPECT_LT(diag, text.find("Temporal breakdown"));
  EXPECT_NE(text.find("primary verdict: launch_overhead"), std::string::npos);
  EXPECT_NE(text.find("1. launch_overhead (critical, confidence 0.65, 84% of time at stake): GPU "
                      "idle 84%"),
            std::string::npos)
      << text.substr(0, 1500);
  // Evidence with human names and one unit (the JSON keeps the documented keys).
  EXPECT_NE(text.find("- evidence: GPU busy 13.7%, host-wait gaps 662, host-wait gap mean 108 µs"),
            std::string::npos)
      << text.substr(0, 1500);
  EXPECT_EQ(text.find("host_wait_gap_mean_us"), std::string::npos);
  EXPECT_NE(RenderJson(WithDiagnosis()).find("\"host_wait_gap_mean_us\""), std::string::npos);
  EXPECT_NE(text.find("- fix: Capture the step in CUDA graphs"), std::string::npos);
  EXPECT_NE(text.find("2. communication (info, rank 3, confidence 0.60"), std::string::npos);
  EXPECT_LT(text.find("1. launch_overhead"), text.find("2. communication"));

  const std::string md = RenderMarkdown(WithDiagnosis());
  ASSERT_NE(md.find("## Diagnosis"), std::string::npos);
  EXPECT_LT(md.find("## Diagnosis"), md.find("## Temporal breakdown"));
  EXPECT_NE(md.find("\n   - fix: torch.compile the model\n"), std::string::npos) << md;
}

// Wrapped lines of a finding indent under its text, and a finding with nothing at
// stake offers no fixes.
TEST(TextReportTest, DiagnosisWrapsIndentedAndOffersNoFixesForNothing) {
  analyze::Analysis a = WithDiagnosis();
  a.diagnosis.findings[0].summary =
      "GPU idle 84% of the time waiting for the host to launch work: the queue ran empty while the "
      "launching thread issued calls (mean launch call 7 us; 76% of kernels shorter than 10 us)";
  a.diagnosis.findings[1].score = 0.001;
  a.diagnosis.findings[1].fixes = {"Rebalance the ranks", "Overlap the collectives", "Use NVLink",
                                   "Check the interconnect"};
  const std::string text = RenderText(a);
  ExpectLinesFit(text, 100);
  const size_t first = text.find("1. launch_overhead");
  ASSERT_NE(first, std::string::npos);
  const size_t second_line = text.find('\n', first) + 1;
  EXPECT_EQ(text.compare(second_line, 3, "   "), 0) << text.substr(first, 400);
  EXPECT_EQ(text.find("Rebalance the ranks"), std::string::npos) << text.substr(first, 1200);
  EXPECT_NE(text.find("- no fix suggested: under 0.5% of the time is at stake"), std::string::npos);
}

// A section's own lines (GPU metrics, engine load) wrap when too wide; no value is cut.
TEST(TextReportTest, ExtraSectionLinesWrapInsteadOfBeingCut) {
  ReportExtras extras;
  std::string wide = "missing on GPU 0, 1, 2, 3 (GPM needs Hopper or newer):";
  for (int i = 0; i < 12; ++i) wide += " metric_number_" + std::to_string(i) + ",";
  wide += " last_metric";
  extras.sections.push_back({"GPU metrics", {wide}});
  const std::string text = Render(OneRank(), ReportFormat::kText, extras);
  ExpectLinesFit(text, 100);
  const size_t at = text.find("missing on GPU 0");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("last_metric", at), std::string::npos) << text.substr(at);
  EXPECT_NE(text.find("\n    metric_number_"), std::string::npos) << text.substr(at);
  EXPECT_EQ(text.find("...", at), std::string::npos) << text.substr(at);
}

TEST(TextReportTest, AnalyzeAlwaysHasADiagnosis) {
  const std::string text = RenderText(analyze::Analyze({}, analyze::AnalysisOptions{}));
  // Nothing analyzed is no evidence: the verdict says so rather than "healthy".
  EXPECT_NE(text.find("primary verdict: insufficient_evidence"), std::string::npos);
  EXPECT_NE(text.find("1. insufficient_evidence (info, confidence 1.00"), std::string::npos)
      << text;
}

TEST(JsonReportTest, DiagnosisKeyFollowsOptions) {
  const std::string json = RenderJson(WithDiagnosis());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS);
  std::vector<std::string_view> keys;
  for (auto field : simdjson::dom::object(doc)) keys.push_back(field.key);
  const auto options = std::find(keys.begin(), keys.end(), "options");
  ASSERT_NE(options, keys.end());
  ASSERT_NE(options + 1, keys.end());
  EXPECT_EQ(*(options + 1), "diagnosis");
  simdjson::dom::element d = doc["diagnosis"];
  EXPECT_EQ(std::string_view(d["primary"]), "launch_overhead");
  simdjson::dom::array findings = d["findings"];
  ASSERT_EQ(findings.size(), 2u);
  simdjson::dom::element f = findings.at(0);
  std::vector<std::string_view> finding_keys;
  for (auto field : simdjson::dom::object(f)) finding_keys.push_back(field.key);
  EXPECT_EQ(finding_keys, (std::vector<std::string_view>{"id", "severity", "confidence", "score",
                                                         "summary", "rank", "evidence", "fixes"}));
  EXPECT_EQ(std::string_view(f["severity"]), "critical");
  EXPECT_DOUBLE_EQ(double(f["confidence"]), 0.65);
  EXPECT_DOUBLE_EQ(double(f["score"]), 0.84);
  EXPECT_EQ(int64_t(f["rank"]), -1);
  EXPECT_EQ(std::string_view(f["evidence"].at(1)["name"]), "host_wait_gaps");
  EXPECT_DOUBLE_EQ(double(f["evidence"].at(1)["value"]), 662);
  EXPECT_EQ(std::string_view(f["evidence"].at(1)["unit"]), "count");
  EXPECT_EQ(std::string_view(f["fixes"].at(1)), "torch.compile the model");
  EXPECT_EQ(int64_t(findings.at(1)["rank"]), 3);
  EXPECT_EQ(simdjson::dom::array(findings.at(1)["fixes"]).size(), 0u);
}

TEST(ReportFormatTest, Parse) {
  ReportFormat f;
  EXPECT_TRUE(ParseReportFormat("json", &f));
  EXPECT_EQ(f, ReportFormat::kJson);
  EXPECT_TRUE(ParseReportFormat("md", &f));
  EXPECT_EQ(f, ReportFormat::kMarkdown);
  EXPECT_FALSE(ParseReportFormat("html", &f));
}

}  // namespace
}  // namespace inferscope::report

namespace inferscope::report {
namespace {

// The CUDA graphs section (live path): graph time from capture in two parts, split by the
// kernels' known durations and by count.
TEST(CudaGraphsSectionTest, TimeFromCaptureIsSplitByDurationAndByCount) {
  analyze::Analysis a = OneRank();
  model::CudaGraphStats& g = a.ranks[0].graphs;
  g.launches = 100;
  g.launch_ns = 1'000'000;
  g.measured_ns = 200'000;
  g.estimated_ns = 300'000;
  g.composition_ns = 500'000;
  g.composition_timed_ns = 400'000;
  const std::string text = Render(a, ReportFormat::kText);
  const size_t at = text.find("by time");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("by count", at), std::string::npos);
  // measured 20 %, estimated 30 %, by duration 40 %, by count 10 %.
  const size_t row = text.find("40.0%", at);
  ASSERT_NE(row, std::string::npos) << text.substr(at, 800);
  EXPECT_NE(text.find("10.0%", row), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(RenderJson(a)).get(doc), simdjson::SUCCESS);
  simdjson::dom::element j = doc["ranks"].at(0)["cuda_graphs"];
  EXPECT_EQ(int64_t(j["composition_ns"]), 500'000);
  EXPECT_EQ(int64_t(j["composition_timed_ns"]), 400'000);
}

}  // namespace
}  // namespace inferscope::report
