// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The /metrics exporter's hot paths: OnWindow (on the agent's event loop, once per window of every
// process: it adds the window to the counters and diagnoses it for the verdict gauge) and Render
// (per scrape) for a typical host, on the Aggregator's windows of the bundled vLLM TP=2 example.

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "src/server/metrics_exporter.h"
#include "src/store/test_window_templates.h"

namespace inferscope::server {
namespace {

constexpr int64_t kWindowNs = 10'000'000'000;

std::vector<model::ProfileWindow> ExampleWindows() {
  const std::string dir = std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode/";
  store::testing::TemplateOptions options;
  options.tile_to_bins = 100;  // a GPU busy for the whole 10 s window
  std::vector<model::ProfileWindow> out;
  for (model::ProcessProfile& p :
       store::testing::WindowTemplates({dir + "rank0.json.gz", dir + "rank1.json.gz"}, options)) {
    model::ProfileWindow& w = out.emplace_back();
    w.end_ns = kWindowNs;
    w.processes.push_back(std::move(p));
  }
  return out;
}

wire::Hello HelloOf(int i) {
  return store::testing::FixtureHello(i, 8, "bench-node", 1'700'000'000'000'000'000);
}

// One window of one process, as the event loop hands it over.
void BM_OnWindow(benchmark::State& state) {
  const std::vector<model::ProfileWindow> windows = ExampleWindows();
  MetricsExporter exporter;
  const wire::Hello hello = HelloOf(0);
  size_t i = 0;
  int64_t start = 0;
  for (auto _ : state) {
    model::ProfileWindow w = windows[i++ % windows.size()];
    w.start_ns = start;
    w.end_ns = start + kWindowNs;
    start += kWindowNs;
    exporter.OnWindow(hello, w);
  }
}
BENCHMARK(BM_OnWindow);

// A scrape of a host of 8 processes (one GPU each) that each sent a window.
void BM_Render8Gpus(benchmark::State& state) {
  const std::vector<model::ProfileWindow> windows = ExampleWindows();
  MetricsExporter exporter;
  for (int p = 0; p < 8; ++p) exporter.OnWindow(HelloOf(p), windows[p % windows.size()]);
  std::string text;
  for (auto _ : state) {
    text = exporter.Render({});
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_Render8Gpus);

}  // namespace
}  // namespace inferscope::server

BENCHMARK_MAIN();
