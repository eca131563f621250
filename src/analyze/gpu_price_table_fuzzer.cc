// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes the GPU price table parser and a cost computed with whatever it accepts.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/analyze/cost.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace inferscope::analyze;
  auto table = ParseGpuPriceTable(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!table.ok()) return 0;
  for (const GpuPriceTable::Entry& e : table->entries)
    if (!std::isfinite(e.usd_per_hour) || e.usd_per_hour < 0 || e.match.empty()) std::abort();
  Analysis a;
  RankAnalysis r;
  r.device_name = "NVIDIA H100 80GB HBM3";
  a.ranks.push_back(r);
  a.summary.temporal.span_ns = 100;
  a.summary.temporal.busy_ns = 50;
  CostInputs in;
  in.table = *table;
  in.requests_per_s = 1;
  const Cost c = ComputeCost(a, in);
  if (c.available && (!std::isfinite(c.usd_per_hour) || c.usd_per_hour < 0)) std::abort();
  std::string text;
  RenderCostText(c, &text);
  return 0;
}
