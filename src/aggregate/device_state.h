// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Per-device and per-process accumulators behind the Aggregator. They see events strictly in start
// order (the Aggregator's reorder buffer guarantees it), which is what lets unions of intervals and
// idle gaps be computed in one pass with O(1) state.

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/events.h"
#include "src/model/profile.h"
#include "src/model/step_phase.h"
#include "src/model/taxonomy.h"

namespace inferscope::aggregate {

// Length of the union of intervals added in non-decreasing start order. O(1) per interval.
// `on_closed` receives each maximal merged interval once it can no longer grow.
class IntervalUnion {
 public:
  template <typename OnClosed>
  void Add(int64_t start_ns, int64_t end_ns, OnClosed&& on_closed) {
    if (!open_) {
      open_ = true;
      start_ns_ = start_ns;
      end_ns_ = end_ns;
    } else if (start_ns > end_ns_) {
      total_ns_ += end_ns_ - start_ns_;
      on_closed(start_ns_, end_ns_);
      start_ns_ = start_ns;
      end_ns_ = end_ns;
    } else if (end_ns > end_ns_) {
      end_ns_ = end_ns;
    }
  }
  void Add(int64_t start_ns, int64_t end_ns) {
    Add(start_ns, end_ns, [](int64_t, int64_t) {});
  }
  // Closes the open interval; the union is complete.
  template <typename OnClosed>
  void Close(OnClosed&& on_closed) {
    if (!open_) return;
    total_ns_ += end_ns_ - start_ns_;
    on_closed(start_ns_, end_ns_);
    open_ = false;
  }
  void Close() {
    Close([](int64_t, int64_t) {});
  }
  int64_t total_ns() const { return total_ns_; }
  // The open interval's end: the latest end added so far (meaningful when open()).
  bool open() const { return open_; }
  int64_t end_ns() const { return end_ns_; }
  // The union so far, the open interval included.
  int64_t covered_ns() const { return total_ns_ + (open_ ? end_ns_ - start_ns_ : 0); }
  void Reset() { *this = IntervalUnion(); }

 private:
  bool open_ = false;
  int64_t start_ns_ = 0;
  int64_t end_ns_ = 0;
  int64_t total_ns_ = 0;
};

// What a GPU operation was, compactly: a kernel (by name id), a memcpy (by kind) or a memset.
struct OpRef {
  enum class Kind : uint8_t { kNone, kKernel, kMemcpy, kMemset };
  Kind kind = Kind::kNone;
  uint32_t id = 0;  // NameId for kernels, MemcpyKind for copies
  bool operator==(const OpRef&) const = default;
};

// Wait time attributed to one operation a host sync waited on.
struct SyncTargetAccum {
  OpRef op;
  uint64_t count = 0;
  int64_t wait_ns = 0;
};

// Sync waits of one type with the operations they waited on (few distinct ones in practice; the
// list is capped and the overflow goes to an "other" entry).
struct SyncAccum {
  model::DurationStats wait;
  std::vector<SyncTargetAccum> targets;

  void Add(int64_t wait_ns, OpRef op);
  void Merge(const SyncAccum& other);
};

// A launch configuration as the Aggregator keys it: grid, block and the interned resources
// (Aggregator::Impl::InternResources; 0 = not recorded).
struct ConfigKey {
  std::array<int32_t, 3> grid{};
  std::array<int32_t, 3> block{};
  uint32_t resources = 0;
  bool operator==(const ConfigKey&) const = default;
};

// One configuration of a kernel in the window with its launches and their time.
struct ConfigSlot {
  ConfigKey key;
  uint64_t count = 0;
  int64_t total_ns = 0;
};

// Configurations kept per kernel name and device in a window: exact counts up to this many
// distinct ones (1-3 for most kernels; GEMMs whose grid follows the batch size reach a few dozen
// over a long window). Past it the table runs Space-Saving (Metwally et al. 2005): a new
// configuration takes the least-launched slot and inherits its count and time, so a configuration
// launched more than 1/kConfigSlots of the time is never lost and the listed counts are upper
// bounds. A fixed small array scanned from the last hit: most launches repeat the configuration
// of the kernel's previous launch, one 28-byte compare.
inline constexpr size_t kConfigSlots = 16;

// Statistics of one kernel name on one device.
struct KernelAccum {
  model::NameId name = model::kNoName;
  model::Category category = model::Category::kOther;
  bool compute = true;  // model::IsComputeKernel(category, subcategory), once per name
  std::string_view subcategory;
  model::DurationStats duration;
  // Launch configurations (AggregatorOptions::launch_configs). Launches of a kernel mostly repeat
  // its previous configuration: they add up in the current run, beside `duration` (no other cache
  // line touched), and a run goes to the slots when the configuration changes (or at the window's
  // end, FlushConfigRun).
  ConfigKey run_key;
  uint64_t run_count = 0;
  int64_t run_total_ns = 0;
  model::LogHistogram histogram;
  // Subcategory attention.prefill / attention.decode: the step's phase (model::Phase); bit 1
  // prefill, bit 2 decode.
  uint8_t attention_kind = 0;
  // The configurations seen (exact until the slots overflow; then each new one counts, so an
  // evicted configuration seen again counts twice: an upper bound) and their slots.
  uint64_t distinct_configs = 0;
  std::vector<ConfigSlot> configs;

