// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/engine_scraper.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "src/telemetry/scrape/engine_map.h"

namespace inferscope::telemetry::scrape {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kT0 = 1'750'000'000 * kSecond;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string EngineData(const std::string& name) {
  const std::filesystem::path path =
      std::filesystem::path(INFERSCOPE_SOURCE_DIR) / "tests/data/engine_metrics" / name;
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
  return ReadFile(path);
}

double Sum(const std::vector<CounterSeries>& series) {
  double total = 0;
  for (const CounterSeries& s : series) total += s.value;
  return total;
}

double Count(const std::vector<HistogramSeries>& series) {
  double total = 0;
  for (const HistogramSeries& s : series) total += s.count;
  return total;
}

bool Has(uint32_t mask, auto signal) { return mask >> size_t(signal) & 1; }

// ---- Mapping of real and hand-written expositions ------------------------------------------

TEST(EngineMapTest, RealVllmSample) {
  const std::filesystem::path path = std::filesystem::path(INFERSCOPE_SOURCE_DIR) / ".." /
                                     "shared" / "reference" / "vllm-metrics-sample.txt";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " not found: this test needs ../shared/reference beside the checkout";
  const Exposition e = ParsePrometheusText(ReadFile(path));
  // The file is excerpts: blocks C and D start mid-histogram without # TYPE, so their samples
  // are untyped families of their own exact names (the two `_bucket` names); every other family
  // is declared: 20 # TYPE lines name 19 families (vllm:num_requests_running twice, in blocks E
  // and F). 62 sample lines in all.
  EXPECT_EQ(e.stats.bad_lines, 0u) << e.stats.first_error;
  EXPECT_EQ(e.families.size(), 21u);
  EXPECT_EQ(e.stats.samples, 62u);
  EXPECT_NE(e.Find("vllm:request_prefill_time_seconds_bucket"), nullptr);
  EXPECT_EQ(e.Find("vllm:request_prefill_time_seconds_bucket")->type, MetricType::kUntyped);
  EXPECT_EQ(e.Find("vllm:kv_cache_usage_perc")->samples.at(0).value, 9.75010481363281e-06);
  EXPECT_EQ(e.Find("process_max_fds")->samples.at(0).value, 1.048576e+06);
  EXPECT_EQ(e.Find("vllm:request_params_n")->samples.size(), 8u);

  const EngineSnapshot snap = MapExposition(e, 500);
  EXPECT_EQ(snap.detection.engine, Engine::kVllm);
  EXPECT_EQ(snap.detection.backend, Engine::kUnknown);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kRequestsFinished)]), 132);  // 1+131+0
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kGenerationTokens)]), 27453);
  EXPECT_FALSE(Has(snap.counters_present, CounterSignal::kPromptTokens));
  // Two series of vllm:num_requests_running (blocks E and F, different models): 0 + 8.
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kRunningRequests)], 8);
  // Both KV names are present; the newer one wins.
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kKvCacheUsage)], 9.75010481363281e-06);
  // TTFT has buckets up to 0.1 and a count but no +Inf bucket or sum in the excerpt.
  const auto& ttft = snap.stages[size_t(Stage::kTtft)];
  ASSERT_EQ(ttft.size(), 1u);
  EXPECT_EQ(ttft[0].count, 140);
  EXPECT_EQ(ttft[0].bounds.size(), 8u);
  EXPECT_EQ(ttft[0].cumulative.back(), 140);
  EXPECT_FALSE(Has(snap.stages_present, Stage::kPrefill));  // block C is untyped: not mapped
  EXPECT_EQ(snap.model_names.size(), 4u);
}

