// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes the Prometheus text parser and everything downstream of it (engine mapping, deltas
// between two scrapes, the window's JSON round trip): no input may crash, hang or break the
// round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/base/json_writer.h"
#include "src/telemetry/scrape/engine_scraper.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace inferscope::telemetry::scrape;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  ScraperOptions options;
  options.parse.max_series = 2000;
  options.max_other_series = 50;
  EngineMetricsScraper scraper(options);
  // The same body twice, then its first half: baseline, zero deltas, then (usually) resets.
  scraper.Scrape(body, 1'000'000'000);
  scraper.Scrape(body, 2'000'000'000);
  scraper.Scrape(body.substr(0, size / 2), 3'000'000'000);
  const EngineMetricsWindow window = scraper.TakeWindow(0, 4'000'000'000);
  inferscope::base::JsonWriter w;
  window.WriteJson(w);
  auto back = EngineMetricsWindow::FromJson(w.str());
  if (!back.ok()) abort();
  inferscope::base::JsonWriter again;
  back->WriteJson(again);
  if (again.str() != w.str()) abort();
  std::string text;
  RenderEngineMetricsText(window, &text);
  return 0;
}
