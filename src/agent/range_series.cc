// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agent/range_series.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "src/agent/nvml/gpu_metrics_window.h"
#include "src/agent/telemetry_kinds.h"

namespace inferscope::agent {

base::StatusOr<RangeSeries> QueryRangeSeries(SqliteStore& store, const RangeQuery& query,
                                             size_t max_steps) {
  constexpr int64_t kSec = 1'000'000'000;
  max_steps = std::clamp<size_t>(max_steps, 1, kMaxSeriesSteps);
  const int64_t to_ns =
      query.to_ns == std::numeric_limits<int64_t>::max() ? query.now_ns : query.to_ns;
  if (to_ns <= query.from_ns) return base::InvalidArgumentError("the range is empty");
  RangeSeries out;
  out.from_ns = query.from_ns;
  const int64_t span = to_ns - query.from_ns;
  const int64_t steps = static_cast<int64_t>(max_steps);
  // Whole seconds: telemetry rows are at least a second (the shortest --window), so a finer
  // step would only leave every other step empty.
  out.step_ns = std::max<int64_t>(kSec, ((span + steps - 1) / steps + kSec - 1) / kSec * kSec);
  out.steps.resize(static_cast<size_t>((span + out.step_ns - 1) / out.step_ns));
  for (const collector::TelemetryKind* kind : TelemetryKinds().kinds()) {
    // Rows overlapping the range; a row belongs to the step its start falls in (a row that
    // started before the range to the first).
    ASSIGN_OR_RETURN(std::vector<TelemetryRecord> records,
                     store.QueryTelemetry(kind->record_kind(), query.from_ns, to_ns));
    for (const TelemetryRecord& r : records) {
      auto data = kind->FromJson(r.json);
      if (!data.ok()) {
        ++out.corrupt;
        continue;
      }
      const int64_t offset = std::max<int64_t>(0, r.start_ns - query.from_ns);
      const size_t step = std::min(out.steps.size() - 1, static_cast<size_t>(offset / out.step_ns));
      ++out.rows;
      out.steps[step].Merge(std::move(data).value());
    }
  }
  if (query.device) {
    for (collector::TelemetrySet& set : out.steps) {
      GpuMetricsWindow* gpu = set.GetMutable<GpuMetricsWindow>();
      if (gpu == nullptr) continue;
      std::erase_if(gpu->devices, [&](const GpuDeviceWindow& d) {
        return static_cast<int64_t>(d.index) != static_cast<int64_t>(*query.device);
      });
      if (gpu->devices.empty()) set.Erase<GpuMetricsWindow>();
    }
  }
  return out;
}

}  // namespace inferscope::agent
