// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Kernel launch configurations (grid, block, registers, shared memory) with how often each ran:
// the offline kernel statistics view (views.h KernelStatRow) and the live windows' top kernels
// (profile.h KernelStats) keep the same rows, so one writer renders both.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace inferscope::model {

// One launch configuration of a kernel and how often it ran with it: grid, block and the
// resources (registers per thread, static and dynamic shared memory; -1 where the source did not
// record them: Kineto records the shared-memory sum only). Launches that differ in any of these
// (the same grid and block with another dynamic shared-memory size) are different configurations.
struct LaunchConfig {
  std::array<int32_t, 3> grid{};
  std::array<int32_t, 3> block{};
  uint64_t count = 0;
  int64_t total_ns = 0;
  int32_t registers_per_thread = -1;
  int32_t static_shared_bytes = -1;
  int32_t dynamic_shared_bytes = -1;
  int32_t shared_bytes = -1;  // static + dynamic

  // The configuration itself (everything but count and time), ordered field by field.
  std::array<int32_t, 10> key() const {
    return {grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            registers_per_thread,
            static_shared_bytes,
            dynamic_shared_bytes,
            shared_bytes};
  }
  bool operator==(const LaunchConfig&) const = default;
};
// Configurations listed per kernel (the offline view's rows and the live windows' top kernels).
inline constexpr size_t kMaxLaunchConfigs = 4;
// Configurations a merge of windows keeps per kernel (a range's report, the store's rollup rows):
// more than a row lists, so that the merge stays exact while the kernel ran with at most this many
// over the range (windows whose lists rotate through a few configurations would otherwise drop
// one, meet it again and count it twice). Reports list the first kMaxLaunchConfigs.
inline constexpr size_t kMaxMergedLaunchConfigs = 16;

// The order configurations are listed in: more launches first, then more time, then by key (so
// every writer, offline or live, lists the same ones).
bool MoreFrequentConfig(const LaunchConfig& a, const LaunchConfig& b);

// Folds the configurations `in` (of which `in_distinct` were seen, `in` listing the most frequent)
// into `*into` / `*into_distinct`: the same configurations add up, the `keep` most frequent stay
// listed. The distinct count is an upper bound: the configurations listed on either side are
// joined exactly, the ones neither listed are assumed all different; it is exact when both sides
// listed every configuration they saw.
void MergeLaunchConfigs(const std::vector<LaunchConfig>& in, uint64_t in_distinct,
                        std::vector<LaunchConfig>* into, uint64_t* into_distinct,
                        size_t keep = kMaxMergedLaunchConfigs);

}  // namespace inferscope::model
