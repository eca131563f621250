// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Turns successive /metrics bodies of one engine endpoint into EngineMetricsWindows: counter and
// histogram deltas between consecutive scrapes (series by series, so one engine restarting does
// not disturb the others), gauges sampled at each scrape.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>
#include <unordered_map>

#include "src/telemetry/scrape/engine_map.h"
#include "src/telemetry/scrape/engine_window.h"
#include "src/telemetry/scrape/prometheus_text.h"

namespace inferscope::telemetry::scrape {

struct ScraperOptions {
  ParseOptions parse;                 // max series, max body size
  size_t max_other_series = 500;      // unmapped counter/gauge series kept per scrape and window
  size_t max_pending_scrapes = 4096;  // per-scrape deltas waiting for TakeWindow; oldest dropped
};

// What one Scrape saw.
struct ScrapeResult {
  Detection detection;
  ParseStats stats;
  size_t families = 0;
  bool baseline = false;  // no deltas: first scrape, after Reset, engine change or clock step back
};

// Not thread-safe: one owner (EngineMetricsCollector guards it with its mutex).
// Deltas: a counter that went down means the engine restarted, and its new value is the delta
// (Prometheus' rate() does the same); a series first seen after the baseline counts from zero.
// Each scrape's deltas land in the window holding the scrape's time.
class EngineMetricsScraper {
 public:
  explicit EngineMetricsScraper(ScraperOptions options = {});

  // Parses and maps `body` fetched at `now_unix_ns` and records its deltas against the previous
  // scrape. Never fails: a body that is not Prometheus text gives an empty mapping.
  ScrapeResult Scrape(std::string_view body, int64_t now_unix_ns);
  // A fetch that failed at `now_unix_ns`: counted in that window's scrape_failures, and in its
  // scrapes_abandoned when `abandoned` (the GET was sent, its answer never came). The next
  // scrape's deltas span an abandoned GET: that scrape's window counts it in abandoned_spanned.
  void RecordFailure(int64_t now_unix_ns, bool abandoned = false);
  // Forgets the previous scrape (the endpoint changed): the next Scrape is a baseline.
  void Reset();
  // Everything recorded at times before `end`, merged: those in [start, end) and late ones (their
  // window was already taken: their deltas still count, here). Those at or after `end` stay for
  // later windows.
  EngineMetricsWindow TakeWindow(int64_t start_unix_ns, int64_t end_unix_ns);

  uint64_t pending_dropped() const { return pending_dropped_; }

 private:
  struct Previous {
    bool valid = false;
    int64_t time_ns = 0;
    Detection detection;
    std::unordered_map<uint64_t, double> counters;             // signal series and other counters
    std::unordered_map<uint64_t, HistogramSeries> histograms;  // key mixed with the stage
  };

  void Push(EngineMetricsWindow window);

  ScraperOptions options_;
  Previous previous_;
  std::deque<EngineMetricsWindow> pending_;  // one per scrape or failure, by time
  uint64_t abandoned_since_scrape_ = 0;      // abandoned GETs since the last Scrape
  uint64_t pending_dropped_ = 0;
};

}  // namespace inferscope::telemetry::scrape
