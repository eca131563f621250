// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/engine_window.h"

#include <gtest/gtest.h>

#include <string>

namespace inferscope::telemetry::scrape {
namespace {

StageHistogram Hist(std::vector<double> bounds, std::vector<double> counts, double sum) {
  StageHistogram h;
  h.bounds = std::move(bounds);
  h.counts = std::move(counts);
  for (double c : h.counts) h.count += c;
  h.sum = sum;
  return h;
}

TEST(StageHistogramTest, QuantilesInterpolateLinearlyInsideBuckets) {
  const StageHistogram h = Hist({0.1, 0.2, 0.5}, {10, 20, 10, 0}, 8);
  EXPECT_DOUBLE_EQ(*h.Quantile(0.1), 0.04);  // rank 4 of 10 in (0, 0.1]
  EXPECT_DOUBLE_EQ(*h.Quantile(0.5), 0.15);  // rank 20: 10 below, 10 of 20 in (0.1, 0.2]
  EXPECT_DOUBLE_EQ(*h.Quantile(0.9), 0.38);  // rank 36: 30 below, 6 of 10 in (0.2, 0.5]
  EXPECT_DOUBLE_EQ(*h.Quantile(0.99), 0.488);
  EXPECT_DOUBLE_EQ(h.KnownMean().value_or(-1), 0.2);
}

TEST(StageHistogramTest, InfBucketGivesTheLargestFiniteBound) {
  const StageHistogram h = Hist({1, 2}, {1, 0, 9}, 100);
  EXPECT_DOUBLE_EQ(*h.Quantile(0.5), 2.0);
  EXPECT_FALSE(StageHistogram().Quantile(0.5).has_value());
  EXPECT_FALSE(Hist({1}, {0, 0}, 0).Quantile(0.5).has_value());
  StageHistogram summary;  // sum and count only
  summary.sum = 3;
  summary.count = 2;
  EXPECT_FALSE(summary.Quantile(0.5).has_value());
  EXPECT_DOUBLE_EQ(summary.KnownMean().value_or(-1), 1.5);
}

TEST(StageHistogramTest, MergeAddsEqualBoundsAndRebucketsDifferentOnes) {
  StageHistogram a = Hist({1, 2}, {4, 4, 0}, 10);
  a.Merge(Hist({1, 2}, {1, 2, 3}, 5));
  EXPECT_EQ(a.counts, (std::vector<double>{5, 6, 3}));
  EXPECT_EQ(a.count, 14);
  EXPECT_EQ(a.sum, 15);

  StageHistogram b = Hist({1, 2}, {4, 4, 0}, 10);
  b.Merge(Hist({1.5}, {3, 1}, 2));
  EXPECT_EQ(b.bounds, (std::vector<double>{1, 1.5, 2}));
  // (1,2] of the first splits 2+2 at 1.5; (0,1.5] of the second splits 2+1 at 1; +Inf stays.
  EXPECT_EQ(b.counts, (std::vector<double>{6, 3, 2, 1}));
  EXPECT_EQ(b.count, 12);
}

EngineMetricsWindow FullWindow() {
  EngineMetricsWindow w;
  w.start_unix_ns = 1'750'000'000'000'000'000;
  w.end_unix_ns = w.start_unix_ns + 10'000'000'000;
  w.engine = "vllm";
  w.AddModelName("zai-org/GLM-4.5");
  w.AddModelName("meta-llama/Llama-3.1-8B-Instruct");
  w.scrapes = 10;
  w.scrape_failures = 3;
  w.scrapes_abandoned = 2;
  w.abandoned_spanned = 1;
  w.covered_ns = 9'876'543'210;
  w.parse_bad_lines = 2;
  w.parse_dropped_series = 3;
  w.counters_present = 0b0111;  // no preemptions
  w.counters = {130, 26000.5, 9000, 0};
  w.gauges_present = 0b111;
  w.gauges[0] = {2, 12, 80, 10};
  w.gauges[1] = {0, 3, 4, 10};
  w.gauges[2] = {9.75010481363281e-06, 0.61, 4.2000123456789, 10};  // not 4-decimal values
  w.stages_present = 0b111111;
  w.stages[size_t(Stage::kTtft)] = Hist({0.001, 0.02, 0.1}, {0, 13, 127, 0}, 7.123456789);
  w.stages[size_t(Stage::kQueue)] = Hist({0.3, 0.5}, {140, 0, 0}, 0.25);
  w.stages[size_t(Stage::kPrefill)] = Hist({0.3, 0.5}, {140, 0, 0}, 2.5);
  w.stages[size_t(Stage::kE2e)].sum = 1;  // summary-only
  w.stages[size_t(Stage::kE2e)].count = 2;
  OtherSeries counter;
  counter.family = "vllm:prefix_cache_queries_total";
  counter.labels = "engine=\"0\",model_name=\"m\"";
  counter.delta = 32;
  w.other.emplace(
      "vllm:prefix_cache_queries_total\x1f"
      "0000000000000001",
      counter);
  OtherSeries gauge;
  gauge.family = "process_open_fds";
  gauge.counter = false;
  gauge.gauge = {45, 47, 92, 2};
  w.other.emplace(
      "process_open_fds\x1f"
      "0000000000000002",
      gauge);
  w.other_series_limit = 7;
  w.other_series_dropped = 4;
  return w;
}

TEST(EngineMetricsWindowTest, JsonRoundTripsExactly) {
  const EngineMetricsWindow w = FullWindow();
  base::JsonWriter out;
  w.WriteJson(out);
  auto back = EngineMetricsWindow::FromJson(out.str());
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << out.str();
  EXPECT_TRUE(*back == w) << out.str();
  base::JsonWriter again;
  back->WriteJson(again);
  EXPECT_EQ(again.str(), out.str());
  // Values 4-decimal JSON would change travel as exact strings; plain ones stay numbers.
  EXPECT_NE(out.str().find("\"9.75010481363281e-06\""), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\"requests_finished\": 130.0"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("\"preemptions\""), std::string::npos);  // not exposed: absent
  EXPECT_NE(out.str().find("\"requests_finished_per_s\": 13.0"), std::string::npos);
}

// A scraped server's model label reaches the store, the API and /metrics: a 1 MiB one is cut.
TEST(EngineMetricsWindowTest, AModelNameIsCutToItsBound) {
  EngineMetricsWindow w;
  w.AddModelName(std::string(1u << 20, 'm'));
  ASSERT_EQ(w.model_names.size(), 1u);
  EXPECT_EQ(w.model_names[0], std::string(EngineMetricsWindow::kMaxModelNameBytes, 'm'));
}

TEST(EngineMetricsWindowTest, InvalidUtf8FromTheEngineIsRepairedOnTheWayIn) {
  EXPECT_EQ(ValidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(ValidUtf8("a\xFF"
                      "b\xC0\xAF\xED\xA0\x80"),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EngineMetricsWindow w;
  w.AddModelName("llama\xFF");
  base::JsonWriter out;
  w.WriteJson(out);
  auto back = EngineMetricsWindow::FromJson(out.str());
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back == w);
  EXPECT_EQ(back->model_names.at(0), "llama\xEF\xBF\xBD");
}

TEST(EngineMetricsWindowTest, EmptyWindowRoundTrips) {
  const EngineMetricsWindow w;
  base::JsonWriter out;
  w.WriteJson(out);
  auto back = EngineMetricsWindow::FromJson(out.str());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(*back == w);
}

TEST(EngineMetricsWindowTest, RecordsStoredBeforeTheAbandonedCountsReadAsNone) {
  const EngineMetricsWindow w = FullWindow();
  base::JsonWriter out;
  w.WriteJson(out);
  std::string text = out.str();
  for (const char* key : {"\"scrapes_abandoned\": 2,", "\"abandoned_spanned\": 1,"}) {
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key << " in " << text;
    text.erase(at, std::string(key).size());
  }
  auto back = EngineMetricsWindow::FromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
  EXPECT_EQ(back->scrapes_abandoned, 0u);
  EXPECT_EQ(back->abandoned_spanned, 0u);
  EXPECT_EQ(back->scrape_failures, 3u);
  // Present but mistyped is an error, as for the other header fields.
  std::string bad = out.str();
  bad.replace(bad.find("\"scrapes_abandoned\": 2"), 22, "\"scrapes_abandoned\": \"x\"");
  EXPECT_FALSE(EngineMetricsWindow::FromJson(bad).ok()) << bad;
}

TEST(EngineMetricsWindowTest, FromJsonRejectsMalformedInput) {
  EXPECT_FALSE(EngineMetricsWindow::FromJson("").ok());
  EXPECT_FALSE(EngineMetricsWindow::FromJson("[]").ok());
  EXPECT_FALSE(EngineMetricsWindow::FromJson("{\"start_unix_ns\": 1}").ok());
  base::JsonWriter out;
  FullWindow().WriteJson(out);
  std::string text = out.str();
  const size_t at = text.find("\"ttft\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 6, "\"tfft\"");
  const auto bad = EngineMetricsWindow::FromJson(text);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown stage tfft"), std::string::npos);
}

TEST(EngineMetricsWindowTest, MergeSumsCountersAndBucketsAndBoundsOtherSeries) {
  EngineMetricsWindow a = FullWindow();
  EngineMetricsWindow b = FullWindow();
  b.start_unix_ns = a.end_unix_ns;
  b.end_unix_ns = a.end_unix_ns + 10'000'000'000;
  b.engine = "sglang";
  b.AddModelName("other-model");
  b.counters_present = 0b1000;  // only preemptions
  b.counters = {0, 0, 0, 5};
  b.gauges[0] = {1, 20, 30, 3};
  b.other.clear();
  OtherSeries extra;
  extra.family = "new_family";
  extra.delta = 1;
  b.other.emplace(
      "new_family\x1f"
      "01",
      extra);
  b.other.emplace(
      "process_open_fds\x1f"
      "0000000000000002",
      a.other.at("process_open_fds\x1f"
                 "0000000000000002"));
  a.other_series_limit = 2;  // already full: the new series is dropped, the known one merges
  a.Merge(b);
  EXPECT_EQ(a.start_unix_ns, FullWindow().start_unix_ns);
  EXPECT_EQ(a.end_unix_ns, b.end_unix_ns);
  EXPECT_EQ(a.engine, "mixed");
  EXPECT_EQ(a.model_names.size(), 3u);
  EXPECT_EQ(a.scrapes, 20u);
  EXPECT_EQ(a.counters_present, 0b1111u);
  EXPECT_EQ(a.counter(CounterSignal::kRequestsFinished), 130);
  EXPECT_EQ(a.counter(CounterSignal::kPreemptions), 5);
  EXPECT_EQ(a.gauge(GaugeSignal::kRunningRequests), (GaugeStats{1, 20, 110, 13}));
  EXPECT_EQ(a.stage(Stage::kTtft).counts, (std::vector<double>{0, 26, 254, 0}));
  EXPECT_EQ(a.other.size(), 2u);
  EXPECT_EQ(a.other_series_dropped, 8u + 1u);
  EXPECT_EQ(a.other
                .at("process_open_fds\x1f"
                    "0000000000000002")
                .gauge.samples,
            4u);
  // 130 requests over 20 s of wall span.
  EXPECT_DOUBLE_EQ(*a.Rate(CounterSignal::kRequestsFinished), 6.5);
}

TEST(EngineMetricsWindowTest, FrontendOverheadIsReportedAsIsEvenWhenNegative) {
  EngineMetricsWindow w = FullWindow();
  // ttft mean 7.123456789/140, queue 0.25/140, prefill 2.5/140.
  EXPECT_DOUBLE_EQ(*w.FrontendOverheadMean(), (7.123456789 - 0.25 - 2.5) / 140);
  w.stages[size_t(Stage::kPrefill)].sum = 10;
  EXPECT_LT(*w.FrontendOverheadMean(), 0);
  w.stages_present &= ~(1u << size_t(Stage::kQueue));
  EXPECT_FALSE(w.FrontendOverheadMean().has_value());
}

TEST(EngineMetricsWindowTest, RendersAFewLines) {
  std::string text;
  RenderEngineMetricsText(FullWindow(), &text);
  EXPECT_NE(text.find("engine vllm serving meta-llama/Llama-3.1-8B-Instruct, zai-org/GLM-4.5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("requests 13.0/s"), std::string::npos) << text;
  EXPECT_NE(text.find("generation 900 tok/s"), std::string::npos) << text;
  EXPECT_NE(text.find("running 8.0 (min 2, max 12)"), std::string::npos) << text;
  EXPECT_NE(text.find("ttft"), std::string::npos) << text;
  EXPECT_NE(text.find("frontend overhead"), std::string::npos) << text;
  text.clear();
  RenderEngineMetricsText(EngineMetricsWindow(), &text);
  EXPECT_EQ(text, "engine metrics: none\n");
}

}  // namespace
}  // namespace inferscope::telemetry::scrape
