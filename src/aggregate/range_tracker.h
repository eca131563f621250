// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/model/events.h"
#include "src/model/name_table.h"
#include "src/model/profile.h"

namespace inferscope::aggregate {

// The range-table name of an NVTX range name: PyTorch's emit_nvtx makes every op instance's name
// unique ("aten::mm, seq = 12, op_id = 345, sizes = [...]"); the table groups by the op name
// before those annotations, as torch.profiler's key_averages does. The engines' per-iteration
// ranges ("[Executor] _forward_step N: ...", "execute_context_X(..)_generation_Y(..)") group by
// engine. A prefix of `name`.
std::string_view RangeGroupText(std::string_view name);

// The live NVTX range table of one process (AggregatorOptions::ranges): each window's instances
// per name and the GPU work their launching calls started inside them. Fed in time order by the
// Aggregator: ranges (by start), launching calls (ContextAt) and GPU ops (OnGpuOp with the
// context of their call). Memory: the names seen, the ranges still open per thread and the
// distinct sets of names open at a launch (capped); nothing per launch or per op.
class RangeTracker {
 public:
  explicit RangeTracker(const model::NameTable* names) : names_(names) {}

  // A whole range (start and end known), in start order with the process's launching calls;
  // `late`: it arrived after its start was processed (counted now, projected onto nothing before).
  void OnRange(const model::NvtxEvent& e, bool late);

  // The set of range names open on `tid` at `t_ns` (start <= t < end) as a context id for a
  // launching call; 0 = none. Calls come in time order (per thread).
  uint32_t ContextAt(uint32_t tid, int64_t t_ns);

  // A GPU op of `duration_ns` launched by a call with context `context`.
  void OnGpuOp(uint32_t context, int64_t duration_ns) {
    if (context == 0 || context >= contexts_.size()) return;
    for (uint32_t group : contexts_[context]) {
      Acc& a = Touch(group);
      ++a.gpu_ops;
      a.gpu_time_ns += duration_ns;
    }
  }

  // The window's table (top_k rows by host time + the tail) and a clean slate for the next.
  model::RangeTable TakeWindow(size_t top_k);

  // Distinct name sets kept for contexts; beyond it launches inside new sets are not projected.
  static constexpr size_t kMaxContexts = 1 << 16;
  static constexpr size_t kMaxThreads = 256;  // threads with ranges followed per process

 private:
  struct Acc {
    model::DurationStats duration;
    uint64_t gpu_ops = 0;
    int64_t gpu_time_ns = 0;
    bool touched = false;
  };
  struct Open {
    uint32_t group;
    int64_t start_ns, end_ns;
  };
  struct Thread {
    uint32_t tid = 0;
    std::vector<Open> open;
    // The last context computed and the times it holds for (no range opens or closes between).
    uint32_t context = 0;
    int64_t context_from_ns = 0, context_until_ns = -1;
  };

  uint32_t Group(model::NameId name);
  Acc& Touch(uint32_t group) {
    Acc& a = accs_[group];
    if (!a.touched) {
      a.touched = true;
      touched_.push_back(group);
    }
    return a;
  }
  Thread* FindThread(uint32_t tid);
  uint32_t Intern(const std::vector<uint32_t>& groups);

  const model::NameTable* names_;
  std::vector<int64_t> group_of_name_;  // by NameId: -1 unknown
  std::unordered_map<std::string_view, uint32_t> group_index_;
  std::vector<std::string_view> group_names_;  // into the NameTable (its strings never move)
  std::vector<Acc> accs_;                      // by group: this window's
  std::vector<uint32_t> touched_;              // groups with something this window
  uint64_t late_ = 0;
  std::vector<Thread> threads_;
  size_t last_thread_ = 0;
  // Context id -> the sorted distinct groups open; 0 is the empty set.
  std::vector<std::vector<uint32_t>> contexts_ = {{}};
  std::unordered_map<std::string, uint32_t> context_index_;
  std::vector<uint32_t> scratch_;
};

}  // namespace inferscope::aggregate
