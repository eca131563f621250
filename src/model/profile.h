// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A profile window: everything the Aggregator keeps about a stretch of time, per process and
// device. It is small and bounded (top-K kernels, fixed histograms, a timeline of fixed bins),
// never a list of kernels. Reports, the store and the diagnosis read only this.

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "src/model/events.h"
#include "src/model/launch_config.h"
#include "src/model/taxonomy.h"

namespace inferscope::model {

// Count, sum, min and max of a set of durations.
struct DurationStats {
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = std::numeric_limits<int64_t>::max();
  int64_t max_ns = 0;

  void Add(int64_t duration_ns) {
    ++count;
    total_ns += duration_ns;
    if (duration_ns < min_ns) min_ns = duration_ns;
    if (duration_ns > max_ns) max_ns = duration_ns;
  }
  void Merge(const DurationStats& other) {
    count += other.count;
    total_ns += other.total_ns;
    if (other.min_ns < min_ns) min_ns = other.min_ns;
    if (other.max_ns > max_ns) max_ns = other.max_ns;
  }
  int64_t mean_ns() const { return count ? total_ns / static_cast<int64_t>(count) : 0; }
  int64_t min_or_zero_ns() const { return count ? min_ns : 0; }

  bool operator==(const DurationStats&) const = default;
};

// Durations in power-of-two buckets: bucket i counts durations in [2^i, 2^(i+1)) ns (bucket 0 also
// holds 0 and 1 ns). 40 buckets reach ~18 minutes, enough for any kernel.
struct LogHistogram {
  static constexpr int kBuckets = 40;
  std::array<uint64_t, kBuckets> counts{};

  static int BucketOf(int64_t duration_ns) {
    if (duration_ns <= 1) return 0;
    const int b = 63 - __builtin_clzll(static_cast<uint64_t>(duration_ns));
    return b < kBuckets ? b : kBuckets - 1;
  }
  void Add(int64_t duration_ns) { ++counts[BucketOf(duration_ns)]; }
  void Merge(const LogHistogram& other) {
    for (int i = 0; i < kBuckets; ++i) counts[i] += other.counts[i];
  }
  // The lower edge of the bucket holding quantile q (0..1); an estimate within a factor of 2.
  int64_t QuantileLowerBoundNs(double q) const;

  bool operator==(const LogHistogram&) const = default;
};

// Per-kernel-name statistics (one row of the top-K table, or the aggregated long tail).
struct KernelStats {
  std::string name;  // as recorded (mangled names stay mangled; reports may demangle)
  Category category = Category::kOther;
  std::string subcategory;
  DurationStats duration;
  LogHistogram histogram;
  uint64_t distinct_names = 1;  // > 1 only for the long-tail row
  // Live windows only (AggregatorOptions::launch_configs; empty in the tail row and offline): the
  // most frequent launch configurations (MoreFrequentConfig order; at most kMaxLaunchConfigs in a
  // window, kMaxMergedLaunchConfigs in a merge of windows) and how many were seen. Within a window
  // counts are exact and distinct_configs too while the kernel ran with at most kConfigSlots
  // configurations (src/aggregate/device_state.h); past that, and after a merge of windows,
  // distinct_configs is an upper bound.
  std::vector<LaunchConfig> configs;
  uint64_t distinct_configs = 0;

  bool operator==(const KernelStats&) const = default;
};

struct CategoryStats {
  uint64_t count = 0;
  int64_t time_ns = 0;  // sum of durations (not a union: concurrent kernels both count)

  bool operator==(const CategoryStats&) const = default;
};

// Idle time between consecutive GPU operations on one stream, split the way HTA splits it:
// kernel_wait = gaps shorter than the threshold (back-to-back launches), host_wait = the next
// operation was launched by the host only after the stream ran dry, other = everything else
// (e.g. waiting on another stream or an event).
struct IdleGapStats {
  DurationStats host_wait;
  DurationStats kernel_wait;
  DurationStats other;