TEST(EngineMapTest, Sglang) {
  const EngineSnapshot snap = MapExposition(ParsePrometheusText(EngineData("sglang.txt")), 500);
  EXPECT_EQ(snap.detection.engine, Engine::kSglang);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kRequestsFinished)]), 42);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kPromptTokens)]), 8128);
  // Scheduler metrics are repeated per tensor-parallel rank: counted once.
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kPreemptions)]), 2);
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kRunningRequests)], 6);
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kWaitingRequests)], 1);
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kKvCacheUsage)], 0.28);
  // Prefill from per_stage_req_latency_seconds{stage="prefill_forward"} only.
  ASSERT_EQ(snap.stages[size_t(Stage::kPrefill)].size(), 1u);
  EXPECT_EQ(snap.stages[size_t(Stage::kPrefill)][0].sum, 2.1);
  EXPECT_TRUE(Has(snap.stages_present, Stage::kPrefill));
  EXPECT_FALSE(Has(snap.stages_present, Stage::kDecode));
  EXPECT_EQ(Count(snap.stages[size_t(Stage::kInterToken)]), 7557);
  EXPECT_EQ(snap.model_names, std::vector<std::string>{"meta-llama/Llama-3.1-8B-Instruct"});
  // Unmapped gauges are kept as other series.
  bool saw_gen_throughput = false;
  for (const auto& o : snap.other) saw_gen_throughput |= o.family == "sglang:gen_throughput";
  EXPECT_TRUE(saw_gen_throughput);
}

TEST(EngineMapTest, Tgi) {
  const EngineSnapshot snap = MapExposition(ParsePrometheusText(EngineData("tgi.txt")), 500);
  EXPECT_EQ(snap.detection.engine, Engine::kTgi);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kRequestsFinished)]), 24);
  // Token counts come from the sums of the per-request length histograms.
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kPromptTokens)]), 12000);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kGenerationTokens)]), 4800);
  EXPECT_FALSE(Has(snap.counters_present, CounterSignal::kPreemptions));
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kRunningRequests)], 8);
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kWaitingRequests)], 3);
  EXPECT_FALSE(Has(snap.gauges_present, GaugeSignal::kKvCacheUsage));
  EXPECT_TRUE(Has(snap.stages_present, Stage::kQueue));
  EXPECT_TRUE(Has(snap.stages_present, Stage::kInterToken));
  EXPECT_TRUE(Has(snap.stages_present, Stage::kE2e));
  EXPECT_FALSE(Has(snap.stages_present, Stage::kTtft));
  EXPECT_EQ(Count(snap.stages[size_t(Stage::kE2e)]), 24);
  EXPECT_TRUE(snap.model_names.empty());  // TGI has no model label
}

TEST(EngineMapTest, TensorRtLlm) {
  const EngineSnapshot snap = MapExposition(ParsePrometheusText(EngineData("trtllm.txt")), 500);
  EXPECT_EQ(snap.detection.engine, Engine::kTensorRtLlm);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kRequestsFinished)]), 100);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kGenerationTokens)]), 12800);
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kRunningRequests)], 16);
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kKvCacheUsage)], 0.5);
  for (Stage s : {Stage::kQueue, Stage::kPrefill, Stage::kTtft, Stage::kInterToken, Stage::kE2e})
    EXPECT_EQ(Count(snap.stages[size_t(s)]), 100) << StageName(s);
  EXPECT_EQ(snap.model_names, std::vector<std::string>{"llama-3.1-8b"});
}

TEST(EngineMapTest, DynamoFrontendAndBackendPassthrough) {
  EngineSnapshot snap = MapExposition(ParsePrometheusText(EngineData("dynamo_frontend.txt")), 500);
  EXPECT_EQ(snap.detection.engine, Engine::kDynamo);
  EXPECT_EQ(snap.detection.backend, Engine::kUnknown);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kRequestsFinished)]), 40);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kPromptTokens)]), 20000);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kGenerationTokens)]), 6000);
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kRunningRequests)], 7);  // deprecated inflight name
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kWaitingRequests)], 2);
  EXPECT_EQ(Count(snap.stages[size_t(Stage::kTtft)]), 40);
  EXPECT_EQ(snap.model_names, std::vector<std::string>{"qwen/qwen3-0.6b"});

  snap = MapExposition(ParsePrometheusText(EngineData("dynamo_backend_vllm.txt")), 500);
  EXPECT_EQ(snap.detection.engine, Engine::kDynamo);
  EXPECT_EQ(snap.detection.backend, Engine::kVllm);
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kRequestsFinished)]), 40);
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kRunningRequests)], 5);
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kKvCacheUsage)], 0.3);
  EXPECT_EQ(snap.model_names, std::vector<std::string>{"Qwen/Qwen3-0.6B"});
}

