// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Test helpers: a hand-built window with every field set to a distinct non-default value, and a
// field-by-field comparison that names the first difference (operator== only says "differs").

#include <cstdint>
#include <string>

#include "src/model/profile.h"

namespace inferscope::wire::testing {

// A window with every field of every struct set (two processes, two devices, negative and huge
// values, a tail, a timeline with a truncated flag, syncs with waited_on lists...).
inline model::ProfileWindow FullWindow(int top_kernels = 3, int bins = 5) {
  int64_t v = 1000;
  auto next = [&v]() { return v += 7919; };
  auto duration = [&]() {
    model::DurationStats d;
    d.count = static_cast<uint64_t>(next());
    d.total_ns = next() * 1000;
    d.min_ns = next() % 97;
    d.max_ns = next();
    return d;
  };
  auto kernel = [&](const std::string& name, model::Category c) {
    model::KernelStats k;
    k.name = name;
    k.category = c;
    k.subcategory = std::string(model::kCategoryNames[static_cast<int>(c)]) + ".sub";
    k.duration = duration();
    for (int i = 3; i < 20; i += 2) k.histogram.counts[i] = static_cast<uint64_t>(next());
    k.histogram.counts[model::LogHistogram::kBuckets - 1] = 1;
    return k;
  };

  model::ProfileWindow w;
  w.start_ns = 1'700'000'000'000'000'000;
  w.end_ns = w.start_ns + 10'000'000'000;
  for (uint32_t p = 0; p < 2; ++p) {
    model::ProcessProfile& proc = w.processes.emplace_back();
    proc.pid = 4000000000u + p;
    proc.rank = static_cast<int32_t>(p);
    proc.world_size = 2;
    proc.profiler_cpu_ns = 123'456;
    proc.hostname = "node-" + std::to_string(p) + ".example";
    if (p == 0) {  // an NVTX range table (1.4): rows, a row with GPU work only, a tail
      model::RangeStats& fwd = proc.ranges.rows.emplace_back();
      fwd.name = "forward";
      fwd.duration.Add(5'000'000);
      fwd.duration.Add(7'000'000);
      fwd.gpu_ops = 40;
      fwd.gpu_time_ns = 9'000'000;
      model::RangeStats& gpu_only = proc.ranges.rows.emplace_back();
      gpu_only.name = "ProfilerStep#1";  // began in the window before: GPU work only here
      gpu_only.gpu_ops = 3;
      gpu_only.gpu_time_ns = 1'000;
      proc.ranges.tail.duration.Add(10);
      proc.ranges.tail.gpu_ops = 1;
      proc.ranges.tail.gpu_time_ns = -5;  // negative values survive (zigzag)
      proc.ranges.tail_names = 2;
      proc.ranges.late = 1;
    }
    for (size_t q = 0; q < proc.data_quality.size(); ++q) proc.data_quality[q] = q * 3 + p;
    for (uint32_t dev = 0; dev < 2; ++dev) {
      model::DeviceProfile& d = proc.devices.emplace_back();
      d.device = dev + p;
      d.device_name = "NVIDIA H100 80GB HBM3";
      d.device_uuid =
          "GPU-0000000" + std::to_string(p) + "-0000-4000-8000-00000000000" + std::to_string(dev);
      d.first_start_ns = w.start_ns + 5;
      d.last_end_ns = w.end_ns - 3;
      d.busy_ns = next();
      d.compute_ns = next();
      d.communication_ns = next();
      d.communication_overlap_ns = -next();  // lossless even for values the Aggregator never makes
      d.kernel_count = static_cast<uint64_t>(next());
      for (size_t c = 0; c < d.categories.size(); ++c) {
        if (c == 4) continue;  // one empty category
        d.categories[c].count = static_cast<uint64_t>(next());
        d.categories[c].time_ns = next();
      }
      d.subcategories["attention.decode"] = {12, 3400};
      d.subcategories["communication.all_reduce"] = {1, 0};
      d.subcategories["memory.memcpy_htod"] = {0, 0};
      for (int k = 0; k < top_kernels; ++k) {
        d.top_kernels.push_back(
            kernel("_ZN5flash44flash_fwd_splitkv_kernelILi" + std::to_string(k) + "EEvNS_6ParamsE",
                   static_cast<model::Category>(k % model::kCategoryCount)));
        if (k == 0) {  // launch configurations (1.5): every field, changes between them, a -1
          model::KernelStats& row = d.top_kernels.back();
          model::LaunchConfig c;
          c.grid = {108, 2, 1};
          c.block = {128, 1, 1};
          c.count = static_cast<uint64_t>(next());
          c.total_ns = next();
          c.registers_per_thread = 168;
          c.static_shared_bytes = 1024;
          c.dynamic_shared_bytes = 49152;
          c.shared_bytes = 50176;
          row.configs.push_back(c);
          c.grid = {216, 2, 1};  // same block and resources
          c.count = 3;
          c.total_ns = 40;
          row.configs.push_back(c);
          c.block = {256, 1, 1};
          c.dynamic_shared_bytes = 0;
          c.shared_bytes = 1024;
          c.registers_per_thread = -1;  // back to "not recorded"
          c.count = 1;
          c.total_ns = -5;
          row.configs.push_back(c);
          c.static_shared_bytes = c.dynamic_shared_bytes = -1;
          c.shared_bytes = 4096;  // the sum alone (as Kineto records it)
          c.grid = {-1, 0, 2147483647};
          row.configs.push_back(c);
          row.distinct_configs = 9;
        } else if (k == 1) {
          model::LaunchConfig& c = d.top_kernels.back().configs.emplace_back();
          c.grid = {1, 1, 1};
          c.block = {32, 1, 1};
          c.count = 1;
          d.top_kernels.back().distinct_configs = 1;
        }
      }
      d.tail = kernel("other", model::Category::kOther);
      d.tail.distinct_names = 0;
      d.timeline.bin_ns = 100'000'000;
      d.timeline.origin_ns = w.start_ns;
      for (int b = 0; b < bins; ++b) {
        std::array<int64_t, model::kCategoryCount> row{};
        row[0] = next();
        row[1] = b % 2 ? 0 : next();
        row[13] = -1;
        d.timeline.category_ns.push_back(row);
        d.timeline.busy_ns.push_back(b == 1 ? 0 : next());
      }
      d.timeline.truncated = dev == 1;
      d.idle_gaps.host_wait = duration();
      d.idle_gaps.kernel_wait = duration();
      d.idle_gaps.other = duration();
      for (size_t c = 0; c < d.idle_causes.ns.size(); ++c)
        d.idle_causes.ns[c] = c == 2 ? 0 : next();
      d.idle_causes.intervals = 41;
      d.steps.plain = duration();
      d.steps.prefill = duration();
      // Phases: prefill and mixed with steps, decode empty, one trailing category set.
      for (size_t ph : {size_t{0}, size_t{2}}) {
        model::PhaseStats& ps = d.phases.phases[ph];
        ps.steps = static_cast<uint64_t>(next());
        ps.step_ns = next();
        ps.busy_ns = next();
        ps.ops = static_cast<uint64_t>(next());
        ps.category_ns[0] = next();
        ps.category_ns[5] = next();
        ps.category_ns[model::kCategoryCount - 1] = ph == 2 ? next() : 0;
      }
      d.phases.outside_ops = 7;
      d.phases.outside_ns[3] = next();
      d.launch.cpu_launch = duration();
      d.launch.launch_delay = duration();
      d.launch.short_kernels = 17;
      d.launch.graph_launches = 3;
      d.launch.kernels_from_graphs = 99;
      for (size_t s = 1; s < d.syncs.size(); ++s) {
        d.syncs[s].wait = duration();
        for (int t = 0; t < 3; ++t) {
          d.syncs[s].waited_on.push_back({t == 2 ? "[memcpy dtoh]" : "kernel_" + std::to_string(t),
                                          static_cast<uint64_t>(next()), next()});
        }
      }
      for (size_t k = 0; k < d.memcpy.size(); ++k) {
        d.memcpy[k] = {static_cast<uint64_t>(next()), uint64_t{1} << (30 + k), next(), k};
      }
      d.memset = {5, 1 << 20, 700, 0};
      d.allocations.malloc_calls = duration();
      d.allocations.free_calls = duration();
      d.allocations.malloc_bytes = uint64_t{80} << 30;
      d.allocations.slow_calls = 2;
      d.allocations.slow_total_ns = 5'000'000;
      // CUDA graph attribution (live path): every field distinct and non-zero.
      d.graphs.launches = 1200;
      d.graphs.measured_ns = next();
      d.graphs.estimated_ns = next();
      d.graphs.composition_ns = next();
      d.graphs.composition_timed_ns = d.graphs.composition_ns / 3;
      d.graphs.unattributed_ns = next();
      d.graphs.deduplicated_ns = 4'000;
      d.graphs.launch_ns = d.graphs.measured_ns + d.graphs.estimated_ns + d.graphs.composition_ns +
                           d.graphs.unattributed_ns;
      d.graphs.max_share_age_ns = 59'000'000'000;
      d.graphs.checks = 3;
      d.graphs.max_error_bp = 137;
    }
  }
  // An empty device and an empty process keep their place too.
  w.processes[1].devices.emplace_back().device = 7;
  w.processes.emplace_back().pid = 1;
  return w;
}

// The path of the first field where `a` and `b` differ ("" when equal).
inline std::string FirstDifference(const model::ProfileWindow& a, const model::ProfileWindow& b) {
#define INFERSCOPE_CMP(path, x, y) \
  if (!((x) == (y))) return path;
  INFERSCOPE_CMP("start_ns", a.start_ns, b.start_ns);
  INFERSCOPE_CMP("end_ns", a.end_ns, b.end_ns);
  INFERSCOPE_CMP("processes.size", a.processes.size(), b.processes.size());
  for (size_t p = 0; p < a.processes.size(); ++p) {
    const auto& pa = a.processes[p];
    const auto& pb = b.processes[p];
    const std::string pp = "processes[" + std::to_string(p) + "].";
    INFERSCOPE_CMP(pp + "pid", pa.pid, pb.pid);
    INFERSCOPE_CMP(pp + "rank", pa.rank, pb.rank);
    INFERSCOPE_CMP(pp + "world_size", pa.world_size, pb.world_size);
    INFERSCOPE_CMP(pp + "hostname", pa.hostname, pb.hostname);
    INFERSCOPE_CMP(pp + "data_quality", pa.data_quality, pb.data_quality);
    INFERSCOPE_CMP(pp + "ranges", pa.ranges, pb.ranges);
    INFERSCOPE_CMP(pp + "devices.size", pa.devices.size(), pb.devices.size());
    for (size_t d = 0; d < pa.devices.size(); ++d) {
      const auto& x = pa.devices[d];
      const auto& y = pb.devices[d];
      const std::string dp = pp + "devices[" + std::to_string(d) + "].";
      INFERSCOPE_CMP(dp + "device", x.device, y.device);
      INFERSCOPE_CMP(dp + "device_name", x.device_name, y.device_name);
      INFERSCOPE_CMP(dp + "device_uuid", x.device_uuid, y.device_uuid);
      INFERSCOPE_CMP(dp + "first_start_ns", x.first_start_ns, y.first_start_ns);
      INFERSCOPE_CMP(dp + "last_end_ns", x.last_end_ns, y.last_end_ns);
      INFERSCOPE_CMP(dp + "busy_ns", x.busy_ns, y.busy_ns);
      INFERSCOPE_CMP(dp + "compute_ns", x.compute_ns, y.compute_ns);
      INFERSCOPE_CMP(dp + "communication_ns", x.communication_ns, y.communication_ns);
      INFERSCOPE_CMP(dp + "overlap_ns", x.communication_overlap_ns, y.communication_overlap_ns);
      INFERSCOPE_CMP(dp + "kernel_count", x.kernel_count, y.kernel_count);
      INFERSCOPE_CMP(dp + "categories", x.categories, y.categories);
      INFERSCOPE_CMP(dp + "subcategories", x.subcategories, y.subcategories);
      INFERSCOPE_CMP(dp + "top_kernels.size", x.top_kernels.size(), y.top_kernels.size());
      for (size_t k = 0; k < x.top_kernels.size(); ++k) {
        const std::string kp = dp + "top_kernels[" + std::to_string(k) + "].";
        INFERSCOPE_CMP(kp + "name", x.top_kernels[k].name, y.top_kernels[k].name);
        INFERSCOPE_CMP(kp + "duration", x.top_kernels[k].duration, y.top_kernels[k].duration);
        INFERSCOPE_CMP(kp + "histogram", x.top_kernels[k].histogram, y.top_kernels[k].histogram);
        INFERSCOPE_CMP(kp + "configs", x.top_kernels[k].configs, y.top_kernels[k].configs);
        INFERSCOPE_CMP(kp + "distinct_configs", x.top_kernels[k].distinct_configs,
                       y.top_kernels[k].distinct_configs);
        INFERSCOPE_CMP(kp + "(other)", x.top_kernels[k], y.top_kernels[k]);
      }
      INFERSCOPE_CMP(dp + "tail", x.tail, y.tail);
      INFERSCOPE_CMP(dp + "timeline.bin_ns", x.timeline.bin_ns, y.timeline.bin_ns);
      INFERSCOPE_CMP(dp + "timeline.origin_ns", x.timeline.origin_ns, y.timeline.origin_ns);
      INFERSCOPE_CMP(dp + "timeline.busy_ns", x.timeline.busy_ns, y.timeline.busy_ns);
      INFERSCOPE_CMP(dp + "timeline.category_ns", x.timeline.category_ns, y.timeline.category_ns);
      INFERSCOPE_CMP(dp + "timeline", x.timeline, y.timeline);
      INFERSCOPE_CMP(dp + "idle_gaps", x.idle_gaps, y.idle_gaps);
      INFERSCOPE_CMP(dp + "idle_causes", x.idle_causes, y.idle_causes);
      INFERSCOPE_CMP(dp + "steps", x.steps, y.steps);
      INFERSCOPE_CMP(dp + "phases", x.phases, y.phases);
      INFERSCOPE_CMP(dp + "launch", x.launch, y.launch);
      for (size_t s = 0; s < x.syncs.size(); ++s)
        INFERSCOPE_CMP(dp + "syncs[" + std::to_string(s) + "]", x.syncs[s], y.syncs[s]);
      INFERSCOPE_CMP(dp + "memcpy", x.memcpy, y.memcpy);
      INFERSCOPE_CMP(dp + "memset", x.memset, y.memset);
      INFERSCOPE_CMP(dp + "allocations", x.allocations, y.allocations);
      INFERSCOPE_CMP(dp + "(other)", x, y);
    }
    INFERSCOPE_CMP(pp + "(other)", pa, pb);
  }
  INFERSCOPE_CMP("(other)", a, b);
#undef INFERSCOPE_CMP
  return "";
}

}  // namespace inferscope::wire::testing
