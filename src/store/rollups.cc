// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/store/rollups.h"

#include <algorithm>
#include <utility>

namespace inferscope::store {

namespace {

// Trailing empty bins (the seed, when the input is empty) carry nothing.
void TrimTrailingEmptyBins(model::Timeline* t) {
  while (t->busy_ns.size() > 1 && t->busy_ns.back() == 0 &&
         t->category_ns.back() == std::array<int64_t, model::kCategoryCount>{}) {
    t->busy_ns.pop_back();
    t->category_ns.pop_back();
  }
}

}  // namespace

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
      if (t.bin_ns > 0 && bin_ns % t.bin_ns == 0 &&
          (t.origin_ns - grid.origin_ns) % t.bin_ns == 0) {
        // Input bins nest in the new ones (the usual case: 100 ms windows on 1 s or coarser
        // grids): each adds whole into one bin, which is what MergeTimeline's split gives too.
        const size_t n = std::max(t.busy_ns.size(), t.category_ns.size());
        const int64_t ratio = bin_ns / t.bin_ns;
        const int64_t offset = (t.origin_ns - grid.origin_ns) / t.bin_ns;
        const size_t out = static_cast<size_t>((offset + static_cast<int64_t>(n) - 1) / ratio) + 1;
        if (out <= max_bins) {
          grid.busy_ns.assign(out, 0);
          grid.category_ns.assign(out, {});
          for (size_t i = 0; i < n; ++i) {
            const auto b = static_cast<size_t>((offset + static_cast<int64_t>(i)) / ratio);
            if (i < t.busy_ns.size()) grid.busy_ns[b] += t.busy_ns[i];
            if (i < t.category_ns.size())
              for (size_t c = 0; c < model::kCategoryCount; ++c)
                grid.category_ns[b][c] += t.category_ns[i][c];
          }
          grid.truncated = t.truncated;
          TrimTrailingEmptyBins(&grid);
          t = std::move(grid);
          continue;
        }
      }
      grid.busy_ns.assign(1, 0);  // one seed bin, so MergeTimeline keeps this grid
      grid.category_ns.assign(1, {});
      model::MergeTimeline(t, &grid, max_bins);
      TrimTrailingEmptyBins(&grid);
      t = std::move(grid);
    }
  }
}

void FoldWindow(const model::ProfileWindow& in, int64_t bin_ns, const model::MergeOptions& options,
                model::ProfileWindow* into) {
  model::MergeWindow(in, into, options);
  RebinTimelines(bin_ns, into);  // what MergeWindow copied in whole; the rest is on the grid
}

}  // namespace inferscope::store