TEST(EngineMapTest, UnknownExposition) {
  const EngineSnapshot snap =
      MapExposition(ParsePrometheusText("# TYPE up gauge\nup 1\nhttp_requests_total 3\n"), 1);
  EXPECT_EQ(snap.detection.engine, Engine::kUnknown);
  EXPECT_EQ(snap.counters_present, 0u);
  EXPECT_EQ(snap.other.size(), 1u);
  EXPECT_EQ(snap.other_dropped, 1u);
}

TEST(EngineMapTest, OldAndOpenMetricsNamesAndDataParallelEngines) {
  // vLLM <= 0.10 names (gpu_cache_usage_perc, time_per_output_token_seconds), counters declared
  // OpenMetrics-style without _total, two data-parallel engines.
  const EngineSnapshot snap =
      MapExposition(ParsePrometheusText("# TYPE vllm:gpu_cache_usage_perc gauge\n"
                                        "vllm:gpu_cache_usage_perc{engine=\"0\"} 0.2\n"
                                        "vllm:gpu_cache_usage_perc{engine=\"1\"} 0.6\n"
                                        "# TYPE vllm:num_requests_running gauge\n"
                                        "vllm:num_requests_running{engine=\"0\"} 3\n"
                                        "vllm:num_requests_running{engine=\"1\"} 4\n"
                                        "# TYPE vllm:prompt_tokens counter\n"
                                        "vllm:prompt_tokens_total{engine=\"0\"} 10\n"
                                        "vllm:prompt_tokens_created{engine=\"0\"} 1e9\n"
                                        "# TYPE vllm:time_per_output_token_seconds "
                                        "histogram\n"
                                        "vllm:time_per_output_token_seconds_bucket{"
                                        "le=\"+Inf\"} 5\n"
                                        "vllm:time_per_output_token_seconds_sum 0.5\n"
                                        "vllm:time_per_output_token_seconds_count 5\n"),
                    500);
  EXPECT_EQ(snap.detection.engine, Engine::kVllm);
  EXPECT_DOUBLE_EQ(snap.gauges[size_t(GaugeSignal::kKvCacheUsage)], 0.4);   // mean of engines
  EXPECT_EQ(snap.gauges[size_t(GaugeSignal::kRunningRequests)], 7);         // sum of engines
  EXPECT_EQ(Sum(snap.counters[size_t(CounterSignal::kPromptTokens)]), 10);  // _created excluded
  EXPECT_EQ(Count(snap.stages[size_t(Stage::kInterToken)]), 5);
}

TEST(EngineMapTest, MalformedHistogramSeriesAreSkipped) {
  const EngineSnapshot snap = MapExposition(
      ParsePrometheusText("# TYPE vllm:e2e_request_latency_seconds histogram\n"
                          "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"1\"} 5\n"
                          "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"2\"} 3\n"
                          "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"+Inf\"} 5\n"
                          "vllm:e2e_request_latency_seconds_bucket{engine=\"1\",le=\"x\"} 5\n"
                          "vllm:e2e_request_latency_seconds_bucket{engine=\"2\",le=\"1\"} 1\n"
                          "vllm:e2e_request_latency_seconds_count{engine=\"2\"} 2\n"),
      500);
  // engine 0 decreases, engine 1 has a bad `le`; engine 2 lacks +Inf but has a count.
  EXPECT_EQ(snap.histogram_series_skipped, 2u);
  ASSERT_EQ(snap.stages[size_t(Stage::kE2e)].size(), 1u);
  EXPECT_EQ(snap.stages[size_t(Stage::kE2e)][0].cumulative, (std::vector<double>{1, 2}));
}

