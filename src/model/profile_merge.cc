// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/profile_merge.h"

#include <algorithm>
#include <climits>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace inferscope::model {

namespace {

using Int128 = __int128;

void Add(CategoryStats* into, const CategoryStats& in) {
  into->count += in.count;
  into->time_ns += in.time_ns;
}

void Add(TransferStats* into, const TransferStats& in) {
  into->count += in.count;
  into->bytes += in.bytes;
  into->time_ns += in.time_ns;
  into->pageable_count += in.pageable_count;
}

void AddStats(KernelStats* into, const KernelStats& in) {
  into->duration.Merge(in.duration);
  into->histogram.Merge(in.histogram);
}

// The same kernel in two windows: its statistics and its launch configurations (the tail row
// takes statistics only; configurations are listed for the top rows).
void AddRow(KernelStats* into, const KernelStats& in) {
  AddStats(into, in);
  MergeLaunchConfigs(in.configs, in.distinct_configs, &into->configs, &into->distinct_configs);
}

// A device that saw no GPU activity in a window has first_start = last_end = 0 (the Aggregator
// rejects zero timestamps, so 0 never marks real activity).
bool HasSpan(const DeviceProfile& d) { return d.first_start_ns != 0 || d.last_end_ns != 0; }

bool HeavierKernel(const KernelStats& a, const KernelStats& b) {
  if (a.duration.total_ns != b.duration.total_ns) return a.duration.total_ns > b.duration.total_ns;
  if (a.duration.count != b.duration.count) return a.duration.count > b.duration.count;
  return a.name < b.name;
}

void MergeTopKernels(const DeviceProfile& in, DeviceProfile* into, int top_k) {
  std::vector<KernelStats>& rows = into->top_kernels;
  rows.reserve(rows.size() + in.top_kernels.size());
  if (rows.size() * in.top_kernels.size() <= 1024) {
    // The usual case (top-K of about 20 on each side; this runs for every window a rollup or a
    // range folds): a scan that compares lengths first costs less than hashing every name.
    for (const KernelStats& k : in.top_kernels) {
      auto it = std::find_if(rows.begin(), rows.end(),
                             [&k](const KernelStats& r) { return r.name == k.name; });
      if (it == rows.end())
        rows.push_back(k);
      else
        AddRow(&*it, k);
    }
  } else {
    // Views of the rows' names (no copies); the reserve above keeps them valid while new rows
    // are appended.
    std::unordered_map<std::string_view, size_t> index;
    index.reserve(rows.capacity());
    for (size_t i = 0; i < rows.size(); ++i) index.emplace(rows[i].name, i);
    for (const KernelStats& k : in.top_kernels) {
      auto [it, inserted] = index.emplace(k.name, rows.size());
      if (inserted)
        rows.push_back(k);
      else
        AddRow(&rows[it->second], k);
    }
  }
  // The tail: an empty default row (distinct_names 1, no name) takes the other's identity.
  KernelStats& tail = into->tail;
  if (tail.name.empty() && tail.duration.count == 0) {
    tail.name = in.tail.name;
    tail.category = in.tail.category;
    tail.subcategory = in.tail.subcategory;
    tail.distinct_names = 0;
  }
  AddStats(&tail, in.tail);
  tail.distinct_names += in.tail.distinct_names;

  // Order by index, then move each row once: a KernelStats is ~450 bytes (its histogram), and
  // sorting the rows themselves moved them dozens of times per merge.
  std::vector<uint32_t> order(rows.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&rows](uint32_t a, uint32_t b) { return HeavierKernel(rows[a], rows[b]); });
  const size_t keep = std::min(rows.size(), top_k < 0 ? size_t{0} : static_cast<size_t>(top_k));
  for (size_t i = keep; i < order.size(); ++i) {
    AddStats(&tail, rows[order[i]]);
    tail.distinct_names += rows[order[i]].distinct_names;
  }
  std::vector<KernelStats> kept;
  kept.reserve(keep);
  for (size_t i = 0; i < keep; ++i) kept.push_back(std::move(rows[order[i]]));
  rows = std::move(kept);
}

