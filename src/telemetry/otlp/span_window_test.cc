// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/otlp/span_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace inferscope::telemetry::otlp {
namespace {

SpanRecord Request(int64_t e2e_ns, std::string hash, std::string model = "m") {
  SpanRecord r;
  r.role = SpanRole::kRequest;
  r.name = "llm_request";
  r.start_unix_ns = 1'000'000'000'000;
  r.end_unix_ns = r.start_unix_ns + static_cast<uint64_t>(e2e_ns);
  r.request_hash = std::move(hash);
  r.model = std::move(model);
  r.service = "vllm";
  r.prompt_tokens = 100;
  r.completion_tokens = 10;
  r.sampling.temperature = 0.7;
  r.sampling.max_tokens = 64;
  r.stage_ns[static_cast<size_t>(Stage::kE2e)] = e2e_ns;
  r.stage_ns[static_cast<size_t>(Stage::kQueue)] = e2e_ns / 10;
  r.stage_ns[static_cast<size_t>(Stage::kTtft)] = e2e_ns / 5;
  return r;
}

TEST(LatencyHistogramTest, BucketBoundsAreFixedAndLogScale) {
  const auto& b = LatencyHistogram::BoundsNs();
  ASSERT_EQ(b.size(), 42u);
  EXPECT_EQ(b.front(), 100'000);  // 100 us
  EXPECT_EQ(b[1], 150'000);
  EXPECT_EQ(b[6], 1'000'000);            // 1 ms
  EXPECT_EQ(b.back(), 700'000'000'000);  // 700 s (> 10 min)
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
  EXPECT_EQ(LatencyHistogram::BucketFor(0), 0u);
  EXPECT_EQ(LatencyHistogram::BucketFor(99'999), 0u);
  EXPECT_EQ(LatencyHistogram::BucketFor(100'000), 1u);  // bounds are exclusive upper edges
  EXPECT_EQ(LatencyHistogram::BucketFor(int64_t{1} << 62), b.size());
}

TEST(LatencyHistogramTest, PercentilesFromBucketsAreCloseToExact) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(std::log(0.2e9), 0.8);  // ~200 ms median
  std::vector<int64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 20000; ++i) {
    auto v = static_cast<int64_t>(dist(rng));
    values.push_back(v);
    h.Add(v);
  }
  std::sort(values.begin(), values.end());
  EXPECT_EQ(h.count(), values.size());
  EXPECT_EQ(h.min_ns(), values.front());
  EXPECT_EQ(h.max_ns(), values.back());
  for (double q : {0.5, 0.9, 0.99}) {
    double exact = static_cast<double>(values[static_cast<size_t>(q * values.size()) - 1]);
    double est = static_cast<double>(h.PercentileNs(q));
    // A bucket spans at most a factor 1.5 (from 1.0 to 1.5); interpolation does far better.
    EXPECT_NEAR(est / exact, 1.0, 0.08) << q;
  }
  EXPECT_EQ(h.PercentileNs(1.0), h.max_ns());
}

TEST(LatencyHistogramTest, SmallCountsAndEmpty) {
  LatencyHistogram h;
  EXPECT_EQ(h.PercentileNs(0.5), 0);
  h.Add(5'000'000);
  EXPECT_EQ(h.PercentileNs(0.5), 5'000'000);  // clamped to [min, max]
  EXPECT_EQ(h.PercentileNs(0.99), 5'000'000);
  h.Add(-1);  // ignored
  EXPECT_EQ(h.count(), 1u);
}

TEST(LatencyHistogramTest, MergeIsBucketAddition) {
  LatencyHistogram a, b, all;
  for (int64_t v : {int64_t{50'000}, int64_t{2'000'000}, int64_t{900'000'000}}) {
    a.Add(v);
    all.Add(v);
  }
  for (int64_t v : {int64_t{1'000'000'000'000}, int64_t{3'000'000}}) {
    b.Add(v);
    all.Add(v);
  }
  LatencyHistogram empty;
  a.Merge(empty);
  a.Merge(b);
  EXPECT_EQ(a, all);
  empty.Merge(all);
  EXPECT_EQ(empty, all);
}

TEST(SpanWindowTest, AddsRequestsAndStageSpans) {
  SpanWindow w;
  w.Add(Request(1'000'000'000, "aa"));
  SpanRecord stage;
  stage.role = SpanRole::kStage;
  stage.stage_ns[static_cast<size_t>(Stage::kPrefill)] = 30'000'000;
  w.Add(stage);
  SpanRecord other;
  other.stage_ns[0] = 5;
  w.Add(other);  // role kOther: ignored
  EXPECT_EQ(w.requests, 1u);
  EXPECT_EQ(w.prompt_tokens, 100u);
  EXPECT_EQ(w.completion_tokens, 10u);
  EXPECT_EQ(w.stage(Stage::kE2e).count(), 1u);
  EXPECT_EQ(w.stage(Stage::kQueue).sum_ns(), 100'000'000);
  EXPECT_EQ(w.stage(Stage::kPrefill).count(), 1u);
  EXPECT_EQ(w.requests_per_model.at("m"), 1u);
  ASSERT_EQ(w.exemplars.size(), 1u);
  EXPECT_EQ(w.exemplars[0].request_hash, "aa");
}

TEST(SpanWindowTest, ExemplarsKeepTheSlowestN) {
  SpanWindow w;
  w.max_exemplars = 3;
  for (int i = 1; i <= 20; ++i) w.Add(Request(int64_t{i} * 10'000'000, "h" + std::to_string(i)));
  ASSERT_EQ(w.exemplars.size(), 3u);
  EXPECT_EQ(w.exemplars[0].request_hash, "h20");
  EXPECT_EQ(w.exemplars[1].request_hash, "h19");
  EXPECT_EQ(w.exemplars[2].request_hash, "h18");
  EXPECT_EQ(w.exemplars[0].e2e_ns(), 200'000'000);
}

TEST(SpanWindowTest, MergeEqualsAddingEverythingToOneWindow) {
  std::mt19937 rng(3);
  std::vector<SpanRecord> spans;
  for (int i = 0; i < 300; ++i)
    spans.push_back(Request(1'000'000 + int64_t(rng() % 5'000'000'000), "h" + std::to_string(i),
                            "model" + std::to_string(i % 3)));
  SpanWindow all, a, b, c;
  all.start_unix_ns = a.start_unix_ns = 100;
  all.end_unix_ns = c.end_unix_ns = 400;
  a.end_unix_ns = b.start_unix_ns = 200;
  b.end_unix_ns = c.start_unix_ns = 300;
  for (size_t i = 0; i < spans.size(); ++i) {
    all.Add(spans[i]);
    (i % 3 == 0 ? a : i % 3 == 1 ? b : c).Add(spans[i]);
  }
  a.counters.spans_received = 5;
  c.counters.dropped_late = 2;
  all.counters = a.counters;
  all.counters.Merge(c.counters);
  // Merge order must not matter.
  SpanWindow m1 = a;
  m1.Merge(b);
  m1.Merge(c);
  SpanWindow m2 = c;
  m2.Merge(a);
  m2.Merge(b);
  EXPECT_EQ(m1, all);
  EXPECT_EQ(m2, all);
  // Merging into a default-constructed window takes the other's range.
  SpanWindow fresh;
  fresh.Merge(all);
  EXPECT_EQ(fresh.start_unix_ns, 100u);
  EXPECT_EQ(fresh.end_unix_ns, 400u);
}

TEST(SpanWindowTest, ModelCountIsBounded) {
  SpanWindow w;
  for (size_t i = 0; i < SpanWindow::kMaxModels + 10; ++i)
    w.Add(Request(1'000'000, "h", "model-" + std::to_string(i)));
  EXPECT_EQ(w.requests_per_model.size(), SpanWindow::kMaxModels + 1);
  EXPECT_EQ(w.requests_per_model.at("(other)"), 10u);
}

SpanWindow RichWindow() {
  SpanWindow w;
  w.start_unix_ns = 1'700'000'000'000'000'000;
  w.end_unix_ns = 1'700'000'010'000'000'000;
  for (int i = 0; i < 30; ++i) {
    SpanRecord r = Request(int64_t{i} * 37'000'123 + 1, "h" + std::to_string(i),
                           i % 2 ? "llama \"quoted\"" : "");
    r.sampling.top_p = 0.9123;
    r.sampling.top_k = i % 3 ? std::optional<double>(40) : std::nullopt;
    r.stage_ns[static_cast<size_t>(Stage::kDecode)] = i % 4 ? -1 : i * 1000;
    w.Add(r);
  }
  w.counters.spans_received = 44;
  w.counters.dropped_bad_timestamps = 3;
  w.counters.requests_rejected = 1;
  return w;
}

TEST(SpanWindowTest, JsonRoundTripIsExact) {
  SpanWindow w = RichWindow();
  std::string json = w.ToJson();
  auto back = SpanWindow::FromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, w);
  EXPECT_EQ(back->ToJson(), json);
  // Empty window too.
  SpanWindow empty;
  auto e = SpanWindow::FromJson(empty.ToJson());
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(*e, empty);
}

TEST(SpanWindowTest, FromJsonRejectsBadInput) {
  EXPECT_FALSE(SpanWindow::FromJson("").ok());
  EXPECT_FALSE(SpanWindow::FromJson("[]").ok());
  EXPECT_FALSE(SpanWindow::FromJson("{}").ok());
  std::string json = RichWindow().ToJson();
  // Bucket counts that no longer sum to the count.
  std::string broken = json;
  size_t pos = broken.find("\"count\": 30");
  ASSERT_NE(pos, std::string::npos);
  broken.replace(pos, 11, "\"count\": 31");
  EXPECT_FALSE(SpanWindow::FromJson(broken).ok());
}

TEST(SpanWindowTest, RenderText) {
  std::string text;
  RenderSpanText(RichWindow(), &text);
  EXPECT_NE(text.find("Request spans: 30 requests"), std::string::npos) << text;
  EXPECT_NE(text.find("e2e"), std::string::npos);
  EXPECT_NE(text.find("p99"), std::string::npos);
  EXPECT_NE(text.find("slowest requests"), std::string::npos);
  EXPECT_NE(text.find("h29"), std::string::npos);  // the slowest
  EXPECT_NE(text.find("\n  dropped: 3 spans with missing or reversed timestamps\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  rejected: 1 exports ("), std::string::npos) << text;
  std::string empty;
  RenderSpanText(SpanWindow{}, &empty);
  EXPECT_NE(empty.find("no request spans"), std::string::npos);
  EXPECT_EQ(empty.find("dropped"), std::string::npos) << empty;
  EXPECT_EQ(empty.find("rejected"), std::string::npos) << empty;
}

// A drop note cut to "(14 spans dropped, 0 exports reje..." at 100 columns would not say why:
// every reason gets a line of its own that fits, with its count.
TEST(SpanWindowTest, DropsAreReportedByReasonWithinHundredColumns) {
  SpanWindow w;
  w.requests = 123'456'789;
  w.prompt_tokens = 987'654'321'000;
  w.completion_tokens = 123'456'789'000;
  w.counters.dropped_late = 52'000'000'000;
  w.counters.dropped_over_limit = 2;
  w.counters.dropped_bad_timestamps = 3;
  w.counters.dropped_future = 4;
  w.counters.dropped_buffer_full = 5;
  w.counters.requests_rejected = 6'000'000'000;
  std::string text;
  RenderSpanText(w, &text);
  for (const std::string needle :
       {"dropped: 52000000000 spans late: arrived after their window's grace period",
        "dropped: 2 spans over the per-export span limit",
        "dropped: 3 spans with missing or reversed timestamps",
        "dropped: 4 spans ending over an hour after the window",
        "dropped: 5 spans lost to a full pending-span buffer", "rejected: 6000000000 exports"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
    start = end + 1;
  }
  EXPECT_EQ(DroppedSpans(w.counters), 52'000'000'014u);
  EXPECT_EQ(DescribeDrops(w.counters),
            "52000000000 late: arrived after their window's grace period (agent "
            "--span-grace); 2 over the per-export span limit; 3 with missing or reversed "
            "timestamps; 4 ending over an hour after the window (clock skew); 5 lost to a full "
            "pending-span buffer");
  EXPECT_EQ(DescribeDrops(SpanCounters{}), "");
}

}  // namespace
}  // namespace inferscope::telemetry::otlp