// ---- Window derivation ----------------------------------------------------------------------

// A vLLM body with the given cumulative values.
std::string VllmBody(double stop, double length, double prompt, double generation,
                     double preemptions, double running, double waiting, double kv,
                     std::array<double, 2> ttft_buckets, double ttft_sum, double queue_count,
                     double queue_sum, double prefill_sum, double cache_queries, double fds) {
  const std::string m = "engine=\"0\",model_name=\"m\"";
  std::string b;
  b += "# TYPE vllm:request_success_total counter\n";
  b += "vllm:request_success_total{engine=\"0\",finished_reason=\"stop\",model_name=\"m\"} " +
       std::to_string(stop) + "\n";
  b += "vllm:request_success_total{engine=\"0\",finished_reason=\"length\",model_name=\"m\"} " +
       std::to_string(length) + "\n";
  b += "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{" + m + "} " +
       std::to_string(prompt) + "\n";
  b += "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{" + m + "} " +
       std::to_string(generation) + "\n";
  b += "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{" + m + "} " +
       std::to_string(preemptions) + "\n";
  b += "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{" + m + "} " +
       std::to_string(running) + "\n";
  b += "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{" + m + "} " +
       std::to_string(waiting) + "\n";
  b += "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{" + m + "} " +
       std::to_string(kv) + "\n";
  b += "# TYPE vllm:time_to_first_token_seconds histogram\n";
  b += "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.1\",model_name=\"m\"} " +
       std::to_string(ttft_buckets[0]) + "\n";
  b += "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.5\",model_name=\"m\"} " +
       std::to_string(ttft_buckets[1]) + "\n";
  b += "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} " +
       std::to_string(ttft_buckets[1]) + "\n";
  b +=
      "vllm:time_to_first_token_seconds_count{" + m + "} " + std::to_string(ttft_buckets[1]) + "\n";
  b += "vllm:time_to_first_token_seconds_sum{" + m + "} " + std::to_string(ttft_sum) + "\n";
  for (const char* stage : {"queue", "prefill"}) {
    const std::string name = std::string("vllm:request_") + stage + "_time_seconds";
    b += "# TYPE " + name + " histogram\n";
    b += name + "_bucket{engine=\"0\",le=\"0.3\",model_name=\"m\"} " + std::to_string(queue_count) +
         "\n";
    b += name + "_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} " +
         std::to_string(queue_count) + "\n";
    b += name + "_count{" + m + "} " + std::to_string(queue_count) + "\n";
    b += name + "_sum{" + m + "} " +
         std::to_string(std::string(stage) == "queue" ? queue_sum : prefill_sum) + "\n";
  }
  b += "# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total{" + m +
       "} " + std::to_string(cache_queries) + "\n";
  b += "# TYPE process_open_fds gauge\nprocess_open_fds " + std::to_string(fds) + "\n";
  return b;
}