void MergeSync(const SyncStats& in, SyncStats* into, int max_targets) {
  into->wait.Merge(in.wait);
  if (in.waited_on.empty()) return;
  std::vector<SyncTarget>& targets = into->waited_on;
  for (const SyncTarget& t : in.waited_on) {
    auto it = std::find_if(targets.begin(), targets.end(),
                           [&t](const SyncTarget& x) { return x.kernel_name == t.kernel_name; });
    if (it == targets.end()) {
      targets.push_back(t);
    } else {
      it->count += t.count;
      it->wait_ns += t.wait_ns;
    }
  }
  std::sort(targets.begin(), targets.end(), [](const SyncTarget& a, const SyncTarget& b) {
    if (a.wait_ns != b.wait_ns) return a.wait_ns > b.wait_ns;
    if (a.count != b.count) return a.count > b.count;
    return a.kernel_name < b.kernel_name;
  });
  if (max_targets >= 0 && targets.size() > static_cast<size_t>(max_targets))
    targets.resize(static_cast<size_t>(max_targets));
}

void MergeAllocations(const AllocationStats& in, AllocationStats* into) {
  into->malloc_calls.Merge(in.malloc_calls);
  into->free_calls.Merge(in.free_calls);
  into->malloc_bytes += in.malloc_bytes;
  into->slow_calls += in.slow_calls;
  into->slow_total_ns += in.slow_total_ns;
}

size_t Bins(const Timeline& t) { return std::max(t.busy_ns.size(), t.category_ns.size()); }

// Values of one bin: the categories, then busy.
using BinValues = std::array<int64_t, kCategoryCount + 1>;

BinValues ValuesOf(const Timeline& t, size_t i) {
  BinValues v{};
  if (i < t.category_ns.size())
    std::copy(t.category_ns[i].begin(), t.category_ns[i].end(), v.begin());
  if (i < t.busy_ns.size()) v[kCategoryCount] = t.busy_ns[i];
  return v;
}

}  // namespace

