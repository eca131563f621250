// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/prometheus_text.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>

namespace inferscope::telemetry::scrape {
namespace {

const MetricFamily& Get(const Exposition& e, std::string_view name) {
  const MetricFamily* f = e.Find(name);
  EXPECT_NE(f, nullptr) << name;
  static const MetricFamily kEmpty;
  return f ? *f : kEmpty;
}

TEST(PrometheusTextTest, HelpTypeAndSimpleSamples) {
  const Exposition e = ParsePrometheusText(
      "# HELP requests_total Requests seen, with a \\\\ and a \\n in it.\n"
      "# TYPE requests_total counter\n"
      "requests_total{method=\"GET\",code=\"200\"} 1027 1395066363000\n"
      "requests_total{method=\"POST\",code=\"200\"} 3\n"
      "# TYPE temperature gauge\n"
      "temperature -3.5e1\n");
  EXPECT_EQ(e.stats.bad_lines, 0u) << e.stats.first_error;
  ASSERT_EQ(e.families.size(), 2u);
  const MetricFamily& requests = Get(e, "requests_total");
  EXPECT_EQ(requests.type, MetricType::kCounter);
  EXPECT_TRUE(requests.declared);
  EXPECT_EQ(requests.help, "Requests seen, with a \\ and a \n in it.");
  ASSERT_EQ(requests.samples.size(), 2u);
  EXPECT_EQ(requests.samples[0].role, SampleRole::kValue);
  EXPECT_EQ(requests.samples[0].value, 1027);
  EXPECT_TRUE(requests.samples[0].has_timestamp);
  EXPECT_EQ(requests.samples[0].timestamp_ms, 1395066363000);
  EXPECT_FALSE(requests.samples[1].has_timestamp);
  ASSERT_EQ(requests.samples[0].labels.size(), 2u);
  EXPECT_EQ(requests.samples[0].labels[1].name, "code");
  EXPECT_EQ(*requests.samples[1].FindLabel("method"), "POST");
  EXPECT_EQ(Get(e, "temperature").samples[0].value, -35);
  EXPECT_EQ(e.stats.samples, 3u);
  EXPECT_EQ(e.stats.lines, 6u);
}

TEST(PrometheusTextTest, LabelEscapesAndSpacing) {
  const Exposition e = ParsePrometheusText(
      "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find "
      "file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
      "spaced { a = \"x\" , b=\"y\", } \t 2\n"
      "odd_escape{a=\"\\q\"} 1\n"
      "empty_labels{} 4\n");
  EXPECT_EQ(e.stats.bad_lines, 0u) << e.stats.first_error;
  const Sample& s = Get(e, "msdos_file_access_time_seconds").samples.at(0);
  EXPECT_EQ(*s.FindLabel("path"), "C:\\DIR\\FILE.TXT");
  EXPECT_EQ(*s.FindLabel("error"), "Cannot find file:\n\"FILE.TXT\"");
  EXPECT_EQ(s.value, 1458255915.0);
  const Sample& spaced = Get(e, "spaced").samples.at(0);
  EXPECT_EQ(*spaced.FindLabel("a"), "x");
  EXPECT_EQ(*spaced.FindLabel("b"), "y");
  EXPECT_EQ(spaced.value, 2);
  EXPECT_EQ(*Get(e, "odd_escape").samples.at(0).FindLabel("a"), "\\q");  // kept verbatim
  EXPECT_TRUE(Get(e, "empty_labels").samples.at(0).labels.empty());
}

TEST(PrometheusTextTest, SpecialFloats) {
  double v;
  EXPECT_TRUE(ParsePrometheusFloat("+Inf", &v));
  EXPECT_TRUE(std::isinf(v) && v > 0);
  EXPECT_TRUE(ParsePrometheusFloat("-Inf", &v));
  EXPECT_TRUE(std::isinf(v) && v < 0);
  EXPECT_TRUE(ParsePrometheusFloat("NaN", &v));
  EXPECT_TRUE(std::isnan(v));
  EXPECT_TRUE(ParsePrometheusFloat("1.7537953269352946e+09", &v));
  EXPECT_EQ(v, 1.7537953269352946e+09);
  EXPECT_TRUE(ParsePrometheusFloat("+3", &v));
  EXPECT_EQ(v, 3);
  EXPECT_TRUE(ParsePrometheusFloat("1e400", &v));
  EXPECT_TRUE(std::isinf(v));
  EXPECT_TRUE(ParsePrometheusFloat("1e-400", &v));
  EXPECT_EQ(v, 0);
  EXPECT_FALSE(ParsePrometheusFloat("", &v));
  EXPECT_FALSE(ParsePrometheusFloat("+", &v));
  EXPECT_FALSE(ParsePrometheusFloat("--1", &v));
  EXPECT_FALSE(ParsePrometheusFloat("1.0x", &v));
  EXPECT_FALSE(ParsePrometheusFloat("0x10", &v));

  const Exposition e = ParsePrometheusText("a +Inf\nb -Inf\nc NaN\n");
  EXPECT_EQ(e.stats.bad_lines, 0u);
  EXPECT_TRUE(std::isinf(Get(e, "a").samples.at(0).value));
  EXPECT_TRUE(std::isnan(Get(e, "c").samples.at(0).value));
}

TEST(PrometheusTextTest, HistogramAndSummaryGroupUnderTheirFamily) {
  const Exposition e = ParsePrometheusText(
      "# TYPE vllm:iteration_tokens_total histogram\n"
      "vllm:iteration_tokens_total_bucket{le=\"1.0\"} 2\n"
      "vllm:iteration_tokens_total_bucket{le=\"+Inf\"} 5\n"
      "vllm:iteration_tokens_total_sum 40\n"
      "vllm:iteration_tokens_total_count 5\n"
      "# TYPE rpc_duration_seconds summary\n"
      "rpc_duration_seconds{quantile=\"0.5\"} 4773\n"
      "rpc_duration_seconds_sum 1.7560473e+07\n"
      "rpc_duration_seconds_count 2693\n"
      "rpc_duration_seconds_created 1.7e9\n");
  EXPECT_EQ(e.stats.bad_lines, 0u) << e.stats.first_error;
  ASSERT_EQ(e.families.size(), 2u);  // a histogram whose name ends in _total stays one family
  const MetricFamily& h = Get(e, "vllm:iteration_tokens_total");
  EXPECT_EQ(h.type, MetricType::kHistogram);
  ASSERT_EQ(h.samples.size(), 4u);
  EXPECT_EQ(h.samples[0].role, SampleRole::kBucket);
  EXPECT_EQ(*h.samples[1].FindLabel("le"), "+Inf");
  EXPECT_EQ(h.samples[2].role, SampleRole::kSum);
  EXPECT_EQ(h.samples[3].role, SampleRole::kCount);
  const MetricFamily& s = Get(e, "rpc_duration_seconds");
  ASSERT_EQ(s.samples.size(), 4u);
  EXPECT_EQ(s.samples[0].role, SampleRole::kValue);
  EXPECT_EQ(s.samples[3].role, SampleRole::kCreated);
}

TEST(PrometheusTextTest, ExactFamilyNamesNeverMixPrefixes) {
  const Exposition e = ParsePrometheusText(
      "# TYPE vllm:num_requests_waiting gauge\n"
      "vllm:num_requests_waiting{engine=\"0\"} 3\n"
      "# TYPE vllm:num_requests_waiting_by_reason gauge\n"
      "vllm:num_requests_waiting_by_reason{engine=\"0\",reason=\"capacity\"} 2\n"
      "vllm:num_requests_waiting_by_reason{engine=\"0\",reason=\"deferred\"} 1\n"
      // No # TYPE: an untyped family with its own exact name, even though it looks like a
      // histogram bucket of a family declared above.
      "# TYPE other gauge\n"
      "other_bucket{le=\"1\"} 1\n");
  EXPECT_EQ(Get(e, "vllm:num_requests_waiting").samples.size(), 1u);
  EXPECT_EQ(Get(e, "vllm:num_requests_waiting_by_reason").samples.size(), 2u);
  const MetricFamily& untyped = Get(e, "other_bucket");
  EXPECT_EQ(untyped.type, MetricType::kUntyped);
  EXPECT_FALSE(untyped.declared);
  EXPECT_TRUE(Get(e, "other").samples.empty());
}

TEST(PrometheusTextTest, PrometheusClientCountersAndOpenMetricsCounters) {
  // prometheus_client text 0.0.4: the counter is declared with _total, _created is a gauge.
  const Exposition classic = ParsePrometheusText(
      "# TYPE vllm:prompt_tokens_total counter\n"
      "vllm:prompt_tokens_total{model_name=\"m\"} 10.0\n"
      "# TYPE vllm:prompt_tokens_created gauge\n"
      "vllm:prompt_tokens_created{model_name=\"m\"} 1.7e9\n");
  EXPECT_EQ(classic.families.size(), 2u);
  EXPECT_EQ(Get(classic, "vllm:prompt_tokens_total").samples.at(0).role, SampleRole::kValue);
  // OpenMetrics: declared without _total; _total and _created samples belong to it; # UNIT and
  // # EOF are accepted, and nothing after # EOF is read.
  const Exposition om = ParsePrometheusText(
      "# TYPE foo_seconds counter\n"
      "# UNIT foo_seconds seconds\n"
      "# HELP foo_seconds Time.\n"
      "foo_seconds_total 17.0 1520879607.789 # {trace_id=\"abc\"} 1.0 1520879607.7\n"
      "foo_seconds_created 1520430000.123\n"
      "# EOF\n"
      "not parsed\n");
  EXPECT_EQ(om.stats.bad_lines, 0u) << om.stats.first_error;
  EXPECT_TRUE(om.stats.saw_eof);
  ASSERT_EQ(om.families.size(), 1u);
  const MetricFamily& f = om.families[0];
  EXPECT_EQ(f.unit, "seconds");
  ASSERT_EQ(f.samples.size(), 2u);
  EXPECT_EQ(f.samples[0].role, SampleRole::kTotal);
  EXPECT_EQ(f.samples[0].timestamp_ms, 1520879607789);
  EXPECT_EQ(f.samples[1].role, SampleRole::kCreated);
}

TEST(PrometheusTextTest, BadLinesAreCountedAndSkipped) {
  const Exposition e = ParsePrometheusText(
      "good 1\n"
      "no_value\n"
      "bad_value abc\n"
      "1starts_with_digit 1\n"
      "unterminated{a=\"x 1\n"
      "no_equals{a\"x\"} 1\n"
      "dup{a=\"1\",a=\"2\"} 1\n"
      "bad_ts 1 12x\n"
      "trailing 1 2 3\n"
      "# TYPE t wibble\n"
      "# TYPE 9bad counter\n"
      "# TYPE good counter\n"  // after its samples: refused
      "\r\n"
      "   \n"
      "# just a comment\n"
      "also_good{x=\"1\"} 2\r\n");
  EXPECT_EQ(e.stats.bad_lines, 11u);
  EXPECT_EQ(e.stats.first_error, "line 2: sample without a value");
  EXPECT_EQ(e.stats.samples, 2u);
  EXPECT_EQ(Get(e, "good").type, MetricType::kUntyped);
  EXPECT_EQ(Get(e, "also_good").samples.at(0).value, 2);
}

TEST(PrometheusTextTest, ConflictingTypeIsRefusedAndRepeatedTypeContinues) {
  const Exposition e = ParsePrometheusText(
      "# TYPE x gauge\n"
      "x{a=\"1\"} 1\n"
      "# TYPE x gauge\n"
      "x{a=\"2\"} 2\n"
      "# TYPE x counter\n");
  EXPECT_EQ(e.stats.bad_lines, 1u);
  EXPECT_EQ(Get(e, "x").type, MetricType::kGauge);
  EXPECT_EQ(Get(e, "x").samples.size(), 2u);
}

TEST(PrometheusTextTest, SeriesAndBodyBounds) {
  std::string body;
  for (int i = 0; i < 50; ++i) body += "m{i=\"" + std::to_string(i) + "\"} 1\n";
  ParseOptions options;
  options.max_series = 20;
  Exposition e = ParsePrometheusText(body, options);
  EXPECT_EQ(e.stats.samples, 20u);
  EXPECT_EQ(e.stats.dropped_series, 30u);
  EXPECT_EQ(Get(e, "m").samples.size(), 20u);

  options = ParseOptions();
  options.max_body_bytes = 25;  // "m{i=\"0\"} 1\n" is 11 bytes: two lines fit, the third is cut
  e = ParsePrometheusText(body, options);
  EXPECT_EQ(e.stats.samples, 2u);
  EXPECT_EQ(e.stats.truncated_bytes, body.size() - 22);
  EXPECT_EQ(e.stats.bad_lines, 0u);
}

TEST(PrometheusTextTest, NoTrailingNewlineAndEmptyBody) {
  EXPECT_EQ(ParsePrometheusText("").families.size(), 0u);
  const Exposition e = ParsePrometheusText("a 1");
  EXPECT_EQ(Get(e, "a").samples.at(0).value, 1);
}

TEST(PrometheusTextTest, ParsesOneMegabyteInAFewMilliseconds) {
  // A vLLM-like body: histograms with ~20 buckets and 4 label pairs per series.
  std::string body;
  int series = 0;
  for (int family = 0; body.size() < (1u << 20); ++family) {
    const std::string name = "vllm:family_" + std::to_string(family) + "_seconds";
    body += "# HELP " + name + " Histogram of something in seconds.\n";
    body += "# TYPE " + name + " histogram\n";
    for (int engine = 0; engine < 4; ++engine) {
      const std::string labels = "engine=\"" + std::to_string(engine) +
                                 "\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"";
      for (int b = 0; b < 20; ++b) {
        body += name + "_bucket{" + labels + ",le=\"" + std::to_string(0.001 * (1 << b)) + "\"} " +
                std::to_string(b * 13) + ".0\n";
        ++series;
      }
      body += name + "_bucket{" + labels + ",le=\"+Inf\"} 260.0\n";
      body += name + "_sum{" + labels + "} 1.2345678e+02\n";
      body += name + "_count{" + labels + "} 260.0\n";
      series += 3;
    }
  }
  ParseOptions options;
  options.max_series = 100000;
  const auto start = std::chrono::steady_clock::now();
  const Exposition e = ParsePrometheusText(body, options);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(e.stats.bad_lines, 0u);
  EXPECT_EQ(e.stats.samples, uint64_t(series));
  std::printf("parsed %zu bytes, %d samples in %.2f ms\n", body.size(), series, ms);
  // Generous for sanitizer and debug builds; the benchmark-grade figure is in the docs.
  EXPECT_LT(ms, 3000.0);
}

}  // namespace
}  // namespace inferscope::telemetry::scrape