  bool operator==(const IdleGapStats&) const = default;
};

// Why the device was idle: every idle interval of the device (no kernel, copy or memset running on
// any stream) between its first and last activity in the window, attributed to what the host
// thread that launched the work ending the interval was doing during it. Each idle nanosecond goes
// to exactly one cause, so the causes sum to the window's idle time (docs/diagnosis.md).
enum class IdleCause : uint8_t {
  kAllocation = 0,  // the launching thread was inside cudaMalloc/cudaFree (or cuMem*) calls
  kSync,            // it was blocked in a sync, or processing what a sync returned (short pause)
  kLaunch,          // it was issuing work: launch calls and the short pauses between them
  kHostIdle,        // the thread issued nothing for a long pause (no work, or host-side work)
  kDependency,      // the work was queued before the device went idle and started late
                    // (waiting on another stream, an event, a collective peer)
  kQueued,          // queued work started within the GPU's turnaround (< the kernel-wait gap)
  kUnattributed,    // no launch record joins the work that ended the interval
  kCount,
};
inline constexpr size_t kIdleCauseCount = static_cast<size_t>(IdleCause::kCount);
// The first kHostIdleCauses causes are what a host thread does (its calls and pauses).
inline constexpr size_t kHostIdleCauses = 4;
inline constexpr const char* kIdleCauseNames[] = {
    "allocation", "sync", "launch", "host_idle", "dependency", "queued", "unattributed"};
static_assert(sizeof(kIdleCauseNames) / sizeof(kIdleCauseNames[0]) == kIdleCauseCount);

struct IdleCauseStats {
  std::array<int64_t, kIdleCauseCount> ns{};  // idle time per cause
  uint64_t intervals = 0;                     // device idle intervals attributed

  int64_t total_ns() const {
    int64_t t = 0;
    for (int64_t v : ns) t += v;
    return t;
  }
  void Merge(const IdleCauseStats& other) {
    for (size_t i = 0; i < kIdleCauseCount; ++i) ns[i] += other.ns[i];
    intervals += other.intervals;
  }
  bool operator==(const IdleCauseStats&) const = default;
};

// Steps as the GPU sees them: stretches of activity between idle intervals where the host stopped
// issuing work (an interval attributed mostly to sync, host_idle, allocation or no launch record:
// the serving loop's turn between steps). A step that ran prefill attention is a prefill step;
// the others are decode (or other) steps. A step at a window edge counts in the window it ends in.
struct StepStats {
  DurationStats plain;    // steps without prefill attention
  DurationStats prefill;  // steps with prefill attention kernels

  void Merge(const StepStats& other) {
    plain.Merge(other.plain);
    prefill.Merge(other.prefill);
  }
  bool operator==(const StepStats&) const = default;
};

// The forward phase of a step, in the words of the offline steps view (model/views.h StepRow):
// a step that ran attention.prefill kernels and no attention.decode ones is prefill, the reverse
// decode, both mixed (chunked prefill batches them together), neither unknown.
enum class Phase : uint8_t { kPrefill = 0, kDecode, kMixed, kUnknown, kCount };
inline constexpr size_t kPhaseCount = static_cast<size_t>(Phase::kCount);
inline constexpr const char* kPhaseNames[] = {"prefill", "decode", "mixed", "unknown"};
static_assert(sizeof(kPhaseNames) / sizeof(kPhaseNames[0]) == kPhaseCount);

// The GPU work of the whole steps (StepStats' steps) of one phase.
struct PhaseStats {
  uint64_t steps = 0;
  int64_t step_ns = 0;  // summed step spans (first operation's start to the host turn)
  int64_t busy_ns = 0;  // summed union of GPU activity inside its steps
  uint64_t ops = 0;     // kernels, copies and memsets that started inside its steps
  // Summed operation durations by category (copies and memsets count as memory, as in the
  // timeline and the steps view).
  std::array<int64_t, kCategoryCount> category_ns{};

  int64_t gpu_time_ns() const {
    int64_t t = 0;
    for (int64_t v : category_ns) t += v;
    return t;
  }
  void Merge(const PhaseStats& o) {
    steps += o.steps;
    step_ns += o.step_ns;
    busy_ns += o.busy_ns;
    ops += o.ops;
    for (size_t c = 0; c < category_ns.size(); ++c) category_ns[c] += o.category_ns[c];
  }
  bool operator==(const PhaseStats&) const = default;
};

// GPU time per forward phase: a GPU operation belongs to the step it started in, a step
// (whole, carried across edges) to the window it ends in. Operations of steps not whole (past the
// carry limit, DeviceState::SettleStep) are `outside_ns`: over a run of windows phases plus outside
// add up to its GPU operation time. Empty (not written on the wire) when the window has no step
// and no operation outside one: a window whose only phase data is work outside the steps (live
// step ranges are counted a while after they end, so such windows are common) keeps it.
struct PhaseSplit {
  std::array<PhaseStats, kPhaseCount> phases{};
  uint64_t outside_ops = 0;
  std::array<int64_t, kCategoryCount> outside_ns{};