void MergeTimeline(const Timeline& in, Timeline* into, size_t max_bins) {
  into->truncated = into->truncated || in.truncated;
  const size_t in_bins = Bins(in);
  if (in_bins == 0) return;
  if (Bins(*into) == 0) {
    const bool truncated = into->truncated;
    *into = in;
    into->truncated = truncated;
    const size_t n = std::min(in_bins, max_bins);
    if (n < in_bins) into->truncated = true;
    into->busy_ns.resize(n, 0);
    into->category_ns.resize(n, {});
    return;
  }
  if (in.bin_ns <= 0 || into->bin_ns <= 0) {  // no grid to place the bins on
    into->truncated = true;
    return;
  }
  const size_t n = Bins(*into);
  into->busy_ns.resize(n, 0);
  into->category_ns.resize(n, {});

  const Int128 width = into->bin_ns;
  const Int128 in_width = in.bin_ns;
  // An earlier input extends the grid backwards by whole bins (within the bin limit).
  if (static_cast<Int128>(in.origin_ns) < into->origin_ns) {
    const Int128 need = (static_cast<Int128>(into->origin_ns) - in.origin_ns + width - 1) / width;
    const Int128 room = static_cast<Int128>(max_bins) - static_cast<Int128>(n);
    const auto add = static_cast<size_t>(std::max<Int128>(0, std::min(need, room)));
    if (add > 0) {
      into->busy_ns.insert(into->busy_ns.begin(), add, 0);
      into->category_ns.insert(into->category_ns.begin(), add, {});
      into->origin_ns = static_cast<int64_t>(into->origin_ns - static_cast<Int128>(add) * width);
    }
  }
  const Int128 origin = into->origin_ns;
  if (width % in_width == 0 && (static_cast<Int128>(in.origin_ns) - origin) % in_width == 0) {
    // Input bins nest in the grid's (a 100 ms window on a 10 s rollup grid, equal grids): each
    // adds whole into one bin, which is what the proportional split below gives, without its
    // 128-bit arithmetic per value (this runs for every window a rollup or a range folds).
    const Int128 ratio = width / in_width;
    const Int128 first = (static_cast<Int128>(in.origin_ns) - origin) / in_width;
    for (size_t i = 0; i < in_bins; ++i) {
      const BinValues v = ValuesOf(in, i);
      if (std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; })) continue;
      const Int128 fine = first + static_cast<Int128>(i);
      if (fine < 0 || fine / ratio >= static_cast<Int128>(max_bins)) {
        into->truncated = true;
        continue;
      }
      const auto bin = static_cast<size_t>(fine / ratio);
      if (bin >= into->busy_ns.size()) {
        into->busy_ns.resize(bin + 1, 0);
        into->category_ns.resize(bin + 1, {});
      }
      for (size_t c = 0; c < static_cast<size_t>(kCategoryCount); ++c)
        into->category_ns[bin][c] += v[c];
      into->busy_ns[bin] += v[kCategoryCount];
    }
    return;
  }
  for (size_t i = 0; i < in_bins; ++i) {
    const BinValues v = ValuesOf(in, i);
    if (std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; })) continue;
    const Int128 s = in.origin_ns + static_cast<Int128>(i) * in_width;
    const Int128 e = s + in_width;
    // Target bins overlapping [s, e): floor division for both ends.
    auto floor_div = [](Int128 a, Int128 b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
    Int128 first = floor_div(s - origin, width);
    Int128 last = floor_div(e - 1 - origin, width);
    if (first < 0 || last >= static_cast<Int128>(max_bins)) into->truncated = true;
    // Each piece gets floor(v * covered_so_far / width) - (what earlier pieces got): the pieces
    // sum to v exactly whatever the rounding.
    first = std::max<Int128>(first, 0);
    last = std::min<Int128>(last, static_cast<Int128>(max_bins) - 1);
    Int128 covered = std::min(e, std::max(s, origin + first * width)) - s;  // dropped before
    BinValues given{};
    for (size_t c = 0; c < v.size(); ++c)
      given[c] = static_cast<int64_t>(static_cast<Int128>(v[c]) * covered / in_width);
    for (Int128 k = first; k <= last; ++k) {
      const Int128 bin_start = origin + k * width;
      const Int128 piece = std::min(e, bin_start + width) - std::max(s, bin_start);
      covered += piece;
      const auto bin = static_cast<size_t>(k);
      if (bin >= into->busy_ns.size()) {
        into->busy_ns.resize(bin + 1, 0);
        into->category_ns.resize(bin + 1, {});
      }
      for (size_t c = 0; c < v.size(); ++c) {
        if (v[c] == 0) continue;
        const auto upto = static_cast<int64_t>(static_cast<Int128>(v[c]) * covered / in_width);
        const int64_t share = upto - given[c];
        given[c] = upto;
        if (c < static_cast<size_t>(kCategoryCount))
          into->category_ns[bin][c] += share;
        else
          into->busy_ns[bin] += share;
      }
    }
  }
}

