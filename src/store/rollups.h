// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Rollup tiers: the agent folds each stored window into one row per (tier, process, bucket) with
// the same merge a range query uses (model::MergeWindow after laying timelines on a coarser grid),
// so a long range reads a few hundred tier rows instead of every 10 s window. A tier row equals
// the merge of the windows that START in its bucket, folded in arrival order. docs/agent.md.

#include <array>
#include <cstdint>

#include "src/model/profile.h"
#include "src/model/profile_merge.h"

namespace inferscope::store {

// Tier widths, finest first; each divides the next (the query planner nests them).
//
// There is no 1 min tier, on purpose. Writing a row costs about what storing a window costs (a
// row is the size of a window: one more compression and insert), so a 1 min tier (a row per 6
// windows) alone cost the writer more than the 10% that all rollups may cost. What it
// bought was little: the only ranges shown at its 1 s resolution are 5 to 50 min long, at most
// 300 windows per process, which raw windows answer in milliseconds; at the edges of longer
// ranges, raw windows fill at most 10 min each side (docs/benchmarks.md has the figures).
inline constexpr std::array<int64_t, 2> kRollupTierNs = {600'000'000'000LL, 3'600'000'000'000LL};
// A tier row's timeline has 60 bins: 10 s and 60 s. Coarse enough that an hour row stays the size
// of a raw window, fine enough for the resolution a range of that length is shown at.
inline constexpr int64_t RollupBinNs(int64_t tier_ns) { return tier_ns / 60; }

// How long after a bucket's end (in window time: the newest window start seen) the writer
// writes it out and marks it sealed, so the windows of every process (they close on the same
// wall-clock grid, seconds apart) are in it. A window arriving later is merged into the stored row.
inline constexpr int64_t kRollupSealGraceNs = 120'000'000'000LL;

// The merge options of rollups and of range queries (top-K as the Aggregator's default).
model::MergeOptions RollupMergeOptions();

// Lays every device timeline of `w` on the grid of width `bin_ns` whose bins start at multiples
// of bin_ns (so grids of the same width always line up). Timelines already that coarse or coarser
// are left alone. Exact (sums per bin preserved) whenever the input bins nest in the new ones.
void RebinTimelines(int64_t bin_ns, model::ProfileWindow* w);

// Folds `in` into `*into` with model::MergeWindow, every timeline of the result laid on the grid
// of width bin_ns (as RebinTimelines): the one fold rollups and range queries share. `in` is not
// copied (MergeTimeline adds nested bins straight into the grid); only a device new to `*into`
// is copied in and then re-binned.
void FoldWindow(const model::ProfileWindow& in, int64_t bin_ns, const model::MergeOptions& options,
                model::ProfileWindow* into);

inline int64_t FloorTo(int64_t t, int64_t width) {
  const int64_t q = t / width;
  return (t % width != 0 && t < 0 ? q - 1 : q) * width;
}
inline int64_t CeilTo(int64_t t, int64_t width) {
  const int64_t f = FloorTo(t, width);
  return f == t ? t : f + width;
}

}  // namespace inferscope::store
