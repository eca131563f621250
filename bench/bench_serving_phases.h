// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The forward-phase split of a serving window, for the fleet benchmarks' generated windows
// (fleet_benchmark --phases, fleet_profile_benchmark): what schema 4's phases table holds for a
// device that serves, so the two benchmarks time the same rows.

#include <cstddef>
#include <cstdint>
#include <tuple>

#include "src/model/profile.h"

namespace inferscope::bench {

// Decode steps with most of the time, a few prefill steps, a little time in steps not whole;
// five categories each (the attention, matmul, norm, elementwise and communication kernels of a
// forward pass). Shares of `d->busy_ns` and of the window's length.
inline void AddServingPhases(model::DeviceProfile* d, int64_t window_ns) {
  for (auto [phase, steps, share] :
       {std::tuple{model::Phase::kDecode, 380, 70}, std::tuple{model::Phase::kPrefill, 12, 25}}) {
    model::PhaseStats& ps = d->phases.phases[static_cast<size_t>(phase)];
    ps.steps = static_cast<uint64_t>(steps);
    ps.step_ns = window_ns / 100 * share;
    ps.busy_ns = d->busy_ns / 100 * share;
    ps.ops = static_cast<uint64_t>(steps) * 90;
    for (size_t c = 0; c < 5; ++c) ps.category_ns[c] = ps.busy_ns / 5;
  }
  d->phases.outside_ops = 20;
  d->phases.outside_ns[0] = d->busy_ns / 100;
}

}  // namespace inferscope::bench
