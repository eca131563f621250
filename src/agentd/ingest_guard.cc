// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agentd/ingest_guard.h"

#include <algorithm>
#include <numeric>

namespace inferscope::agentd {

bool PeerAllowed(uid_t peer, uid_t self) { return peer == self || peer == 0; }

void IngestClock::OnRead(int64_t now_ns, size_t buffered, size_t frames) {
  if (buffered == 0) {
    frame_started_ns = -1;
  } else if (frames > 0 || frame_started_ns < 0) {
    // A frame completed in this read: what is buffered now is a later frame, begun at most now.
    frame_started_ns = now_ns;
  }
}

std::string DeadlinePassed(const IngestClock& clock, bool has_hello, int64_t now_ns,
                           const IngestLimits& limits) {
  if (!has_hello && now_ns - clock.accepted_ns > limits.hello_deadline_ns)
    return "no hello within " + std::to_string(limits.hello_deadline_ns / 1'000'000) + " ms";
  if (clock.frame_started_ns >= 0 && now_ns - clock.frame_started_ns > limits.frame_stall_ns)
    return "a frame begun " + std::to_string((now_ns - clock.frame_started_ns) / 1'000'000) +
           " ms ago is still incomplete";
  return {};
}

std::vector<size_t> OverBudget(const std::vector<size_t>& buffered, const IngestLimits& limits) {
  size_t total = std::accumulate(buffered.begin(), buffered.end(), size_t{0});
  std::vector<size_t> order(buffered.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffered[a] > buffered[b]; });
  std::vector<size_t> drop;
  for (size_t i : order) {
    if (total <= limits.max_buffered_bytes) break;
    drop.push_back(i);
    total -= buffered[i];
  }
  return drop;
}

}  // namespace inferscope::agentd
