// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// One side of a comparison (`inferscope diff --baseline-range`, the API's /api/v1/compare) from
// a time range of the store: the range's figures and the same figures per stored window start,
// the slices `analyze::Compare` judges every change against. One code path so `diff` and the
// dashboard agree.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/analyze/compare.h"
#include "src/base/status.h"
#include "src/model/profile.h"
#include "src/query/range_query.h"
#include "src/store/sqlite_store.h"
#include "src/telemetry/otlp/span_window.h"
#include "src/telemetry/scrape/engine_window.h"

namespace inferscope::query {

// Top kernels kept per window and per merge: diff compares kernels by name, and a kernel that
// falls into a window's tail is lost to it, so keep more than a report lists.
inline constexpr int kDiffTopK = 50;

// The engine's generated tokens and stage percentiles as diff figures.
void AddEngineFigures(const telemetry::scrape::EngineMetricsWindow& engine,
                      analyze::ProfileFigures* f);
// Span latencies fill the stages the engine metrics did not give.
void AddSpanFigures(const telemetry::otlp::SpanWindow& spans, analyze::ProfileFigures* f);
// The figures of windows analyzed together (one slice, or a whole trace) at `bin_ns`.
analyze::ProfileFigures SliceFigures(const std::vector<const model::ProfileWindow*>& windows,
                                     int64_t bin_ns);

// The side for [query.from_ns, query.to_ns) (pid/rank filters apply): the whole range (with its
// engine and span figures) and one slice per stored window start; past `max_slices`,
// neighbouring starts share a slice. NotFound when the range holds no profile windows.
base::StatusOr<analyze::ComparisonSide> LoadRangeSide(store::SqliteStore& store,
                                                      const RangeQuery& query, size_t max_slices,
                                                      const std::string& source);

}  // namespace inferscope::query