TEST(EngineScraperTest, TwoScrapesGiveExactRatesAndPercentiles) {
  EngineMetricsScraper scraper;
  ScrapeResult r = scraper.Scrape(
      VllmBody(100, 10, 5000, 2000, 1, 4, 2, 0.5, {10, 20}, 3, 20, 1, 0.6, 100, 40), kT0 + kSecond);
  EXPECT_TRUE(r.baseline);
  EXPECT_EQ(r.detection.engine, Engine::kVllm);
  EXPECT_EQ(r.stats.bad_lines, 0u) << r.stats.first_error;
  r = scraper.Scrape(VllmBody(150, 20, 8000, 4000, 3, 8, 0, 0.7, {30, 60}, 13, 60, 3, 2.2, 164, 44),
                     kT0 + 3 * kSecond);
  EXPECT_FALSE(r.baseline);

  const EngineMetricsWindow w = scraper.TakeWindow(kT0, kT0 + 10 * kSecond);
  EXPECT_EQ(w.engine, "vllm");
  EXPECT_EQ(w.model_names, std::vector<std::string>{"m"});
  EXPECT_EQ(w.scrapes, 2u);
  EXPECT_EQ(w.covered_ns, 2 * kSecond);
  EXPECT_DOUBLE_EQ(*w.Rate(CounterSignal::kRequestsFinished), 6.0);  // 60 over 10 s
  EXPECT_DOUBLE_EQ(*w.Rate(CounterSignal::kPromptTokens), 300.0);
  EXPECT_DOUBLE_EQ(*w.Rate(CounterSignal::kGenerationTokens), 200.0);
  EXPECT_EQ(w.counter(CounterSignal::kPreemptions), 2);
  EXPECT_EQ(w.gauge(GaugeSignal::kRunningRequests), (GaugeStats{4, 8, 12, 2}));
  EXPECT_EQ(w.gauge(GaugeSignal::kWaitingRequests), (GaugeStats{0, 2, 2, 2}));
  EXPECT_DOUBLE_EQ(w.gauge(GaugeSignal::kKvCacheUsage).mean(), 0.6);
  EXPECT_EQ(w.gauge(GaugeSignal::kKvCacheUsage).max, 0.7);

  const StageHistogram& ttft = w.stage(Stage::kTtft);
  EXPECT_EQ(ttft.bounds, (std::vector<double>{0.1, 0.5}));
  EXPECT_EQ(ttft.counts, (std::vector<double>{20, 20, 0}));  // delta of cumulative 10/20 -> 30/60
  EXPECT_EQ(ttft.count, 40);
  EXPECT_DOUBLE_EQ(ttft.sum, 10);
  EXPECT_DOUBLE_EQ(*ttft.Quantile(0.5), 0.1);
  EXPECT_DOUBLE_EQ(*ttft.Quantile(0.9), 0.1 + 0.4 * 16 / 20);
  EXPECT_DOUBLE_EQ(*ttft.Quantile(0.99), 0.1 + 0.4 * 19.6 / 20);
  EXPECT_DOUBLE_EQ(ttft.KnownMean().value_or(-1), 0.25);
  EXPECT_DOUBLE_EQ(w.stage(Stage::kQueue).KnownMean().value_or(-1), 0.05);
  EXPECT_DOUBLE_EQ(w.stage(Stage::kPrefill).KnownMean().value_or(-1), 0.04);
  EXPECT_NEAR(*w.FrontendOverheadMean(), 0.16, 1e-12);

  // Other families: the counter's delta (first scrape is a baseline), the gauge's samples.
  ASSERT_EQ(w.other.size(), 2u);
  for (const auto& [key, o] : w.other) {
    if (o.family == "vllm:prefix_cache_queries_total") {
      EXPECT_TRUE(o.counter);
      EXPECT_EQ(o.delta, 64);
      EXPECT_EQ(o.labels, "engine=\"0\",model_name=\"m\"");
    } else {
      EXPECT_EQ(o.family, "process_open_fds");
      EXPECT_EQ(o.gauge, (GaugeStats{40, 44, 84, 2}));
    }
  }
  // Taken: nothing left for the same range.
  EXPECT_EQ(scraper.TakeWindow(kT0, kT0 + 10 * kSecond).scrapes, 0u);
}

