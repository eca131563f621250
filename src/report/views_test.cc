// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/report/views.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "src/analyze/test_profiles.h"
#include "src/report/report.h"

namespace inferscope::report {
namespace {

using analyze::testing::MakeWindow;

// A trace of pid 42 (rank 0) with every view filled by hand.
model::TraceViews SomeViews() {
  model::TraceViews v;
  v.selection = {true, true, true, true, true};
  model::ProcessViews& p = v.processes.emplace_back();
  p.pid = 42;
  model::DeviceViews& d = p.devices.emplace_back();
  d.device = 0;
  model::KernelStatRow& k = d.kernels.emplace_back();
  k.name = "void gemm<float, 4>(float*, int)";  // a comma: CSV must quote it
  k.category = model::Category::kMatmul;
  k.duration = {4, 1000, 250, 200, 100, 400, 400, 129.1};
  k.configs.push_back({{8, 1, 1}, {128, 1, 1}, 3, 700});
  model::LaunchConfig& recorded = k.configs.emplace_back();  // with registers and shared memory
  recorded.grid = {8, 1, 1};
  recorded.block = {128, 1, 1};
  recorded.count = 1;
  recorded.total_ns = 300;
  recorded.registers_per_thread = 96;
  recorded.static_shared_bytes = 16;
  recorded.dynamic_shared_bytes = 49152;
  recorded.shared_bytes = 49168;
  k.distinct_configs = 2;
  d.kernel_tail_names = 3;
  d.kernel_tail.duration = {5, 50, 10, 10, 5, 20, 20, 5.0};
  d.streams.push_back({7, 2, 1, 0, 0, 300, 200, 100, 50});
  d.streams.push_back({9, 1, 0, 0, 50, 400, 200, 150, 50});
  d.multi_stream_ns = 50;
  model::StepRow& s1 = p.steps.emplace_back();
  s1.name = "ProfilerStep#1";
  s1.start_ns = 0;
  s1.end_ns = 100;
  s1.gpu.ops = 2;
  s1.gpu.time_ns = 500;
  s1.gpu.busy_ns = 400;
  s1.gpu.first_start_ns = 1000;
  s1.gpu.last_end_ns = 1500;
  s1.gpu.category_ns[static_cast<size_t>(model::Category::kMatmul)] = 500;
  model::StepRow& s2 = p.steps.emplace_back(s1);
  s2.name = "ProfilerStep#2";
  s2.phase = "decode";
  s2.start_ns = 100;
  s2.end_ns = 400;  // the slowest
  p.steps_total = 2;
  p.step_duration = {2, 400, 200, 100, 100, 300, 300, 141.4};
  model::PhaseRow& ph = p.phases.emplace_back();
  ph.phase = "decode";
  ph.duration = {1, 300, 300, 300, 300, 300, 300, 0};
  ph.gpu_time_ns = 500;
  ph.category_ns[static_cast<size_t>(model::Category::kMatmul)] = 500;
  model::RangeRow& r = p.ranges.emplace_back();
  r.name = "forward";
  r.duration = {3, 75, 25, 25, 5, 45, 45, 20.0};
  r.gpu.ops = 3;
  r.gpu.time_ns = 600;
  p.range_tail_names = 2;
  p.range_tail.duration.count = 2;
  p.range_tail.duration.total_ns = 60;
  p.nvtx_ranges = 7;
  return v;
}

analyze::Analysis WithViews() {
  static const model::ProfileWindow w = MakeWindow(42, 0, 600, 450);
  static const model::TraceViews views = SomeViews();
  return analyze::Analyze({{"t.json", "kineto_json", &w, &views}}, analyze::AnalysisOptions{});
}

TEST(ViewsReportTest, JsonCarriesEveryViewWhenSelected) {
  const std::string json = RenderJson(WithViews());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::element p = doc["views"]["inputs"].at(0)["processes"].at(0);
  EXPECT_EQ(uint64_t(p["pid"]), 42u);
  simdjson::dom::element d = p["devices"].at(0);
  EXPECT_EQ(int64_t(d["rank"]), 0);
  simdjson::dom::element k = d["kernel_stats"].at(0);
  EXPECT_EQ(std::string_view(k["category"]), "matmul");
  EXPECT_EQ(int64_t(k["duration"]["median_ns"]), 200);
  EXPECT_EQ(int64_t(k["duration"]["p99_ns"]), 400);
  EXPECT_EQ(int64_t(k["launch_configs"].at(0)["grid"].at(0)), 8);
  EXPECT_EQ(uint64_t(k["distinct_launch_configs"]), 2u);
  // Resources: null where not recorded, else the integers.
  EXPECT_TRUE(k["launch_configs"].at(0)["registers_per_thread"].is_null());
  EXPECT_TRUE(k["launch_configs"].at(0)["shared_bytes"].is_null());
  EXPECT_EQ(int64_t(k["launch_configs"].at(1)["registers_per_thread"]), 96);
  EXPECT_EQ(int64_t(k["launch_configs"].at(1)["static_shared_bytes"]), 16);
  EXPECT_EQ(int64_t(k["launch_configs"].at(1)["dynamic_shared_bytes"]), 49152);
  EXPECT_EQ(int64_t(k["launch_configs"].at(1)["shared_bytes"]), 49168);
  EXPECT_EQ(uint64_t(k["launch_configs"].at(1)["count"]), 1u);
  EXPECT_EQ(uint64_t(d["kernel_stats_other"]["distinct_names"]), 3u);
  EXPECT_EQ(int64_t(d["streams"].at(1)["overlap_ns"]), 50);
  EXPECT_EQ(int64_t(d["multi_stream_ns"]), 50);
  EXPECT_EQ(uint64_t(p["steps"]["count"]), 2u);
  EXPECT_EQ(std::string_view(p["steps"]["slowest"].at(0)), "ProfilerStep#2");
  EXPECT_EQ(std::string_view(p["steps"]["list"].at(1)["phase"]), "decode");
  EXPECT_EQ(std::string_view(p["steps"]["phases"].at(0)["phase"]), "decode");
  EXPECT_EQ(int64_t(p["steps"]["phases"].at(0)["categories_ns"]["matmul"]), 500);
  EXPECT_EQ(int64_t(p["steps"]["list"].at(0)["gpu"]["categories_ns"]["matmul"]), 500);
  EXPECT_EQ(int64_t(p["ranges"]["list"].at(0)["gpu"]["time_ns"]), 600);
  EXPECT_EQ(uint64_t(p["ranges"]["other"]["distinct_names"]), 2u);

  // Without views the key is null.
  static const model::ProfileWindow w = MakeWindow(42, 0, 600, 450);
  const std::string plain =
      RenderJson(analyze::Analyze({{"t.json", "kineto_json", &w}}, analyze::AnalysisOptions{}));
  ASSERT_EQ(parser.parse(plain).get(doc), simdjson::SUCCESS);
  EXPECT_TRUE(doc["views"].is_null());
}

TEST(ViewsReportTest, TextSectionsFitTheWidth) {
  const std::string text = RenderText(WithViews(), 100);
  for (const char* title : {"Kernel statistics", "Launch configurations", "Streams", "Steps",
                            "NVTX / annotation ranges"})
    EXPECT_NE(text.find(title), std::string::npos) << title;
  EXPECT_NE(text.find("8x1x1"), std::string::npos);
  EXPECT_NE(text.find("rank 0: 1 decode steps, duration median 300 ns"), std::string::npos) << text;
  EXPECT_NE(text.find("other (3 kernels)"), std::string::npos);
  // The slowest step is listed first in text.
  EXPECT_LT(text.find("ProfilerStep#2"), text.find("ProfilerStep#1"));
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    // Count code points, not bytes (the report uses a few multi-byte symbols).
    size_t columns = 0;
    for (size_t i = start; i < end; ++i)
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++columns;
    EXPECT_LE(columns, 100u) << text.substr(start, end - start);
    start = end + 1;
  }
}

TEST(ViewsReportTest, CsvTables) {
  const analyze::Analysis a = WithViews();
  std::string csv;
  ASSERT_TRUE(RenderCsv(a, "kernel_stats", &csv));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "rank,name,count,total_ns,mean_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,category\r");
  EXPECT_NE(csv.find("0,\"void gemm<float, 4>(float*, int)\",4,1000,250,200,100,400,129,400,"
                     "matmul\r\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("0,other (3 kernels),5,50,"), std::string::npos) << csv;

  ASSERT_TRUE(RenderCsv(a, "streams", &csv));
  EXPECT_NE(csv.find("0,9,1,0,0,350,200,57.14,150,50,25.00\r\n"), std::string::npos) << csv;
  ASSERT_TRUE(RenderCsv(a, "steps", &csv));
  EXPECT_NE(csv.find("0,ProfilerStep#2,decode,100,400,300,2,500,400,80.00,0,500,"),
            std::string::npos)
      << csv;
  ASSERT_TRUE(RenderCsv(a, "ranges", &csv));
  EXPECT_NE(csv.find("0,forward,55.56,3,75,25,25,5,45,20,3,600\r\n"), std::string::npos) << csv;
  ASSERT_TRUE(RenderCsv(a, "categories", &csv));
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "rank,category,time_ns,count,pct\r");
  for (const std::string& name : CsvTableNames()) EXPECT_TRUE(RenderCsv(a, name, &csv)) << name;
  EXPECT_FALSE(RenderCsv(a, "nope", &csv));
}

}  // namespace
}  // namespace inferscope::report
