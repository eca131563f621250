// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Folding many profile windows into one, so a report over a time range (`inferscope report --last
// 5m`) reads like the report of one window. The rules, field by field:
//
// - Processes match by (hostname, pid, rank), devices by id; a new one is copied in. Processes stay
//   sorted by rank then pid, devices by id (as the Aggregator emits them).
// - Counts, times and bytes add up; min/max combine; histograms add.
// - Unions (busy, compute, communication, communication overlap) ADD UP. That is exact only
//   because windows do not overlap in time, which holds for the windows of one Aggregator. The
//   Aggregator counts an operation entirely in the window where it STARTS (its interval may run
//   past the window end), so where operations straddle a window edge and the next window's first
//   operations overlap them, that overlap is counted in both: the merged busy/compute/
//   communication are >= the whole-range union by at most sum(max(0, last_end - window end)) over
//   the windows. first_start = min, last_end = max, so span covers the whole range and idle =
//   span - busy includes the gaps between windows (time with no window counts as idle).
// - Categories and subcategories add up.
// - Top kernels merge by name (stats add), then the top K by total time stay (ties: more calls,
//   then name) and the rest fold into the tail. The tail's distinct_names adds up: a name in the
//   tail of two windows is counted twice, so it is an upper bound.
// - A top kernel's launch configurations merge by configuration (count and time add; the
//   kMaxMergedLaunchConfigs most frequent stay listed, MoreFrequentConfig order). distinct_configs
//   is an upper bound (MergeLaunchConfigs: the listed ones join exactly, the unlisted are assumed
//   all different), exact when every window listed all its configurations, over the windows in
//   which the kernel was a top row (a window where it was in the tail adds its time, not its
//   configs).
// - Sync "waited on" lists merge by kernel name (count and wait add), are re-sorted heaviest first
//   and re-capped; a target a window had already cut off is lost (its wait is still in `wait`).
// - Timelines are laid on one grid: the first timeline's bin width and origin (extended backwards
//   in whole bins when an earlier window arrives). Bins of another width or an unaligned origin
//   are re-binned by splitting each bin's time proportionally to its overlap with the target bins
//   (sums are preserved exactly; placement inside a coarser input bin is an even spread). Bins
//   beyond max_timeline_bins are dropped and the timeline is marked truncated.
// - Data-quality counters add up.
// - NVTX range tables merge like top kernels: rows by name (stats add), the top K by total host
//   time stay, the rest fold into the tail, whose distinct_names is an upper bound.

#include <cstddef>

#include "src/model/profile.h"

namespace inferscope::model {

struct MergeOptions {
  int top_k = 20;            // top kernels kept per device (the Aggregator's default)
  int max_sync_targets = 5;  // "waited on" entries kept per sync type
  size_t max_timeline_bins = 100'000;
};

// Folds `in` into `*into`. `*into` may start as a default ProfileWindow (then it takes `in`'s
// range). Never fails: inputs the rules cannot place (e.g. timeline bins out of range) are dropped
// and flagged (timeline.truncated).
void MergeWindow(const ProfileWindow& in, ProfileWindow* into, const MergeOptions& options = {});

// The per-device part of MergeWindow (the devices must be the same device of the same process).
void MergeDeviceProfile(const DeviceProfile& in, DeviceProfile* into,
                        const MergeOptions& options = {});

// Adds `in`'s bins into `*into` on into's grid (see above).
void MergeTimeline(const Timeline& in, Timeline* into, size_t max_bins);

}  // namespace inferscope::model
