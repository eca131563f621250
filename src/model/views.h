// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The views engineers bring from Nsight Systems, torch.profiler and HTA, computed over
// one trace file when asked for (`analyze --views`): kernel statistics like `nsys stats
// cuda_gpu_kern_sum` with launch configurations, a per-stream busy / idle / overlap view, steps
// (`ProfilerStep#N` and NVTX step ranges), an NVTX / user-annotation range table like `nsys
// stats nvtx_sum` with the GPU time each range launched, and GPU time by the operator and module
// that launched it (torch.profiler's key_averages). Plain data: src/aggregate's
// ViewCollector fills it, src/analyze carries it, src/report renders it. Offline only: profile
// windows carry only the live range table (model::RangeTable), which analyze turns into this
// shape (TraceViews::from_windows).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "src/model/launch_config.h"
#include "src/model/taxonomy.h"

namespace inferscope::model {

// Which views to compute; each costs time and memory only when on.
struct ViewSelection {
  bool kernels = false;  // kernel statistics and launch configurations
  bool streams = false;  // per-stream busy / idle / overlap
  bool steps = false;    // ProfilerStep#N / NVTX step ranges
  bool ranges = false;   // NVTX / user_annotation range table with projected GPU time
  bool ops = false;      // GPU time by the CPU operator (and module) that launched it

  bool any() const { return kernels || streams || steps || ranges || ops; }
  bool operator==(const ViewSelection&) const = default;
};

// Exact order statistics of a set of durations (nanoseconds). stddev is the sample standard
// deviation (n - 1 in the denominator, as `nsys stats` reports it); 0 for fewer than two values.
struct DurationSummary {
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t mean_ns = 0;
  int64_t median_ns = 0;  // lower median for an even count
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  int64_t p99_ns = 0;  // nearest rank: the ceil(0.99 * n)-th smallest
  double stddev_ns = 0;

  bool operator==(const DurationSummary&) const = default;
};

// One row of the kernel statistics table (one kernel name on one device).
struct KernelStatRow {
  std::string name;  // as recorded
  Category category = Category::kOther;
  DurationSummary duration;
  std::vector<LaunchConfig> configs;  // by count, at most kMaxLaunchConfigs
  uint64_t distinct_configs = 0;      // all the configurations seen (configs may list fewer)

  bool operator==(const KernelStatRow&) const = default;
};

// One stream of one device: its own span, busy (union of its kernels, copies and memsets), idle
// (span - busy) and the part of busy during which another stream of the device was busy too.
struct StreamRow {
  uint32_t stream = 0;
  uint64_t kernels = 0, memcpys = 0, memsets = 0;
  int64_t first_start_ns = 0, last_end_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  int64_t overlap_ns = 0;

  bool operator==(const StreamRow&) const = default;
};

// The kernel statistics and streams of one device of one process.
struct DeviceViews {
  uint32_t device = 0;
  std::vector<KernelStatRow> kernels;  // by total time, at most top
  KernelStatRow kernel_tail;           // every other kernel as one row (configs empty)
  uint64_t kernel_tail_names = 0;      // distinct names in kernel_tail
  std::vector<StreamRow> streams;      // by stream id
  int64_t multi_stream_ns = 0;         // time two or more streams of the device were busy at once

  bool operator==(const DeviceViews&) const = default;
};

// GPU work projected onto a host range: the kernels, copies and memsets whose launching API call
// (joined by correlation id) started inside the range on the range's thread.
struct ProjectedGpu {
  uint64_t ops = 0;     // kernels, copies and memsets
  int64_t time_ns = 0;  // sum of their durations
  int64_t busy_ns = 0;  // union of their intervals (steps only; 0 in the range table)
  int64_t first_start_ns = 0, last_end_ns = 0;        // on the GPU (0, 0 when ops is 0)
  std::array<int64_t, kCategoryCount> category_ns{};  // kernel time by category (steps only)

  bool operator==(const ProjectedGpu&) const = default;
};

// One step (iteration): a `ProfilerStep#N` range, or an NVTX range named like a step.
struct StepRow {
  std::string name;
  // "prefill", "decode", "mixed" (both attention kinds) or "" (unknown): from the name when the
  // engine says ("prefill"/"extend", "decode"), else from the attention kernels it launched.
  std::string phase;
  uint32_t tid = 0;
  int64_t start_ns = 0, end_ns = 0;  // the host range
  ProjectedGpu gpu;

