// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A parser for the Prometheus text exposition format (version 0.0.4), also accepting what
// OpenMetrics text adds (`# EOF`, `# UNIT`, `_created` samples, exemplars after `#`, float
// timestamps) without failing. Engines expose their /metrics this way (docs/engine-metrics.md).
//
// Family names are exact: a sample belongs to the family its `# TYPE` line names (histogram
// `_bucket`/`_sum`/`_count`, counter `_total`, ...), or, without one, to an untyped family with its
// own exact name. Nothing is normalized beyond what the format defines, so
// `vllm:num_requests_waiting` and `vllm:num_requests_waiting_by_reason` never mix.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace inferscope::telemetry::scrape {

enum class MetricType : uint8_t {
  kUntyped,  // no # TYPE line, or "untyped" / OpenMetrics "unknown"
  kCounter,
  kGauge,
  kHistogram,
  kSummary,
  kGaugeHistogram,  // OpenMetrics
  kStateSet,        // OpenMetrics
  kInfo,            // OpenMetrics
};
std::string_view MetricTypeName(MetricType type);

// What a sample is within its family: the suffix its name carries past the family name.
enum class SampleRole : uint8_t {
  kValue,    // the family name itself (gauge, untyped, counter declared with _total, quantiles)
  kTotal,    // <family>_total of a counter declared without it (OpenMetrics style)
  kCreated,  // <family>_created
  kBucket,   // <family>_bucket{le=...}
  kSum,      // <family>_sum
  kCount,    // <family>_count
  kGSum,     // <family>_gsum (gauge histogram)
  kGCount,   // <family>_gcount (gauge histogram)
  kInfo,     // <family>_info
};

struct Label {
  std::string name;
  std::string value;  // unescaped
};

struct Sample {
  SampleRole role = SampleRole::kValue;
  std::vector<Label> labels;  // in exposition order, `le` / `quantile` included
  double value = 0;
  bool has_timestamp = false;
  int64_t timestamp_ms = 0;

  // The value of label `name`, or nullptr.
  const std::string* FindLabel(std::string_view name) const;
};

struct MetricFamily {
  std::string name;
  MetricType type = MetricType::kUntyped;
  bool declared = false;  // a # TYPE line named it
  std::string help;       // unescaped
  std::string unit;       // OpenMetrics # UNIT
  std::vector<Sample> samples;
};

// Data-quality counters of one parse. Nothing here is fatal: bad lines are skipped.
struct ParseStats {
  uint64_t lines = 0;            // non-empty lines seen
  uint64_t samples = 0;          // samples kept
  uint64_t bad_lines = 0;        // syntax errors, skipped
  uint64_t dropped_series = 0;   // samples past ParseOptions::max_series
  uint64_t truncated_bytes = 0;  // body bytes past ParseOptions::max_body_bytes
  bool saw_eof = false;          // an OpenMetrics `# EOF` ended the body
  std::string first_error;       // "line 12: ..." of the first bad line, for health messages
};

struct ParseOptions {
  size_t max_series = 10000;            // samples kept over all families
  size_t max_body_bytes = 16ull << 20;  // the rest is cut at the last full line and counted
};

// A parsed /metrics body. Families keep exposition order; `Find` is an exact-name lookup.
struct Exposition {
  std::vector<MetricFamily> families;
  ParseStats stats;

  const MetricFamily* Find(std::string_view name) const;

  // Internal: family name -> index in `families`.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> index;
};

// Parses `body`. Never fails: bad lines and dropped series are counted in `stats`.
Exposition ParsePrometheusText(std::string_view body, const ParseOptions& options = {});

// A Prometheus float as the format writes it ("1.5", "+Inf", "-Inf", "NaN", "1e+09"); the whole
// text must be the number. Locale-independent.
bool ParsePrometheusFloat(std::string_view text, double* out);

}  // namespace inferscope::telemetry::scrape