void MergeDeviceProfile(const DeviceProfile& in, DeviceProfile* into, const MergeOptions& options) {
  if (into->device_name.empty()) into->device_name = in.device_name;
  if (into->device_uuid.empty()) into->device_uuid = in.device_uuid;
  if (HasSpan(in)) {
    if (!HasSpan(*into)) {
      into->first_start_ns = in.first_start_ns;
      into->last_end_ns = in.last_end_ns;
    } else {
      into->first_start_ns = std::min(into->first_start_ns, in.first_start_ns);
      into->last_end_ns = std::max(into->last_end_ns, in.last_end_ns);
    }
  }
  into->busy_ns += in.busy_ns;
  into->compute_ns += in.compute_ns;
  into->communication_ns += in.communication_ns;
  into->communication_overlap_ns += in.communication_overlap_ns;
  into->kernel_count += in.kernel_count;
  for (size_t c = 0; c < into->categories.size(); ++c) Add(&into->categories[c], in.categories[c]);
  for (const auto& [name, stats] : in.subcategories) Add(&into->subcategories[name], stats);
  MergeTopKernels(in, into, options.top_k);
  MergeTimeline(in.timeline, &into->timeline, options.max_timeline_bins);
  into->idle_gaps.host_wait.Merge(in.idle_gaps.host_wait);
  into->idle_gaps.kernel_wait.Merge(in.idle_gaps.kernel_wait);
  into->idle_gaps.other.Merge(in.idle_gaps.other);
  into->idle_causes.Merge(in.idle_causes);
  into->steps.Merge(in.steps);
  into->phases.Merge(in.phases);
  into->launch.cpu_launch.Merge(in.launch.cpu_launch);
  into->launch.launch_delay.Merge(in.launch.launch_delay);
  into->launch.short_kernels += in.launch.short_kernels;
  into->launch.graph_launches += in.launch.graph_launches;
  into->launch.kernels_from_graphs += in.launch.kernels_from_graphs;
  for (size_t s = 0; s < into->syncs.size(); ++s)
    MergeSync(in.syncs[s], &into->syncs[s], options.max_sync_targets);
  for (size_t k = 0; k < into->memcpy.size(); ++k) Add(&into->memcpy[k], in.memcpy[k]);
  Add(&into->memset, in.memset);
  MergeAllocations(in.allocations, &into->allocations);
  into->graphs.Merge(in.graphs);
}

void MergeWindow(const ProfileWindow& in, ProfileWindow* into, const MergeOptions& options) {
  const bool into_empty = into->processes.empty() && into->start_ns == 0 && into->end_ns == 0;
  if (into_empty) {
    into->start_ns = in.start_ns;
    into->end_ns = in.end_ns;
  } else {
    into->start_ns = std::min(into->start_ns, in.start_ns);
    into->end_ns = std::max(into->end_ns, in.end_ns);
  }
  bool resort = false;
  for (const ProcessProfile& p : in.processes) {
    auto it =
        std::find_if(into->processes.begin(), into->processes.end(), [&p](const ProcessProfile& x) {
          return x.pid == p.pid && x.rank == p.rank && x.hostname == p.hostname;
        });
    if (it == into->processes.end()) {
      into->processes.push_back(p);
      resort = true;
      continue;
    }
    ProcessProfile& mine = *it;
    if (mine.world_size < 0) mine.world_size = p.world_size;
    for (size_t q = 0; q < mine.data_quality.size(); ++q) mine.data_quality[q] += p.data_quality[q];
    mine.profiler_cpu_ns += p.profiler_cpu_ns;
    if (!p.ranges.empty())
      mine.ranges.Merge(p.ranges, options.top_k < 0 ? 0 : static_cast<size_t>(options.top_k));
    for (const DeviceProfile& d : p.devices) {
      auto dit =
          std::lower_bound(mine.devices.begin(), mine.devices.end(), d.device,
                           [](const DeviceProfile& x, uint32_t id) { return x.device < id; });
      if (dit == mine.devices.end() || dit->device != d.device)
        mine.devices.insert(dit, d);
      else
        MergeDeviceProfile(d, &*dit, options);
    }
  }
  if (resort) {
    std::stable_sort(into->processes.begin(), into->processes.end(),
                     [](const ProcessProfile& a, const ProcessProfile& b) {
                       const int32_t ra = a.rank < 0 ? INT32_MAX : a.rank;
                       const int32_t rb = b.rank < 0 ? INT32_MAX : b.rank;
                       return std::tie(ra, a.pid) < std::tie(rb, b.pid);
                     });
  }
}

}  // namespace inferscope::model