  bool empty() const {
    for (const PhaseStats& p : phases)
      if (p.steps) return false;
    return outside_ops == 0;
  }
  int64_t outside_time_ns() const {
    int64_t t = 0;
    for (int64_t v : outside_ns) t += v;
    return t;
  }
  void Merge(const PhaseSplit& o) {
    for (size_t i = 0; i < kPhaseCount; ++i) phases[i].Merge(o.phases[i]);
    outside_ops += o.outside_ops;
    for (size_t c = 0; c < outside_ns.size(); ++c) outside_ns[c] += o.outside_ns[c];
  }
  bool operator==(const PhaseSplit&) const = default;
};

// How kernels were launched: CPU cost of the launch call and the delay from the call to the start
// of the kernel on the GPU.
struct LaunchStats {
  DurationStats cpu_launch;    // duration of the launching API call
  DurationStats launch_delay;  // kernel start - launch call start
  uint64_t short_kernels = 0;  // kernels shorter than the short-kernel threshold
  uint64_t graph_launches = 0;
  uint64_t kernels_from_graphs = 0;

  bool operator==(const LaunchStats&) const = default;
};

// The kernel a host sync was waiting for (the last GPU operation to finish before the wait ended).
struct SyncTarget {
  std::string kernel_name;
  uint64_t count = 0;
  int64_t wait_ns = 0;

  bool operator==(const SyncTarget&) const = default;
};

struct SyncStats {
  DurationStats wait;
  std::vector<SyncTarget> waited_on;  // bounded, heaviest first

  bool operator==(const SyncStats&) const = default;
};

struct TransferStats {
  uint64_t count = 0;
  uint64_t bytes = 0;
  int64_t time_ns = 0;
  uint64_t pageable_count = 0;  // memcpy only: host side was pageable

  bool operator==(const TransferStats&) const = default;
};

struct AllocationStats {
  DurationStats malloc_calls;
  DurationStats free_calls;
  uint64_t malloc_bytes = 0;
  uint64_t slow_calls = 0;  // malloc or free calls longer than the slow-allocation threshold
  int64_t slow_total_ns = 0;

  bool operator==(const AllocationStats&) const = default;
};

// Per-category busy time in fixed bins. Bin i covers [origin_ns + i*bin_ns, origin_ns +
// (i+1)*bin_ns).
struct Timeline {
  int64_t bin_ns = 0;
  TimestampNs origin_ns = 0;
  std::vector<std::array<int64_t, kCategoryCount>> category_ns;  // kernel time clipped into bins
  std::vector<int64_t> busy_ns;                                  // union of GPU activity per bin
  bool truncated = false;  // activity beyond the bin limit was left out of the timeline

  bool operator==(const Timeline&) const = default;
};

// CUDA graph launches of one device in one window, and how their time was attributed to kernels
// (docs/design/cuda-graphs.md). Live path only; all zero for traces.
struct CudaGraphStats {
  uint64_t launches = 0;             // graph launches that ended in the window
  int64_t launch_ns = 0;             // their spans, summed (= the four below)
  int64_t measured_ns = 0;           // traced node by node (a sample, or INFERSCOPE_GRAPH_NODES=1)
  int64_t estimated_ns = 0;          // one record per launch, split by sampled shares
  int64_t composition_ns = 0;        // one record per launch of a graph not sampled yet, split over
                                     // the kernel nodes its capture recorded (the two below)
  int64_t composition_timed_ns = 0;  // of composition_ns: split by the nodes' known durations
                                     // (the rest: evenly, by count, nothing known)
  int64_t unattributed_ns = 0;       // neither sampled nor its capture seen: one pseudo-kernel
  int64_t deduplicated_ns = 0;       // launches seen both ways at a sampling switch, counted once
  int64_t max_share_age_ns = 0;      // age of the oldest shares an estimate here used
  uint64_t checks = 0;               // samples in the window that checked earlier shares
  uint32_t max_error_bp = 0;         // largest |predicted - measured| category share, basis points
                                     // (1/100 of a percentage point) of the graph's time

  void Merge(const CudaGraphStats& o) {
    launches += o.launches;
    launch_ns += o.launch_ns;
    measured_ns += o.measured_ns;
    estimated_ns += o.estimated_ns;
    composition_ns += o.composition_ns;
    composition_timed_ns += o.composition_timed_ns;
    unattributed_ns += o.unattributed_ns;
    deduplicated_ns += o.deduplicated_ns;
    max_share_age_ns =
        max_share_age_ns > o.max_share_age_ns ? max_share_age_ns : o.max_share_age_ns;
    checks += o.checks;
    max_error_bp = max_error_bp > o.max_error_bp ? max_error_bp : o.max_error_bp;
  }
  bool operator==(const CudaGraphStats&) const = default;
};

// Everything about one device of one process in one window.
struct DeviceProfile {
  uint32_t device = 0;  // the CUDA ordinal the process sees
  std::string device_name;
  std::string device_uuid;  // "GPU-..." as NVML spells it; empty when the source did not say

