// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The /metrics parser and a whole scrape (parse + engine mapping + deltas) on a 1 MB vLLM-like
// body: histograms with 20 buckets, 4 data-parallel engines, model_name labels. Target: a 1 MB
// body in a few ms (a scrape every second must stay far below 1% of a core).

#include <benchmark/benchmark.h>

#include <string>

#include "src/telemetry/scrape/engine_scraper.h"
#include "src/telemetry/scrape/prometheus_text.h"

namespace inferscope::telemetry::scrape {
namespace {

std::string VllmLikeBody(size_t bytes) {
  std::string body;
  for (int family = 0; body.size() < bytes; ++family) {
    const std::string name = "vllm:family_" + std::to_string(family) + "_seconds";
    body += "# HELP " + name + " Histogram of something in seconds.\n";
    body += "# TYPE " + name + " histogram\n";
    for (int engine = 0; engine < 4; ++engine) {
      const std::string labels = "engine=\"" + std::to_string(engine) +
                                 "\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"";
      for (int b = 0; b < 20; ++b)
        body += name + "_bucket{" + labels + ",le=\"" + std::to_string(0.001 * (1 << b)) + "\"} " +
                std::to_string(b * 13) + ".0\n";
      body += name + "_bucket{" + labels + ",le=\"+Inf\"} 260.0\n";
      body += name + "_sum{" + labels + "} 1.2345678e+02\n";
      body += name + "_count{" + labels + "} 260.0\n";
    }
  }
  return body;
}

void BM_ParsePrometheusText(benchmark::State& state) {
  const std::string body = VllmLikeBody(size_t(state.range(0)));
  ParseOptions options;
  options.max_series = 1'000'000;
  for (auto _ : state) benchmark::DoNotOptimize(ParsePrometheusText(body, options));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(body.size()));
}
BENCHMARK(BM_ParsePrometheusText)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

void BM_Scrape(benchmark::State& state) {
  const std::string body = VllmLikeBody(size_t(state.range(0)));
  ScraperOptions options;
  options.parse.max_series = 1'000'000;
  EngineMetricsScraper scraper(options);
  int64_t now = 1'000'000'000;
  for (auto _ : state) {
    scraper.Scrape(body, now);
    now += 1'000'000'000;
    if (now % 100'000'000'000 == 0) scraper.TakeWindow(0, now);  // keep the pending list short
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(body.size()));
}
BENCHMARK(BM_Scrape)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace inferscope::telemetry::scrape

BENCHMARK_MAIN();