TEST(EngineScraperTest, CounterResetTakesTheNewValueAsTheDelta) {
  EngineMetricsScraper scraper;
  scraper.Scrape(VllmBody(100, 10, 5000, 2000, 1, 4, 2, 0.5, {10, 20}, 3, 20, 1, 0.6, 100, 40),
                 kT0 + kSecond);
  scraper.Scrape(VllmBody(150, 20, 8000, 4000, 3, 8, 0, 0.7, {30, 60}, 13, 60, 3, 2.2, 164, 44),
                 kT0 + 3 * kSecond);
  // The engine restarted: every counter and histogram is lower than before.
  scraper.Scrape(VllmBody(5, 0, 700, 90, 0, 1, 0, 0.1, {2, 3}, 0.4, 3, 0.1, 0.06, 7, 30),
                 kT0 + 5 * kSecond);
  const EngineMetricsWindow first = scraper.TakeWindow(kT0, kT0 + 4 * kSecond);
  const EngineMetricsWindow second = scraper.TakeWindow(kT0 + 4 * kSecond, kT0 + 8 * kSecond);
  EXPECT_EQ(first.counter(CounterSignal::kRequestsFinished), 60);
  EXPECT_EQ(second.scrapes, 1u);
  EXPECT_EQ(second.counter(CounterSignal::kRequestsFinished), 5);
  EXPECT_EQ(second.counter(CounterSignal::kPromptTokens), 700);
  EXPECT_EQ(second.counter(CounterSignal::kPreemptions), 0);
  EXPECT_EQ(second.stage(Stage::kTtft).counts, (std::vector<double>{2, 1, 0}));
  EXPECT_EQ(second.stage(Stage::kTtft).count, 3);
  EXPECT_DOUBLE_EQ(second.stage(Stage::kTtft).sum, 0.4);
  for (const auto& [key, o] : second.other) {
    if (o.counter) {
      EXPECT_EQ(o.delta, 7);
    }
  }
}

TEST(EngineScraperTest, WindowsSplitByScrapeTimeAndLateRecordsFoldIntoTheNextWindow) {
  EngineMetricsScraper scraper;
  const std::string body = "# TYPE vllm:request_success_total counter\n";
  scraper.Scrape(body + "vllm:request_success_total 1\n", kT0 + 1 * kSecond);
  scraper.Scrape(body + "vllm:request_success_total 3\n", kT0 + 9 * kSecond);
  scraper.Scrape(body + "vllm:request_success_total 10\n", kT0 + 10 * kSecond);  // next window
  scraper.RecordFailure(kT0 + 12 * kSecond);
  EngineMetricsWindow w = scraper.TakeWindow(kT0, kT0 + 10 * kSecond);
  EXPECT_EQ(w.scrapes, 2u);
  EXPECT_EQ(w.counter(CounterSignal::kRequestsFinished), 2);
  w = scraper.TakeWindow(kT0 + 10 * kSecond, kT0 + 20 * kSecond);
  EXPECT_EQ(w.scrapes, 1u);
  EXPECT_EQ(w.scrape_failures, 1u);
  EXPECT_EQ(w.counter(CounterSignal::kRequestsFinished), 7);
  // A record older than the window asked for (its answer came in as its own window closed) is
  // counted in the window taken next: its deltas happened, losing them would under-count.
  scraper.Scrape(body + "vllm:request_success_total 11\n", kT0 + 21 * kSecond);
  w = scraper.TakeWindow(kT0 + 30 * kSecond, kT0 + 40 * kSecond);
  EXPECT_EQ(w.scrapes, 1u);
  EXPECT_EQ(w.counter(CounterSignal::kRequestsFinished), 1);
}

