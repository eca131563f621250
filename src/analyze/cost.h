// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// What serving cost: the GPUs' hourly price turned into cost per request and per million
// generated tokens, split by kernel category (share of GPU time, idle included) and by request
// stage (share of end-to-end latency). Inputs are the analysis of a range and the engine metrics
// of the same range; docs/cost.md gives the formulas and their limits.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/base/json_writer.h"
#include "src/base/status.h"

namespace inferscope::analyze {

// Hourly prices per GPU model: the first entry whose `match` is a case-insensitive substring of
// the device name applies, else `default_usd_per_hour`.
struct GpuPriceTable {
  struct Entry {
    std::string match;  // "H100", "A100-SXM4-80GB", "L4"
    double usd_per_hour = 0;
  };
  std::vector<Entry> entries;
  std::optional<double> default_usd_per_hour;
};

// Parses `MODEL = USD_PER_HOUR` lines (MODEL may be quoted; `default = X` sets the fallback;
// `#` starts a comment). Errors name the line: "line 3: expected MODEL = USD_PER_HOUR".
base::StatusOr<GpuPriceTable> ParseGpuPriceTable(std::string_view text);
// Reads and parses a price table file (--gpu-prices); errors start with the path.
base::StatusOr<GpuPriceTable> LoadGpuPriceTableFile(const std::string& path);

struct CostInputs {
  std::optional<double> gpu_hourly_usd;  // one price for every GPU (wins over the table)
  GpuPriceTable table;
  // From the engine metrics of the same range (all optional).
  std::optional<double> requests_per_s;
  std::optional<double> generation_tokens_per_s;
  std::optional<double> queue_mean_s, prefill_mean_s, decode_mean_s, e2e_mean_s;
};

struct CostShare {
  std::string name;  // a category, "idle", or a stage ("queue", "prefill", "decode", "other")
  double share = 0;  // 0..1
  std::optional<double> usd_per_request;
  std::optional<double> usd_per_million_tokens;
};

struct Cost {
  bool available = false;                 // a price for every GPU is known
  std::string reason;                     // why not, for people ("no price for GPU 'NVIDIA L4'")
  size_t gpus = 0;                        // distinct (host, device) pairs in the analysis
  double usd_per_hour = 0;                // all of them together
  std::optional<double> usd_per_request;  // needs the request rate
  std::optional<double> usd_per_million_tokens;  // needs the generation-token rate
  std::vector<CostShare> by_category;  // categories with time, then "idle"; shares sum to 1
  std::vector<CostShare> by_stage;     // needs the stage means; shares sum to 1
};

Cost ComputeCost(const Analysis& analysis, const CostInputs& inputs);

// The report's `cost` key (docs/report-schema.md).
void WriteCostJson(const Cost& cost, base::JsonWriter& w);
// A few lines for the text report.
void RenderCostText(const Cost& cost, std::string* out);

}  // namespace inferscope::analyze
