// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The per-window summary of request spans: stage latency histograms, token totals, per-model
// counts, the slowest requests as exemplars and the receiver's counters. Everything in it merges
// exactly (bucket counts, sums, min/max, top-N), so windows from many processes, hosts and time
// ranges combine without percentiles of percentiles.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/json_writer.h"
#include "src/base/status.h"
#include "src/telemetry/otlp/span_record.h"
#include "src/telemetry/telemetry_kind.h"

namespace inferscope::telemetry::otlp {

// A latency histogram with fixed log-scale bucket bounds (1-1.5-2-3-5-7 per decade, 100 us to
// 700 s, plus an underflow and an overflow bucket), so merging is bucket addition. Count, sum,
// min and max are exact; percentiles are estimated from the buckets when rendered.
class LatencyHistogram {
 public:
  // Upper bounds (exclusive) of buckets 0..N-2, in ns; bucket N-1 is the overflow.
  static const std::vector<int64_t>& BoundsNs();
  static size_t BucketCount() { return BoundsNs().size() + 1; }
  static size_t BucketFor(int64_t ns);

  void Add(int64_t ns);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  int64_t sum_ns() const { return sum_ns_; }
  int64_t min_ns() const { return count_ ? min_ns_ : 0; }
  int64_t max_ns() const { return count_ ? max_ns_ : 0; }
  const std::vector<uint64_t>& buckets() const { return buckets_; }

  // Estimated q-quantile (0 < q <= 1) in ns: linear interpolation inside the bucket holding the
  // rank, clamped to [min, max]. 0 when empty.
  int64_t PercentileNs(double q) const;

  void WriteJson(base::JsonWriter& w) const;
  // Rebuilds a histogram from its serialized parts; InvalidArgument when they disagree (bucket
  // counts not summing to count, an index out of range).
  static base::StatusOr<LatencyHistogram> FromParts(uint64_t count, int64_t sum_ns, int64_t min_ns,
                                                    int64_t max_ns,
                                                    const std::vector<uint64_t>& buckets);
  bool operator==(const LatencyHistogram&) const = default;

 private:
  uint64_t count_ = 0;
  int64_t sum_ns_ = 0;
  int64_t min_ns_ = 0;
  int64_t max_ns_ = 0;
  std::vector<uint64_t> buckets_;  // empty until the first Add/Merge
};

// One of the slowest requests of a window, with its stage split. Only allowlisted data.
struct SpanExemplar {
  std::string request_hash;
  std::string model;
  std::string service;
  uint64_t end_unix_ns = 0;
  std::array<int64_t, kStageCount> stage_ns{-1, -1, -1, -1, -1, -1};  // -1: not reported
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  SamplingParams sampling;

  int64_t e2e_ns() const { return stage_ns[static_cast<size_t>(Stage::kE2e)]; }
  bool operator==(const SpanExemplar&) const = default;
};

// Why spans or requests were not summarized; all are monotonic counters over the window.
struct SpanCounters {
  uint64_t requests_accepted = 0;       // HTTP exports decoded
  uint64_t requests_rejected = 0;       // HTTP exports refused (400/413/415)
  uint64_t spans_received = 0;          // spans in accepted exports
  uint64_t spans_decoded = 0;           // spans that survived decoding
  uint64_t request_spans = 0;           // ... of which request spans
  uint64_t stage_spans = 0;             // ... of which stage spans (SGLang)
  uint64_t other_spans = 0;             // ... of which nothing we summarize (ignored)
  uint64_t dropped_over_limit = 0;      // more spans in one export than the decoder allows
  uint64_t dropped_bad_timestamps = 0;  // zero or reversed start/end
  uint64_t dropped_late = 0;            // ended in a window already taken (after its grace)
  uint64_t dropped_future = 0;          // ended implausibly far after the window being taken
  uint64_t dropped_buffer_full = 0;     // collector buffer full
  uint64_t attributes_over_limit = 0;   // attributes past the per-span limit (ignored)
  uint64_t bad_attribute_values = 0;    // allowlisted attribute with an unusable value

  void Merge(const SpanCounters& o);
  bool operator==(const SpanCounters&) const = default;
};

// Spans lost, all reasons together.
uint64_t DroppedSpans(const SpanCounters& c);
// The drops by reason, one "N <reason>" per non-zero reason joined by "; " ("" when none): what
// the agent logs and the text report shows, so the user can tell a late exporter from a flood.
std::string DescribeDrops(const SpanCounters& c);

// The request-span summary of [start_unix_ns, end_unix_ns).
class SpanWindow {
 public:
  static constexpr size_t kDefaultExemplars = 10;
  static constexpr size_t kMaxModels = 64;  // further models are counted under "other"

  uint64_t start_unix_ns = 0;
  uint64_t end_unix_ns = 0;
  uint64_t requests = 0;  // request spans (one per finished request)
  uint64_t prompt_tokens = 0;
  uint64_t completion_tokens = 0;
  std::array<LatencyHistogram, kStageCount> stages;
  std::map<std::string, uint64_t> requests_per_model;  // "" when the engine gave no model
  std::vector<SpanExemplar> exemplars;                 // slowest first, at most max_exemplars
  size_t max_exemplars = kDefaultExemplars;
  SpanCounters counters;

  // Folds one decoded span in (request spans: everything; stage spans: their stage only).
  void Add(const SpanRecord& span);
  // Adds other's contents; the range becomes the union; exemplars keep the top max_exemplars.
  void Merge(const SpanWindow& other);

  const LatencyHistogram& stage(Stage s) const { return stages[static_cast<size_t>(s)]; }

  void WriteJson(base::JsonWriter& w) const;
  std::string ToJson() const;
  static base::StatusOr<SpanWindow> FromJson(std::string_view json);

  bool operator==(const SpanWindow&) const = default;

 private:
  void AddExemplar(SpanExemplar e);
  void AddModel(const std::string& model, uint64_t n);
};

// A few lines for the terminal report: requests, stage percentiles, tokens, slowest requests,
// and a line per drop reason and for rejected exports (each well under 100 columns).
void RenderSpanText(const SpanWindow& window, std::string* out);

// Request spans as a kind of host telemetry: record kind "spans", report key "requests".
const telemetry::WindowKind<SpanWindow>& SpanKind();

}  // namespace inferscope::telemetry::otlp
