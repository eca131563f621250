// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Windows for rollup and range tests: one process, two devices, a 100 x 100 ms timeline aligned
// to the window start, values that change with the window's index, and few enough kernel names
// and sync targets that no merge ever truncates (so a merge in any grouping is exact).

#include <cstdint>
#include <string>

#include "src/model/profile.h"
#include "src/store/sqlite_store.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"

namespace inferscope::store::testing {

inline constexpr int64_t kSec = 1'000'000'000;

inline model::ProfileWindow RollupTestWindow(uint32_t pid, int32_t rank, int64_t start_ns,
                                             int index) {
  static const model::ProfileWindow base = wire::testing::FullWindow(3, 100);
  model::ProfileWindow w;
  w.start_ns = start_ns;
  w.end_ns = start_ns + 10 * kSec;
  model::ProcessProfile p = base.processes[0];
  p.pid = pid;
  p.rank = rank;
  p.hostname = "node-a";
  p.profiler_cpu_ns += index;
  for (model::DeviceProfile& d : p.devices) {
    d.first_start_ns = start_ns + 5 + index % 3;
    d.last_end_ns = start_ns + 10 * kSec - 3;
    d.busy_ns += index;
    d.kernel_count += static_cast<uint64_t>(index);
    d.top_kernels[static_cast<size_t>(index) % 3].duration.total_ns += index * 1000;
    d.top_kernels[static_cast<size_t>(index) % 3].duration.count += 1;
    d.timeline.origin_ns = start_ns;
    d.timeline.truncated = false;
    for (size_t b = 0; b < d.timeline.busy_ns.size(); ++b)
      d.timeline.busy_ns[b] += static_cast<int64_t>((b + static_cast<size_t>(index)) % 5);
  }
  w.processes.push_back(std::move(p));
  return w;
}

inline PendingWindow PendingOf(int64_t process_id, const model::ProfileWindow& w,
                               int64_t received_ns) {
  PendingWindow p;
  p.process_id = process_id;
  p.start_ns = w.start_ns;
  p.end_ns = w.end_ns;
  p.received_ns = received_ns;
  wire::EncodeWindow(w, &p.encoded);
  return p;
}

}  // namespace inferscope::store::testing
