// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/query/range_series.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "src/telemetry/nvml/gpu_metrics_window.h"
#include "src/telemetry/registry/telemetry_kinds.h"

namespace inferscope::query {

base::StatusOr<RangeSeries> QueryRangeSeries(store::SqliteStore& store, const RangeQuery& query,
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
  for (const telemetry::TelemetryKind* kind : telemetry::TelemetryKinds().kinds()) {
    // Rows overlapping the range; a row belongs to the step its start falls in (a row that
    // started before the range to the first).
    ASSIGN_OR_RETURN(std::vector<store::TelemetryRecord> records,
                     store.QueryTelemetry(kind->record_kind(), query.from_ns, to_ns));
    for (const store::TelemetryRecord& r : records) {
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
  // Idle causes from the profile windows (rollup rows in the middle of a long range, as the
  // report reads them).
  out.idle_ns.resize(out.steps.size());
  store::ScanStats scan;
  RETURN_IF_ERROR(ScanRange(
      store, query.Windows(), RangeBinNs(span), query.use_rollups,
      [&](int64_t, uint64_t, model::ProfileWindow& window) {
        const int64_t start = std::max(window.start_ns, query.from_ns);
        const int64_t end = std::min(window.end_ns, to_ns);
        if (end <= start || window.end_ns <= window.start_ns) return;
        std::array<double, model::kIdleCauseCount> idle{};
        bool any = false;
        for (const model::ProcessProfile& p : window.processes)
          for (const model::DeviceProfile& d : p.devices) {
            if (query.device && d.device != *query.device) continue;
            any = true;
            for (size_t i = 0; i < model::kIdleCauseCount; ++i)
              idle[i] += static_cast<double>(d.idle_causes.ns[i]);
          }
        if (!any) return;
        const double length = static_cast<double>(window.end_ns - window.start_ns);
        for (size_t k = static_cast<size_t>((start - query.from_ns) / out.step_ns);
             k < out.idle_ns.size(); ++k) {
          const int64_t step_from = query.from_ns + static_cast<int64_t>(k) * out.step_ns;
          if (step_from >= end) break;
          const int64_t overlap =
              std::min(end, step_from + out.step_ns) - std::max(start, step_from);
          if (overlap <= 0) continue;
          auto& slot = out.idle_ns[k];
          if (!slot) slot.emplace();
          const double share = static_cast<double>(overlap) / length;
          for (size_t i = 0; i < model::kIdleCauseCount; ++i) (*slot)[i] += idle[i] * share;
        }
      },
      &scan));
  if (query.device) {
    for (telemetry::TelemetrySet& set : out.steps) {
      telemetry::GpuMetricsWindow* gpu = set.GetMutable<telemetry::GpuMetricsWindow>();
      if (gpu == nullptr) continue;
      std::erase_if(gpu->devices, [&](const telemetry::GpuDeviceWindow& d) {
        return static_cast<int64_t>(d.index) != static_cast<int64_t>(*query.device);
      });
      if (gpu->devices.empty()) set.Erase<telemetry::GpuMetricsWindow>();
    }
  }
  return out;
}

}  // namespace inferscope::query
