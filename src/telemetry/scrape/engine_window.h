// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The per-window summary of an inference engine's own metrics (request rate, tokens/s, queue
// depth, KV-cache usage, per-stage latency histograms), derived from deltas between /metrics
// scrapes. Everything in it is mergeable (sums, min/max, histogram bucket counts), so windows of
// a time range, of several engines or hosts, merge into one; percentiles are only ever computed
// from merged bucket counts. docs/engine-metrics.md describes the derivations and their limits.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/json_writer.h"
#include "src/base/status.h"
#include "src/telemetry/telemetry_kind.h"

namespace inferscope::telemetry::scrape {

// The counter signals every engine maps to (summed over label sets).
enum class CounterSignal : uint8_t {
  kRequestsFinished,
  kPromptTokens,
  kGenerationTokens,
  kPreemptions,
};
inline constexpr size_t kCounterSignalCount = 4;

// The gauge signals (sampled once per scrape).
enum class GaugeSignal : uint8_t {
  kRunningRequests,
  kWaitingRequests,
  kKvCacheUsage,  // fraction 0..1
};
inline constexpr size_t kGaugeSignalCount = 3;

// Request stages with a latency histogram (seconds).
enum class Stage : uint8_t { kQueue, kPrefill, kDecode, kTtft, kInterToken, kE2e };
inline constexpr size_t kStageCount = 6;

std::string_view CounterSignalName(CounterSignal signal);  // "requests_finished", ...
std::string_view GaugeSignalName(GaugeSignal signal);      // "running_requests", ...
std::string_view StageName(Stage stage);                   // "queue", "ttft", ...

// min/mean/max of a gauge over the scrapes of a window.
struct GaugeStats {
  double min = 0;
  double max = 0;
  double sum = 0;
  uint64_t samples = 0;

  void Add(double value);
  void Merge(const GaugeStats& other);
  double mean() const { return samples ? sum / double(samples) : 0; }
  bool operator==(const GaugeStats&) const = default;
};

// A latency histogram as the delta of cumulative Prometheus buckets over a window: per-bucket
// counts (not cumulative) for the finite upper bounds plus a last +Inf bucket. A family exposed
// as a summary has sum and count but no buckets (no percentiles then).
struct StageHistogram {
  std::vector<double> bounds;  // finite upper bounds, strictly ascending
  std::vector<double> counts;  // bounds.size() + 1 entries (the last is +Inf), or empty
  double sum = 0;              // seconds
  double count = 0;

  // Adds per-bucket `counts` over `bounds` (same layout as the members). When the bounds differ
  // from ours both sides are re-bucketed onto the union of bounds (see Merge).
  void AddBuckets(const std::vector<double>& other_bounds, const std::vector<double>& other_counts);
  // Equal bounds add bucket by bucket (exact). Different bounds are re-bucketed onto their union,
  // spreading a bucket's count over the union's sub-buckets in proportion to width (the same
  // uniform-within-bucket assumption the percentile interpolation makes); past kMaxBuckets bounds
  // the incoming side is re-bucketed onto ours instead of growing the union.
  void Merge(const StageHistogram& other);

  bool has_buckets() const { return !counts.empty(); }
  // The mean, when the engine exported a `_sum` (latencies are positive, so a zero sum over
  // observations means the sample was missing); nullopt otherwise.
  std::optional<double> KnownMean() const {
    if (!(count > 0) || !(sum > 0)) return std::nullopt;
    return sum / count;
  }
  // The q-quantile (0..1) by linear interpolation inside the bucket holding it (the first bucket
  // starts at 0 when its bound is positive); in the +Inf bucket, the largest finite bound. nullopt
  // without buckets or observations.
  std::optional<double> Quantile(double q) const;

  static constexpr size_t kMaxBuckets = 128;
  bool operator==(const StageHistogram&) const = default;
};

// A counter or gauge series of a family no signal maps, kept so the report can show it.
struct OtherSeries {
  std::string family;
  std::string labels;   // `a="x",b="y"` (truncated to kMaxLabelText bytes)
  bool counter = true;  // counter: `delta`; gauge: `gauge`
  double delta = 0;
  GaugeStats gauge;

