// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Engine detection and the mapping of each engine's metric families onto the canonical signals of
// EngineMetricsWindow (requests, tokens, queue depth, KV cache, preemptions, stage histograms).
// The name tables, with their versions and sources, are in docs/engine-metrics.md.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/telemetry/scrape/engine_window.h"
#include "src/telemetry/scrape/prometheus_text.h"

namespace inferscope::telemetry::scrape {

enum class Engine : uint8_t { kUnknown, kVllm, kSglang, kTgi, kTensorRtLlm, kDynamo };
std::string_view EngineName(Engine engine);  // "unknown", "vllm", "sglang", "tgi", ...

// Which engine wrote an exposition, from its family-name prefixes. NVIDIA Dynamo's backend
// endpoint passes an engine's own families through beside its `dynamo_*` ones: then `engine` is
// kDynamo and `backend` that engine.
struct Detection {
  Engine engine = Engine::kUnknown;
  Engine backend = Engine::kUnknown;
};
Detection DetectEngine(const Exposition& exposition);

// One counter series of a mapped signal at one scrape.
struct CounterSeries {
  uint64_t key = 0;  // family + label set (replica labels removed), hashed
  double value = 0;
};

// One histogram series at one scrape: cumulative buckets as exposed.
struct HistogramSeries {
  uint64_t key = 0;
  std::vector<double> bounds;      // finite upper bounds, ascending
  std::vector<double> cumulative;  // bounds.size() + 1 (the last is +Inf); empty for summaries
  double sum = 0;
  double count = 0;
};

// A counter or gauge series of a family that no signal maps.
struct OtherSnapshotSeries {
  uint64_t key = 0;
  std::string family;
  std::string labels;  // `a="x",b="y"`, truncated to OtherSeries::kMaxLabelText
  bool counter = false;
  double value = 0;
};

// Everything one scrape says, in canonical form, before deltas. Counters and histograms stay
// per series so that the scraper can take deltas (and see resets) series by series.
struct EngineSnapshot {
  Detection detection;
  std::vector<std::string> model_names;  // values of model_name / model labels, bounded
  uint32_t counters_present = 0;         // bit per CounterSignal
  uint32_t gauges_present = 0;           // bit per GaugeSignal
  uint32_t stages_present = 0;           // bit per Stage
  std::array<std::vector<CounterSeries>, kCounterSignalCount> counters;
  std::array<double, kGaugeSignalCount> gauges{};  // aggregated over label sets
  std::array<std::vector<HistogramSeries>, kStageCount> stages;
  std::vector<std::string> mapped_families;  // the families the signals came from
  std::vector<OtherSnapshotSeries> other;
  uint64_t other_dropped = 0;             // series past `max_other_series`
  uint64_t histogram_series_skipped = 0;  // malformed buckets (non-monotonic, no +Inf, bad le)
};

// Maps a parsed exposition. `max_other_series` bounds `other`.
EngineSnapshot MapExposition(const Exposition& exposition, size_t max_other_series);

}  // namespace inferscope::telemetry::scrape