  // Temporal breakdown (HTA definitions, exact nanoseconds): span = last end - first start of GPU
  // activity; busy = union of all GPU activity; idle = span - busy; compute = union of compute
  // kernels; non_compute = busy - compute.
  TimestampNs first_start_ns = 0;
  TimestampNs last_end_ns = 0;
  int64_t busy_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;          // union of communication kernels
  int64_t communication_overlap_ns = 0;  // time communication ran alongside compute

  uint64_t kernel_count = 0;
  std::array<CategoryStats, kCategoryCount> categories{};
  std::map<std::string, CategoryStats> subcategories;
  std::vector<KernelStats> top_kernels;  // by total time, at most top_k
  KernelStats tail;                      // all other kernels as one row ("other (N kernels)")

  Timeline timeline;
  IdleGapStats idle_gaps;
  IdleCauseStats idle_causes;
  StepStats steps;
  PhaseSplit phases;  // GPU time per forward phase of the whole steps
  LaunchStats launch;
  std::array<SyncStats, static_cast<size_t>(SyncType::kCount)> syncs{};
  std::array<TransferStats, static_cast<size_t>(MemcpyKind::kCount)> memcpy{};
  TransferStats memset;
  AllocationStats allocations;
  CudaGraphStats graphs;

  int64_t span_ns() const {
    return last_end_ns > first_start_ns ? last_end_ns - first_start_ns : 0;
  }
  int64_t idle_ns() const { return span_ns() - busy_ns; }
  int64_t non_compute_ns() const { return busy_ns - compute_ns; }

  bool operator==(const DeviceProfile&) const = default;
};

// One process (rank) in one window.
// One NVTX range name of a process in a live window (`inferscope run --nvtx`, CUPTI's marker
// activity): its instances' host durations and the GPU work launched inside them. The live
// counterpart of model::RangeRow (views.h) in a form that merges across windows.
struct RangeStats {
  std::string name;        // PyTorch's ", seq = " / ", op_id = " / ", sizes = " suffixes dropped
  DurationStats duration;  // host durations (start to end) of the instances
  // Kernels, copies and memsets whose launching call (runtime/driver API record, joined by
  // correlation id) started on the range's thread inside an instance; a name nested in itself
  // counts an op once.
  uint64_t gpu_ops = 0;
  int64_t gpu_time_ns = 0;  // sum of their durations

  bool operator==(const RangeStats&) const = default;
};

// The range table of a process in a window: the top names by host time and one tail row (the
// top-K + tail rule). Empty (no rows, nothing in the tail) unless ranges were recorded.
// Window edges: an instance counts in the window its START falls in, with its whole duration
// (like kernels); GPU work counts in the window the op starts in. A range whose end arrives after
// its start's window was emitted (longer than the lateness horizon) counts in the window open when
// it arrives, without the GPU work processed before it arrived (`late` says how many).
struct RangeTable {
  std::vector<RangeStats> rows;  // by total host time (ties: name), at most top_k
  RangeStats tail;               // every other name (name empty)
  uint64_t tail_names = 0;       // distinct names in the tail (an upper bound after a merge)
  uint64_t late = 0;

  bool empty() const { return *this == RangeTable{}; }
  uint64_t instances() const {
    uint64_t n = tail.duration.count;
    for (const RangeStats& r : rows) n += r.duration.count;
    return n;
  }
  // Folds `in` in: rows merge by name, the top `top_k` by total time stay, the rest join the tail.
  void Merge(const RangeTable& in, size_t top_k);
  // Cuts rows beyond `top_k` into the tail (rows must be sorted already or `sort` true).
  void Trim(size_t top_k, bool sort);

  bool operator==(const RangeTable&) const = default;
};

struct ProcessProfile {
  uint32_t pid = 0;
  int32_t rank = -1;
  int32_t world_size = -1;
  std::string hostname;
  std::vector<DeviceProfile> devices;  // sorted by device id
  std::array<uint64_t, static_cast<size_t>(DataQuality::kCount)> data_quality{};
  // CPU time inferscope itself spent in this process for this window (decoding CUPTI buffers and
  // aggregating); 0 for offline traces. The "always on" promise is checked against it.
  int64_t profiler_cpu_ns = 0;
  RangeTable ranges;  // NVTX ranges (live, opt-in; empty otherwise)

  bool operator==(const ProcessProfile&) const = default;
};

// The unit the Aggregator emits: a time range and its per-process profiles.
struct ProfileWindow {
  TimestampNs start_ns = 0;
  TimestampNs end_ns = 0;
  std::vector<ProcessProfile> processes;  // sorted by rank, then pid

  bool operator==(const ProfileWindow&) const = default;
};

}  // namespace inferscope::model