// A GET abandoned between two scrapes (sent, no answer in time) is a failure of its window and
// is spanned by the next scrape's deltas; one before a baseline spans nothing.
TEST(EngineScraperTest, AbandonedGetsAreCountedAndSpannedByTheNextDelta) {
  EngineMetricsScraper scraper;
  const std::string body = "# TYPE vllm:request_success_total counter\n";
  scraper.RecordFailure(kT0 + 1 * kSecond, /*abandoned=*/true);  // before the baseline
  scraper.Scrape(body + "vllm:request_success_total 10\n", kT0 + 2 * kSecond);
  scraper.RecordFailure(kT0 + 3 * kSecond, /*abandoned=*/true);
  scraper.RecordFailure(kT0 + 4 * kSecond, /*abandoned=*/false);  // refused: never sent
  EngineMetricsWindow w = scraper.TakeWindow(kT0, kT0 + 5 * kSecond);
  EXPECT_EQ(w.scrapes, 1u);
  EXPECT_EQ(w.scrape_failures, 3u);
  EXPECT_EQ(w.scrapes_abandoned, 2u);
  EXPECT_EQ(w.abandoned_spanned, 0u);  // the baseline has no deltas
  scraper.Scrape(body + "vllm:request_success_total 16\n", kT0 + 5 * kSecond);
  scraper.Scrape(body + "vllm:request_success_total 19\n", kT0 + 6 * kSecond);
  w = scraper.TakeWindow(kT0 + 5 * kSecond, kT0 + 10 * kSecond);
  EXPECT_EQ(w.scrapes, 2u);
  EXPECT_EQ(w.scrape_failures, 0u);
  EXPECT_EQ(w.abandoned_spanned, 1u);  // the first delta (6) spans the GET abandoned at 3 s
  EXPECT_EQ(w.counter(CounterSignal::kRequestsFinished), 9);
  // Reset (a new endpoint) forgets abandoned GETs of the old one.
  scraper.RecordFailure(kT0 + 11 * kSecond, /*abandoned=*/true);
  scraper.Reset();
  scraper.Scrape(body + "vllm:request_success_total 1\n", kT0 + 12 * kSecond);
  scraper.Scrape(body + "vllm:request_success_total 2\n", kT0 + 13 * kSecond);
  w = scraper.TakeWindow(kT0 + 10 * kSecond, kT0 + 20 * kSecond);
  EXPECT_EQ(w.scrapes_abandoned, 1u);
  EXPECT_EQ(w.abandoned_spanned, 0u);
}

TEST(EngineScraperTest, NewSeriesCountFromZeroAndEngineChangeRebaselines) {
  EngineMetricsScraper scraper;
  scraper.Scrape(
      "# TYPE vllm:request_success_total counter\n"
      "vllm:request_success_total{finished_reason=\"stop\"} 5\n",
      kT0 + kSecond);
  scraper.Scrape(
      "# TYPE vllm:request_success_total counter\n"
      "vllm:request_success_total{finished_reason=\"stop\"} 6\n"
      "vllm:request_success_total{finished_reason=\"abort\"} 2\n",
      kT0 + 2 * kSecond);
  EXPECT_EQ(scraper.TakeWindow(kT0, kT0 + 3 * kSecond).counter(CounterSignal::kRequestsFinished),
            3);
  const ScrapeResult r =
      scraper.Scrape("# TYPE sglang:num_requests_total counter\nsglang:num_requests_total 100\n",
                     kT0 + 4 * kSecond);
  EXPECT_TRUE(r.baseline);
  const EngineMetricsWindow w = scraper.TakeWindow(kT0 + 3 * kSecond, kT0 + 5 * kSecond);
  EXPECT_EQ(w.engine, "sglang");
  EXPECT_EQ(w.counter(CounterSignal::kRequestsFinished), 0);
}

TEST(EngineScraperTest, GarbageBodyIsAnEmptyScrapeNotACrash) {
  EngineMetricsScraper scraper;
  const ScrapeResult r = scraper.Scrape("{\"this\": \"is json\"}\n\x01\x02\n", kT0);
  EXPECT_EQ(r.detection.engine, Engine::kUnknown);
  EXPECT_EQ(r.stats.bad_lines, 2u);
  const EngineMetricsWindow w = scraper.TakeWindow(kT0, kT0 + kSecond);
  EXPECT_EQ(w.engine, "unknown");
  EXPECT_EQ(w.parse_bad_lines, 2u);
}

}  // namespace
}  // namespace inferscope::telemetry::scrape
