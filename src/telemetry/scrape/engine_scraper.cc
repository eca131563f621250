// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/engine_scraper.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

namespace inferscope::telemetry::scrape {
namespace {

// The delta of a monotonic counter: a decrease means the process restarted (from zero), so the
// new value is what accumulated since.
double CounterDelta(double previous, double current) {
  return current < previous ? current : current - previous;
}

uint64_t StageKey(uint64_t key, size_t stage) {
  return key ^ (0x9E3779B97F4A7C15ull * (uint64_t(stage) + 1));
}

// The delta of one histogram series as per-bucket counts. A restart (count or any bucket went
// down) or new bucket bounds make the current histogram itself the delta.
StageHistogram HistogramDelta(const HistogramSeries* previous, const HistogramSeries& current) {
  const bool restarted = previous && (previous->bounds != current.bounds ||
                                      previous->cumulative.size() != current.cumulative.size() ||
                                      current.count < previous->count || [&] {
                                        for (size_t i = 0; i < current.cumulative.size(); ++i)
                                          if (current.cumulative[i] < previous->cumulative[i])
                                            return true;
                                        return false;
                                      }());
  const HistogramSeries* base = previous && !restarted ? previous : nullptr;
  StageHistogram h;
  h.sum = base ? current.sum - base->sum : current.sum;
  h.count = base ? current.count - base->count : current.count;
  if (!current.cumulative.empty()) {
    h.bounds = current.bounds;
    h.counts.resize(current.cumulative.size());
    double below = 0;
    for (size_t i = 0; i < current.cumulative.size(); ++i) {
      const double cumulative =
          base ? current.cumulative[i] - base->cumulative[i] : current.cumulative[i];
      h.counts[i] = cumulative - below;
      below = cumulative;
    }
  }
  return h;
}

std::string OtherKey(const std::string& family, uint64_t key) {
  return fmt::format("{}\x1f{:016x}", family, key);
}

}  // namespace

EngineMetricsScraper::EngineMetricsScraper(ScraperOptions options) : options_(options) {}

void EngineMetricsScraper::Reset() {
  previous_ = Previous();
  abandoned_since_scrape_ = 0;
}

void EngineMetricsScraper::Push(EngineMetricsWindow window) {
  window.other_series_limit = options_.max_other_series;
  pending_.push_back(std::move(window));
  while (pending_.size() > options_.max_pending_scrapes) {
    pending_.pop_front();
    ++pending_dropped_;
  }
}

void EngineMetricsScraper::RecordFailure(int64_t now_unix_ns, bool abandoned) {
  EngineMetricsWindow w;
  w.start_unix_ns = w.end_unix_ns = now_unix_ns;
  w.scrape_failures = 1;
  w.scrapes_abandoned = abandoned ? 1 : 0;
  abandoned_since_scrape_ += w.scrapes_abandoned;
  Push(std::move(w));
}

ScrapeResult EngineMetricsScraper::Scrape(std::string_view body, int64_t now_unix_ns) {
  const Exposition exposition = ParsePrometheusText(body, options_.parse);
  const EngineSnapshot snap = MapExposition(exposition, options_.max_other_series);

  ScrapeResult result;
  result.detection = snap.detection;
  result.stats = exposition.stats;
  result.families = exposition.families.size();
  result.baseline = !previous_.valid || now_unix_ns <= previous_.time_ns ||
                    previous_.detection.engine != snap.detection.engine ||
                    previous_.detection.backend != snap.detection.backend;
  const Previous* prev = result.baseline ? nullptr : &previous_;

  EngineMetricsWindow w;
  w.start_unix_ns = prev ? prev->time_ns : now_unix_ns;
  w.end_unix_ns = now_unix_ns;
  w.engine = std::string(EngineName(snap.detection.engine));
  if (snap.detection.backend != Engine::kUnknown)
    w.backend = std::string(EngineName(snap.detection.backend));
  for (const std::string& model : snap.model_names) w.AddModelName(model);
  w.scrapes = 1;
  w.covered_ns = prev ? now_unix_ns - prev->time_ns : 0;
  // A baseline has no deltas: abandoned GETs before it span nothing.
  w.abandoned_spanned = prev ? abandoned_since_scrape_ : 0;
  abandoned_since_scrape_ = 0;
  w.parse_bad_lines = exposition.stats.bad_lines;
  w.parse_dropped_series = exposition.stats.dropped_series;
  w.counters_present = snap.counters_present;
  w.gauges_present = snap.gauges_present;
  w.stages_present = snap.stages_present;
  w.other_series_limit = options_.max_other_series;
  w.other_series_dropped = snap.other_dropped;

  Previous next;
  next.valid = true;
  next.time_ns = now_unix_ns;
  next.detection = snap.detection;

  for (size_t i = 0; i < kGaugeSignalCount; ++i)
    if (snap.gauges_present >> i & 1) w.gauges[i].Add(snap.gauges[i]);

  for (size_t i = 0; i < kCounterSignalCount; ++i) {
    for (const CounterSeries& s : snap.counters[i]) {
      next.counters[s.key] = s.value;
      if (!prev) continue;
      auto it = prev->counters.find(s.key);
      w.counters[i] += it == prev->counters.end() ? s.value : CounterDelta(it->second, s.value);
    }
  }

  for (size_t i = 0; i < kStageCount; ++i) {
    for (const HistogramSeries& s : snap.stages[i]) {
      const uint64_t key = StageKey(s.key, i);
      if (prev) {
        auto it = prev->histograms.find(key);
        w.stages[i].Merge(HistogramDelta(it == prev->histograms.end() ? nullptr : &it->second, s));
      }
      next.histograms[key] = s;
    }
  }

  for (const OtherSnapshotSeries& s : snap.other) {
    OtherSeries out;
    out.family = s.family;
    out.labels = s.labels;
    out.counter = s.counter;
    if (s.counter) {
      next.counters[s.key] = s.value;
      if (!prev) continue;  // a baseline has no counter deltas to show
      auto it = prev->counters.find(s.key);
      out.delta = it == prev->counters.end() ? s.value : CounterDelta(it->second, s.value);
    } else {
      out.gauge.Add(s.value);
    }
    w.other.emplace(OtherKey(s.family, s.key), std::move(out));
  }

  previous_ = std::move(next);
  Push(std::move(w));
  return result;
}

EngineMetricsWindow EngineMetricsScraper::TakeWindow(int64_t start_unix_ns, int64_t end_unix_ns) {
  EngineMetricsWindow out;
  out.other_series_limit = options_.max_other_series;
  std::deque<EngineMetricsWindow> keep;
  for (EngineMetricsWindow& w : pending_) {
    if (w.end_unix_ns >= end_unix_ns) {
      keep.push_back(std::move(w));
    } else {
      // In the range, or late: recorded after its own window was taken (a scrape whose answer
      // came in while that window closed). Its deltas still happened: count them here rather
      // than lose them.
      out.Merge(w);
    }
  }
  pending_ = std::move(keep);
  out.start_unix_ns = start_unix_ns;
  out.end_unix_ns = end_unix_ns;
  return out;
}

}  // namespace inferscope::telemetry::scrape