  static constexpr size_t kMaxLabelText = 256;
  bool operator==(const OtherSeries&) const = default;
};

// One window [start_unix_ns, end_unix_ns) of engine metrics.
struct EngineMetricsWindow {
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  std::string engine;   // "vllm", "sglang", "tgi", "tensorrt_llm", "dynamo", "unknown", "mixed"
  std::string backend;  // for dynamo: the engine whose metrics it passes through, else empty
  std::vector<std::string> model_names;  // sorted, at most kMaxModelNames

  uint64_t scrapes = 0;          // successful scrapes whose time fell in the window
  uint64_t scrape_failures = 0;  // fetches that failed (set by the collector)
  // Of those, GETs sent whose answer never came (read timed out or failed after connecting): the
  // server may have answered them, and one whose counters advance per request counted them.
  uint64_t scrapes_abandoned = 0;
  // Abandoned GETs between the scrapes whose deltas this window holds (a delta after one spans
  // two scrape intervals or more): deltas of `scrapes + abandoned_spanned` GETs of such a server.
  uint64_t abandoned_spanned = 0;
  int64_t covered_ns = 0;  // sum of the scrape intervals the deltas cover
  uint64_t parse_bad_lines = 0;
  uint64_t parse_dropped_series = 0;

  // Which signals the engine exposes (bit i = CounterSignal/GaugeSignal/Stage i): 0 means
  // "not exposed", not "zero".
  uint32_t counters_present = 0;
  uint32_t gauges_present = 0;
  uint32_t stages_present = 0;
  std::array<double, kCounterSignalCount> counters{};  // deltas over the window
  std::array<GaugeStats, kGaugeSignalCount> gauges{};
  std::array<StageHistogram, kStageCount> stages{};

  std::map<std::string, OtherSeries> other;  // key: family + '\x1f' + label-set hash (hex)
  uint64_t other_series_limit = 500;         // Merge keeps at most this many `other` series
  uint64_t other_series_dropped = 0;

  static constexpr size_t kMaxModelNames = 16;
  // A model name is a label value of a server the agent scraped (possibly another user's): cut to
  // this many bytes before it reaches the store, /api/v1/profile or a /metrics label.
  static constexpr size_t kMaxModelNameBytes = 256;

  bool has_counter(CounterSignal s) const { return counters_present >> size_t(s) & 1; }
  bool has_gauge(GaugeSignal s) const { return gauges_present >> size_t(s) & 1; }
  bool has_stage(Stage s) const { return stages_present >> size_t(s) & 1; }
  double counter(CounterSignal s) const { return counters[size_t(s)]; }
  const GaugeStats& gauge(GaugeSignal s) const { return gauges[size_t(s)]; }
  const StageHistogram& stage(Stage s) const { return stages[size_t(s)]; }

  // Counter delta per second of the window's wall span; nullopt when not exposed or empty span.
  std::optional<double> Rate(CounterSignal s) const;
  // mean TTFT - mean queue - mean prefill (seconds), only when all three have observations.
  // Reported as computed, negative included (docs/engine-metrics.md says why it can be).
  std::optional<double> FrontendOverheadMean() const;

  void AddModelName(std::string_view name);
  void Merge(const EngineMetricsWindow& other);
  void WriteJson(base::JsonWriter& w) const;
  static base::StatusOr<EngineMetricsWindow> FromJson(std::string_view json);

  bool operator==(const EngineMetricsWindow&) const = default;
};

// `text` with every invalid UTF-8 sequence replaced by U+FFFD, as JsonWriter writes it: strings
// from the engine (model names, label values) go through it before they enter a window, so the
// JSON round trip gives them back unchanged.
std::string ValidUtf8(std::string_view text);

// A few lines for the terminal report: engine, throughput, queue, KV cache, stage percentiles.
void RenderEngineMetricsText(const EngineMetricsWindow& window, std::string* out);

// Engine metrics as a kind of host telemetry: record kind and report key "engine".
const telemetry::WindowKind<EngineMetricsWindow>& EngineMetricsKind();

}  // namespace inferscope::telemetry::scrape
