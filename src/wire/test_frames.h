// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Test helpers: the frames and hellos a test process sends (agent, store, injection client and
// status tests build the same bytes).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "src/wire/framing.h"

namespace inferscope::wire::testing {

// One frame of `type` around `payload`, as the injection library writes it.
inline std::string Frame(FrameType type, const std::string& payload) {
  std::string out;
  EXPECT_TRUE(FrameWriter::Append(type, payload, &out).ok());
  return out;
}

// A hello from process `pid` of a two-rank job on host node-a; the start time (which tells pid
// reuse apart) is 1000 + pid (rollups_test's old-schema row for pid 100 says 1100).
inline Hello MakeHello(uint32_t pid, int32_t rank) {
  Hello h;
  h.pid = pid;
  h.rank = rank;
  h.local_rank = rank;
  h.world_size = 2;
  h.hostname = "node-a";
  h.tool_version = "0.1.0";
  h.process_start_unix_ns = 1'000 + pid;
  return h;
}

}  // namespace inferscope::wire::testing
