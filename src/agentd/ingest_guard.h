// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// What the agent's ingest socket admits, and when it gives up on a connection. The socket lives in
// the user's 0700 state dir with mode 0600, so only the user (and root) can reach it; these bounds
// are what keeps one buggy or hostile client of that user from exhausting the agent: a connection
// cap, a hello deadline, a deadline for a frame once begun, and one budget for the partial frames
// of all connections (each may hold up to wire::kMaxFramePayloadBytes).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::agentd {

struct IngestLimits {
  // Far above a host's profiled processes (one per GPU, a few per engine), far below the agent's
  // open-file limit.
  size_t max_connections = 1024;
  // A process sends its hello as it connects; a connection silent this long is not one.
  int64_t hello_deadline_ns = 10'000'000'000;
  // A frame begun must be whole within this; a window is tens of KB, a capture chunk ~1 MiB, so
  // even a loaded host sends either within milliseconds.
  int64_t frame_stall_ns = 30'000'000'000;
  // Bytes of partial frames over all connections. Beyond it the connection holding the most is
  // dropped: legitimate frames complete as fast as loopback carries them, so only a sender that
  // stops mid-frame accumulates.
  size_t max_buffered_bytes = 256u << 20;
};

// Whether a peer's uid may send windows to an agent running as `self`: the same user, or root
// (a root-run engine profiled into the user's agent; root can reach anything anyway).
bool PeerAllowed(uid_t peer, uid_t self);

// The timing state of one connection, updated by the event loop.
struct IngestClock {
  int64_t accepted_ns = 0;
  int64_t frame_started_ns = -1;  // when the partial frame now buffered began; -1: none

  // After a read: `buffered` bytes of a partial frame remain, `frames` frames completed.
  void OnRead(int64_t now_ns, size_t buffered, size_t frames);
};

// Why the connection must be closed at `now_ns` (a sentence for the log), or empty.
std::string DeadlinePassed(const IngestClock& clock, bool has_hello, int64_t now_ns,
                           const IngestLimits& limits);

// The connections to drop so that the partial frames fit the budget: indexes into `buffered`
// (bytes per connection), the largest first, until the rest fit.
std::vector<size_t> OverBudget(const std::vector<size_t>& buffered, const IngestLimits& limits);

}  // namespace inferscope::agentd
