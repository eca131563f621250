// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agent/store/rollups.h"

#include <utility>

namespace inferscope::agent {

model::MergeOptions RollupMergeOptions() { return model::MergeOptions{}; }

void RebinTimelines(int64_t bin_ns, model::ProfileWindow* w) {
  const size_t max_bins = RollupMergeOptions().max_timeline_bins;
  for (model::ProcessProfile& p : w->processes) {
    for (model::DeviceProfile& d : p.devices) {
      model::Timeline& t = d.timeline;
      if (t.busy_ns.empty() && t.category_ns.empty()) continue;
      if (t.bin_ns >= bin_ns && t.origin_ns % bin_ns == 0) continue;  // already on the grid
      if (t.bin_ns > bin_ns) continue;  // coarser: splitting it would invent placement
      model::Timeline grid;
      grid.bin_ns = bin_ns;
      grid.origin_ns = FloorTo(t.origin_ns, bin_ns);
      grid.busy_ns.assign(1, 0);  // one seed bin, so MergeTimeline keeps this grid
      grid.category_ns.assign(1, {});
      model::MergeTimeline(t, &grid, max_bins);
      // Trailing empty bins (the seed, when the input is empty) carry nothing.
      while (grid.busy_ns.size() > 1 && grid.busy_ns.back() == 0 &&
             grid.category_ns.back() == std::array<int64_t, model::kCategoryCount>{})
        grid.busy_ns.pop_back(), grid.category_ns.pop_back();
      t = std::move(grid);
    }
  }
}

void FoldWindow(model::ProfileWindow in, int64_t bin_ns, const model::MergeOptions& options,
                model::ProfileWindow* into) {
  RebinTimelines(bin_ns, &in);
  model::MergeWindow(in, into, options);
}

}  // namespace inferscope::agent
