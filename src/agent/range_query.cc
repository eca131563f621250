// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agent/range_query.h"

#include <algorithm>
#include <map>
#include <vector>

#include "src/model/profile_merge.h"

namespace inferscope::agent {
namespace {

// Keeps only device `device` of every process; drops processes left without devices.
void KeepDevice(uint32_t device, model::ProfileWindow* w) {
  for (model::ProcessProfile& p : w->processes)
    std::erase_if(p.devices, [&](const model::DeviceProfile& d) { return d.device != device; });
  std::erase_if(w->processes, [](const model::ProcessProfile& p) { return p.devices.empty(); });
}

}  // namespace

base::StatusOr<RangeProfile> QueryRangeProfile(SqliteStore& store, const RangeQuery& query,
                                               const std::string& source) {
  WindowQuery window_query;
  window_query.from_ns = query.from_ns;
  window_query.to_ns = query.to_ns;
  window_query.pid = query.pid;
  window_query.rank = query.rank;
  ASSIGN_OR_RETURN(QueryResult result, store.QueryWindows(window_query));

  RangeProfile out;
  out.corrupt_windows = result.corrupt_windows;
  model::MergeOptions merge;
  merge.top_k = std::max(query.top, merge.top_k);
  std::map<int64_t, model::ProfileWindow> merged;  // by process row
  std::map<int64_t, size_t> window_counts;
  for (StoredWindow& stored : result.windows) {
    if (query.device) KeepDevice(*query.device, &stored.window);
    if (stored.window.processes.empty()) continue;
    model::MergeWindow(stored.window, &merged[stored.process_id], merge);
    ++window_counts[stored.process_id];
    ++out.windows;
  }
  out.processes = merged.size();
  if (merged.empty()) return out;

  analyze::AnalysisOptions options;
  options.top = query.top;
  options.bin_ns = 0;
  for (const auto& [id, w] : merged)
    for (const model::ProcessProfile& p : w.processes)
      for (const model::DeviceProfile& d : p.devices)
        if (options.bin_ns == 0 && d.timeline.bin_ns > 0) options.bin_ns = d.timeline.bin_ns;
  if (options.bin_ns == 0) options.bin_ns = 100'000'000;
  std::vector<analyze::AnalysisInput> inputs;
  for (const auto& [id, w] : merged)
    inputs.push_back(
        {source, "inferscope_store, " + std::to_string(window_counts[id]) + " windows", &w});
  out.analysis = analyze::Analyze(inputs, options);
  return out;
}

}  // namespace inferscope::agent
