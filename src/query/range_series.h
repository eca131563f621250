// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The host telemetry of a range as a time series (the dashboard's timeline, /api/v1/timeseries):
// the range cut into equal steps, each step the merge of the telemetry rows that start in it,
// with each kind's own Merge (the same rule the range report applies to the whole range).

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "src/base/status.h"
#include "src/model/profile.h"
#include "src/query/range_query.h"
#include "src/store/sqlite_store.h"
#include "src/telemetry/telemetry_kind.h"

namespace inferscope::query {

// The most steps a series holds (the API's `steps` accepts 1..kMaxSeriesSteps).
inline constexpr size_t kMaxSeriesSteps = 1000;

struct RangeSeries {
  int64_t from_ns = 0;  // start of step 0 (the range's start)
  int64_t step_ns = 0;  // a whole number of seconds, at least the shortest stored row
  // One set per step; a kind is absent from a step without rows of it.
  std::vector<telemetry::TelemetrySet> steps;
  // Per step, the GPU idle time by cause (model::kIdleCauseNames order) of the profile windows of
  // the matched processes and devices; nullopt when no window covers the step. A window counts in
  // the steps it overlaps, in proportion; so does a rollup row (10 min, 1 h), which makes a long
  // range's steps shorter than its rows a smoothed picture.
  std::vector<std::optional<std::array<double, model::kIdleCauseCount>>> idle_ns;
  uint64_t rows = 0;     // telemetry rows merged
  uint64_t corrupt = 0;  // rows that did not parse (skipped)
};

// The range [query.from_ns, query.to_ns) (an open-ended range ends at query.now_ns) in at most
// `max_steps` steps of whole seconds. pid/rank/device filters apply to the idle causes; a `device`
// filter keeps that GPU of the GPU metrics; engine metrics and spans are host-wide and stay (as in
// the report). Reads rollup rows where the range query would (ScanRange).
base::StatusOr<RangeSeries> QueryRangeSeries(store::SqliteStore& store, const RangeQuery& query,
                                             size_t max_steps);

}  // namespace inferscope::query