  bool operator==(const StepRow&) const = default;
};

// The steps of one phase (prefill, decode, mixed, unknown) together.
struct PhaseRow {
  std::string phase;         // as StepRow::phase; "unknown" for ""
  DurationSummary duration;  // host durations of its steps
  int64_t gpu_time_ns = 0;   // sum of the GPU op durations of its steps
  int64_t gpu_busy_ns = 0;   // sum of the steps' GPU busy time
  std::array<int64_t, kCategoryCount> category_ns{};

  bool operator==(const PhaseRow&) const = default;
};

// One NVTX / user-annotation range name: its host durations (like `nsys stats nvtx_sum`) and the
// GPU work launched inside its instances (a nested range counts in each enclosing name once).
struct RangeRow {
  std::string name;
  DurationSummary duration;
  ProjectedGpu gpu;

  bool operator==(const RangeRow&) const = default;
};

// One operator or module name of one process, like a row of torch.profiler's key_averages(): its
// host instances and the GPU work launched inside them (kernels, copies and memsets, joined to
// their launching call by correlation id, the call to the ops open on its thread at its start).
struct OpRow {
  std::string name;
  uint64_t count = 0;        // instances
  uint64_t top_level = 0;    // instances no other op (module) of their thread encloses
  int64_t cpu_total_ns = 0;  // sum of the instances' host durations (a nested same name: each)
  int64_t cpu_self_ns = 0;   // minus the time of the ops (modules) directly inside them
  // Launched by an instance itself, with no op (module) nested deeper at the launch: the GPU time
  // is the one attribution that sums to the total ("Self CUDA").
  uint64_t gpu_ops = 0;
  uint64_t kernels = 0;  // of gpu_ops, the kernels
  int64_t gpu_self_ns = 0;
  // Launched anywhere inside an instance, nested ops included, each GPU op once per name ("CUDA
  // total").
  int64_t gpu_total_ns = 0;

  bool operator==(const OpRow&) const = default;
};

// The ops view of one process: operators (Kineto cpu_op) and modules (`nn.Module: X_N`
// python_function events, grouped by class X) with the GPU work they launched.
struct OpsView {
  std::vector<OpRow> ops;      // by gpu_self_ns, then cpu_total_ns; at most top
  OpRow op_tail;               // every other operator as one row (top_level: 0)
  uint64_t op_tail_names = 0;  // distinct names in op_tail
  uint64_t op_instances = 0;
  std::vector<OpRow> modules;  // by gpu_total_ns, then cpu_total_ns; at most top
  OpRow module_tail;
  uint64_t module_tail_names = 0;
  uint64_t module_instances = 0;
  // GPU ops launched outside every operator (no cpu_op open on the launching thread).
  uint64_t outside_gpu_ops = 0;
  int64_t outside_gpu_ns = 0;

  bool operator==(const OpsView&) const = default;
};

// The host-side views of one process.
struct ProcessViews {
  uint32_t pid = 0;
  std::vector<DeviceViews> devices;  // by device id
  std::vector<StepRow> steps;        // by start; at most kMaxSteps (the first ones)
  uint64_t steps_total = 0;          // steps found (steps may list fewer)
  DurationSummary step_duration;     // over every step found (host range durations)
  DurationSummary step_gpu_time;     // over every step found: projected GPU span (last - first)
  std::vector<PhaseRow> phases;      // prefill, decode, mixed, unknown: those with steps
  std::vector<RangeRow> ranges;      // by total host time, at most top
  RangeRow range_tail;               // every other range name as one row
  uint64_t range_tail_names = 0;
  uint64_t nvtx_ranges = 0;  // ranges seen (all names)
  uint64_t late_ranges = 0;  // from_windows: ranges counted in a later window than their start
  // Annotations the profiler projected onto GPU streams (Kineto gpu_user_annotation): duration is
  // their GPU-side span, gpu the GPU ops that started inside it on its stream.
  std::vector<RangeRow> gpu_ranges;  // by total time, at most top
  RangeRow gpu_range_tail;
  uint64_t gpu_range_tail_names = 0;
  uint64_t gpu_annotations = 0;  // instances seen (all names)
  OpsView ops;
  uint64_t unprojected_ops = 0;  // GPU ops whose launching call was not found

  bool operator==(const ProcessViews&) const = default;
};
inline constexpr size_t kMaxSteps = 1000;

// The views of one trace file, or (from_windows) the range table live windows carried.
struct TraceViews {
  ViewSelection selection;
  std::vector<ProcessViews> processes;  // by pid
  // Built from profile windows (`inferscope run --nvtx`, ProcessProfile::ranges): durations hold
  // count, total, mean, min and max only (median, p99 and stddev are not kept per window).
  bool from_windows = false;

  bool operator==(const TraceViews&) const = default;
};

}  // namespace inferscope::model
