// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/cost.h"

#include <gtest/gtest.h>

namespace inferscope::analyze {
namespace {

// Two H100s, each 80% busy: attention 3/4 and matmul 1/4 of kernel time.
Analysis TwoGpus(const char* device_name = "NVIDIA H100 80GB HBM3") {
  Analysis a;
  for (uint32_t d = 0; d < 2; ++d) {
    RankAnalysis r;
    r.hostname = "node1";
    r.device = d;
    r.device_name = device_name;
    a.ranks.push_back(r);
  }
  a.ranks.push_back(a.ranks[0]);  // a second process on GPU 0: still two GPUs
  a.summary.temporal.span_ns = 1'000'000'000;
  a.summary.temporal.busy_ns = 800'000'000;
  a.summary.kernel_time_ns = 1'000'000'000;  // overlapping kernels: more than busy
  a.summary.categories = {
      {"attention", 750'000'000, 10, 0}, {"matmul", 250'000'000, 10, 0}, {"moe", 0, 0, 0}};
  return a;
}

TEST(CostTest, PerRequestAndPerTokenWithSplits) {
  CostInputs in;
  in.gpu_hourly_usd = 3.6;  // $0.001 per GPU-second
  in.requests_per_s = 4;
  in.generation_tokens_per_s = 2000;
  in.queue_mean_s = 0.5;
  in.prefill_mean_s = 0.25;
  in.decode_mean_s = 1.0;
  in.e2e_mean_s = 2.0;
  const Cost c = ComputeCost(TwoGpus(), in);
  ASSERT_TRUE(c.available) << c.reason;
  EXPECT_EQ(c.gpus, 2u);
  EXPECT_DOUBLE_EQ(c.usd_per_hour, 7.2);
  EXPECT_DOUBLE_EQ(*c.usd_per_request, 0.002 / 4);
  EXPECT_DOUBLE_EQ(*c.usd_per_million_tokens, 0.002 / 2000 * 1e6);
  ASSERT_EQ(c.by_category.size(), 3u);  // attention, matmul, idle (no zero categories)
  EXPECT_EQ(c.by_category[0].name, "attention");
  EXPECT_DOUBLE_EQ(c.by_category[0].share, 0.8 * 0.75);
  EXPECT_EQ(c.by_category[2].name, "idle");
  EXPECT_NEAR(c.by_category[2].share, 0.2, 1e-12);
  double sum = 0;
  for (const CostShare& s : c.by_category) sum += s.share;
  EXPECT_NEAR(sum, 1.0, 1e-12);
  ASSERT_EQ(c.by_stage.size(), 4u);
  EXPECT_DOUBLE_EQ(c.by_stage[0].share, 0.25);        // queue
  EXPECT_DOUBLE_EQ(c.by_stage[3].share, 0.25 / 2.0);  // other: 2 - 1.75 s
  EXPECT_DOUBLE_EQ(*c.by_stage[2].usd_per_request, 0.0005 * 0.5);

  std::string text;
  RenderCostText(c, &text);
  EXPECT_NE(text.find("2 GPUs at $7.20/h"), std::string::npos) << text;
  // $0.0005 per request: three significant digits, not six fixed decimals.
  EXPECT_NE(text.find(", $0.000500 per request"), std::string::npos) << text;
  EXPECT_NE(text.find(", $1.00 per million generated tokens"), std::string::npos) << text;
  EXPECT_NE(text.find("attention"), std::string::npos) << text;
  base::JsonWriter w;
  WriteCostJson(c, w);
  EXPECT_NE(w.str().find("\"usd_per_1k_requests\": 0.5,"), std::string::npos) << w.str();
}

TEST(CostTest, PriceTableByModelAndMissingPrices) {
  auto table = ParseGpuPriceTable(
      "# USD per GPU-hour\n"
      "\"A100-SXM4-80GB\" = 1.8\n"
      "h100 = 2.5   # case-insensitive substring\n");
  ASSERT_TRUE(table.ok()) << table.status().message();
  CostInputs in;
  in.table = *table;
  Cost c = ComputeCost(TwoGpus(), in);
  ASSERT_TRUE(c.available) << c.reason;
  EXPECT_DOUBLE_EQ(c.usd_per_hour, 5.0);
  EXPECT_FALSE(c.usd_per_request.has_value());  // no engine rates

  c = ComputeCost(TwoGpus("NVIDIA L4"), in);
  EXPECT_FALSE(c.available);
  EXPECT_NE(c.reason.find("no price for GPU 'NVIDIA L4'"), std::string::npos) << c.reason;
  in.table.default_usd_per_hour = 0.8;
  c = ComputeCost(TwoGpus("NVIDIA L4"), in);
  EXPECT_DOUBLE_EQ(c.usd_per_hour, 1.6);
}

TEST(CostTest, PriceTableErrorsNameTheLine) {
  for (const char* bad :
       {"H100 2.5\n", "H100 = cheap\n", "= 2\n", "ok = 1\nH100 = -1\n", "H100 = 2.5x\n"}) {
    auto t = ParseGpuPriceTable(bad);
    EXPECT_FALSE(t.ok()) << bad;
    if (!t.ok()) {
      EXPECT_EQ(t.status().message().rfind("line ", 0), 0u) << t.status().message();
    }
  }
  auto t = ParseGpuPriceTable("ok = 1\nH100 = -1\n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("line 2"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::analyze