  void AddConfig(const ConfigKey& key, int64_t duration_ns) {
    if (run_count != 0 && key == run_key) {
      ++run_count;
      run_total_ns += duration_ns;
      return;
    }
    FlushConfigRun();
    run_key = key;
    run_count = 1;
    run_total_ns = duration_ns;
  }
  // Moves the current run into the slots.
  void FlushConfigRun();
};

// The last operation seen on a stream: enough to measure the next idle gap and to know what a sync
// on that stream waited for.
struct StreamState {
  uint32_t stream = 0;
  int64_t last_end_ns = 0;
  OpRef last_op;
};

// The timeline stops growing here (2.8 hours at the default 100 ms bins; use a wider --bin for
// longer traces); later activity still counts everywhere else and the timeline says it is cut.
inline constexpr size_t kMaxTimelineBins = 100'000;

inline constexpr size_t kSyncTypes = static_cast<size_t>(model::SyncType::kCount);

// Everything accumulated for one device of one process in the current window.
struct DeviceState {
  uint32_t device = 0;
  bool has_gpu_activity = false;
  int64_t first_start_ns = 0;
  int64_t last_end_ns = 0;

  IntervalUnion busy;
  IntervalUnion compute;
  IntervalUnion communication;
  IntervalUnion compute_or_communication;

  uint64_t kernel_count = 0;
  std::vector<uint32_t> slot_of_name;  // NameId -> index into kernels + 1 (0 = none yet)
  std::vector<KernelAccum> kernels;

  model::Timeline timeline;
  model::IdleGapStats idle_gaps;
  model::IdleCauseStats idle_causes;
  model::StepStats steps;
  model::PhaseSplit phases;
  // The step being built: it began at step_start_ns (when step_open) and has run the attention
  // kinds in step_attention (KernelAccum::attention_kind bits). It counts only when step_whole: it
  // began right after a host turn or with the device's first activity, and was not cut (see
  // SettleStep). Its GPU operations accumulate here until its phase is known (when it ends); an
  // open step is carried across window edges and counts, whole, in the window it ends in.
  // These fields persist across windows (ResetWindow keeps them).
  bool step_open = false;
  uint8_t step_attention = 0;
  bool step_whole = true;
  int64_t step_start_ns = 0;
  // Its busy time: the union of its operations, each adding what it covers past the latest end
  // before it (gpu_end_ns), so an operation running across a window edge counts once.
  int64_t step_busy_ns = 0;
  uint64_t step_ops = 0;
  std::array<int64_t, model::kCategoryCount> step_category_ns{};
  // The latest end of any GPU operation of the device, across windows (when gpu_seen): where the
  // device's idle time began when a window starts without activity.
  bool gpu_seen = false;
  int64_t gpu_end_ns = 0;

  // The process delivers step ranges (AggregatorOptions::step_ranges): its steps are those ranges
  // (settled by the Aggregator into AddRangeStep) and the host-turn step above stays closed.
  // Persists across windows.
  bool range_steps = false;

