// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/device_state.h"

namespace inferscope::aggregate {

namespace {
// Distinct operations remembered per sync type; beyond this the wait goes to the last entry, which
// then stands for "other". Real processes wait on a handful of kernels (the end of a step).
constexpr size_t kMaxSyncTargets = 64;
}  // namespace

void SyncAccum::Add(int64_t wait_ns, OpRef op) {
  wait.Add(wait_ns);
  for (SyncTargetAccum& t : targets) {
    if (t.op == op) {
      ++t.count;
      t.wait_ns += wait_ns;
      return;
    }
  }
  if (targets.size() < kMaxSyncTargets) {
    targets.push_back(SyncTargetAccum{op, 1, wait_ns});
  } else {
    targets.back().op = OpRef{};  // overflow: anonymous "other"
    ++targets.back().count;
    targets.back().wait_ns += wait_ns;
  }
}

void SyncAccum::Merge(const SyncAccum& other) {
  wait.Merge(other.wait);
  for (const SyncTargetAccum& t : other.targets) {
    bool merged = false;
    for (SyncTargetAccum& mine : targets) {
      if (mine.op == t.op) {
        mine.count += t.count;
        mine.wait_ns += t.wait_ns;
        merged = true;
        break;
      }
    }
    if (!merged) targets.push_back(t);
  }
}

void DeviceState::AddRangeStep(model::Phase phase, int64_t step_ns, int64_t busy_ns, uint64_t ops,
                               const std::array<int64_t, model::kCategoryCount>& category_ns) {
  // A step that ran prefill is a prefill step in StepStats, as EndStep's attention bit 1 says.
  ((phase == model::Phase::kPrefill || phase == model::Phase::kMixed) ? steps.prefill : steps.plain)
      .Add(step_ns);
  model::PhaseStats& p = phases.phases[static_cast<size_t>(phase)];
  ++p.steps;
  p.step_ns += step_ns;
  p.busy_ns += busy_ns;
  p.ops += ops;
  for (size_t c = 0; c < model::kCategoryCount; ++c) p.category_ns[c] += category_ns[c];
}

void DeviceState::EndStep(int64_t end_ns) {
  if (step_open) {
    if (step_whole && end_ns > step_start_ns) {
      ((step_attention & 1) ? steps.prefill : steps.plain).Add(end_ns - step_start_ns);
      model::PhaseStats& p =
          phases.phases[static_cast<size_t>(model::PhaseOfAttention(step_attention))];
      ++p.steps;
      p.step_ns += end_ns - step_start_ns;
      p.busy_ns += step_busy_ns;
      p.ops += step_ops;
      for (size_t c = 0; c < model::kCategoryCount; ++c) p.category_ns[c] += step_category_ns[c];
    } else {
      phases.outside_ops += step_ops;
      for (size_t c = 0; c < model::kCategoryCount; ++c)
        phases.outside_ns[c] += step_category_ns[c];
    }
  }
  step_open = false;
  step_attention = 0;
  step_busy_ns = 0;
  step_ops = 0;
  step_category_ns = {};
}

void DeviceState::SettleStep(int64_t window_start_ns, int64_t window_end_ns, bool final,
                             int64_t max_carry_ns) {
  if (!step_open) return;
  // Carried even when the device idled the whole window: whether the idle is the host's turn is
  // the next operation's host-turn test, as in one window (ending it here split steps analyze
  // sees whole: a kernel waiting on a peer or an event, issued before the device went idle).
  if (!final && step_whole && window_end_ns - step_start_ns <= max_carry_ns) return;
  if (final || (!has_gpu_activity && gpu_end_ns <= window_start_ns)) {
    EndStep(gpu_end_ns);
    step_whole = true;  // whatever runs next begins after the host's turn (or a new trace)
    return;
  }
  step_whole = false;
  EndStep(gpu_end_ns);
}

void KernelAccum::FlushConfigRun() {
  if (run_count == 0) return;
  const uint64_t count = run_count;
  run_count = 0;
  for (ConfigSlot& slot : configs) {
    if (slot.key == run_key) {
      slot.count += count;
      slot.total_ns += run_total_ns;
      return;
    }
  }
  ++distinct_configs;
  if (configs.size() < kConfigSlots) {
    if (configs.empty()) configs.reserve(4);
    configs.push_back(ConfigSlot{run_key, count, run_total_ns});
    return;
  }
  // Space-Saving: the least-launched slot (the first of equals) becomes this configuration.
  size_t least = 0;
  for (size_t i = 1; i < configs.size(); ++i)
    if (configs[i].count < configs[least].count) least = i;
  ConfigSlot& slot = configs[least];
  slot.key = run_key;
  slot.count += count;
  slot.total_ns += run_total_ns;
}

void DeviceState::ResetWindow(int64_t window_start_ns, int64_t bin_ns) {
  has_gpu_activity = false;
  first_start_ns = 0;
  last_end_ns = 0;
  // The open step (if any) is carried with its busy time (counted per operation, not from the
  // window's busy union, which starts over here).
  busy.Reset();
  compute.Reset();
  communication.Reset();
  compute_or_communication.Reset();
  kernel_count = 0;
  slot_of_name.clear();
  kernels.clear();
  timeline = model::Timeline{};
  timeline.bin_ns = bin_ns;
  timeline.origin_ns = window_start_ns;
  cached_bin = 0;
  cached_bin_start_ns = std::numeric_limits<int64_t>::min() / 2;
  idle_gaps = {};
  idle_causes = {};
  steps = {};
  phases = {};
  launch = {};
  sync_records = {};
  sync_calls = {};
  memcpy = {};
  memset = {};
  allocations = {};
}

}  // namespace inferscope::aggregate