  // Adds one GPU operation to the open step.
  void AddStepOp(size_t category, int64_t duration_ns, uint8_t attention_kind) {
    ++step_ops;
    step_category_ns[category] += duration_ns;
    step_attention |= attention_kind;
  }
  // Counts one whole step range of `phase` in this window: its span, its GPU busy time (the union
  // of its operations), operations and their time by category (as EndStep counts a host-turn step).
  void AddRangeStep(model::Phase phase, int64_t step_ns, int64_t busy_ns, uint64_t ops,
                    const std::array<int64_t, model::kCategoryCount>& category_ns);
  // A GPU operation no step range holds (launched outside every step, or after its step was
  // settled): outside the phases.
  void AddOutsideOp(size_t category, int64_t duration_ns) {
    ++phases.outside_ops;
    phases.outside_ns[category] += duration_ns;
  }
  // Ends the open step at `end_ns` (the start of the host turn after it): a whole step goes to
  // its phase, any other step's operations to phases.outside_*. Clears the step.
  void EndStep(int64_t end_ns);
  // What becomes of the open step when the window [window_start_ns, window_end_ns) closes:
  //  - `final` (the trace or the process ended): it ends at its last operation and counts here;
  //  - a whole step open for at most `max_carry_ns` is carried into the next window as it is,
  //    also when the device ran nothing in this window (the next operation's host-turn test says
  //    whether that idle was the host's turn, as in one window);
  //  - past that, a step whose device ran nothing in the whole window ends at its last operation
  //    (counted if whole);
  //  - any other (not whole, or running longer than any serving step) is cut: its operations so
  //    far are outside in this window, and the rest of it is not whole either.
  void SettleStep(int64_t window_start_ns, int64_t window_end_ns, bool final, int64_t max_carry_ns);
  model::LaunchStats launch;
  std::array<SyncAccum, kSyncTypes> sync_records{};  // from SyncEvents
  std::array<SyncAccum, kSyncTypes> sync_calls{};    // from blocking API calls
  std::array<model::TransferStats, static_cast<size_t>(model::MemcpyKind::kCount)> memcpy{};
  model::TransferStats memset;
  model::AllocationStats allocations;

  std::vector<StreamState> streams;  // persists across windows (gaps span window edges)

  // The timeline bin the last ForEachBin call ended in (a cache; see ForEachBin).
  size_t cached_bin = 0;
  int64_t cached_bin_start_ns = std::numeric_limits<int64_t>::min() / 2;

  StreamState* Stream(uint32_t stream) {
    for (auto& s : streams)
      if (s.stream == stream) return &s;
    streams.push_back(StreamState{stream, 0, {}});
    return &streams.back();
  }

  // Adds `[start_ns, end_ns)` into `bins` of the timeline (per-category or busy).
  template <typename Fn>
  void ForEachBin(int64_t start_ns, int64_t end_ns, Fn&& fn);

  // Clears the statistics for a new window; stream state is kept.
  void ResetWindow(int64_t window_start_ns, int64_t bin_ns);
};

template <typename Fn>
void DeviceState::ForEachBin(int64_t start_ns, int64_t end_ns, Fn&& fn) {
  const int64_t bin_ns = timeline.bin_ns;
  if (bin_ns <= 0 || end_ns <= start_ns) return;
  // Events before the origin (possible for late records) are clipped into the first bin.
  int64_t s = start_ns < timeline.origin_ns ? timeline.origin_ns : start_ns;
  if (end_ns <= s) return;
  // Consecutive events almost always land in the bin of the previous one: skip the division.
  size_t bin;
  if (s >= cached_bin_start_ns && s < cached_bin_start_ns + bin_ns) {
    bin = cached_bin;
  } else {
    bin = static_cast<size_t>((s - timeline.origin_ns) / bin_ns);
  }
  while (true) {
    const int64_t bin_start = timeline.origin_ns + static_cast<int64_t>(bin) * bin_ns;
    const int64_t bin_end = bin_start + bin_ns;
    const int64_t e = end_ns < bin_end ? end_ns : bin_end;
    if (bin >= kMaxTimelineBins) {  // a corrupt timestamp must not allocate without bound
      timeline.truncated = true;
      return;
    }
    if (bin >= timeline.busy_ns.size()) {
      timeline.busy_ns.resize(bin + 1, 0);
      timeline.category_ns.resize(bin + 1, std::array<int64_t, model::kCategoryCount>{});
    }
    fn(bin, e - s);
    cached_bin = bin;
    cached_bin_start_ns = bin_start;
    if (e >= end_ns) break;
    s = e;
    ++bin;
  }
}

}  // namespace inferscope::aggregate
