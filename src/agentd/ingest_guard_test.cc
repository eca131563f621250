// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agentd/ingest_guard.h"

#include <gtest/gtest.h>

namespace inferscope::agentd {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(IngestGuardTest, OnlyTheSameUserOrRootMaySend) {
  EXPECT_TRUE(PeerAllowed(1000, 1000));
  EXPECT_TRUE(PeerAllowed(0, 1000));
  EXPECT_FALSE(PeerAllowed(1001, 1000));
  EXPECT_FALSE(PeerAllowed(65534, 0));  // an agent run as root takes no other user's windows
}

TEST(IngestGuardTest, AConnectionWithoutHelloExpires) {
  IngestLimits limits;
  limits.hello_deadline_ns = 100 * kMs;
  IngestClock clock;
  clock.accepted_ns = 1000 * kMs;
  EXPECT_EQ(DeadlinePassed(clock, false, 1100 * kMs, limits), "");
  EXPECT_NE(DeadlinePassed(clock, false, 1101 * kMs, limits).find("no hello"), std::string::npos);
  EXPECT_EQ(DeadlinePassed(clock, true, 5000 * kMs, limits), "");  // said hello: no deadline
}

TEST(IngestGuardTest, AFrameMustCompleteOnceBegun) {
  IngestLimits limits;
  limits.frame_stall_ns = 100 * kMs;
  IngestClock clock;
  clock.OnRead(0, 500, 0);  // a frame begins
  EXPECT_EQ(clock.frame_started_ns, 0);
  clock.OnRead(50 * kMs, 900, 0);  // more of the same frame: it still began at 0
  EXPECT_EQ(clock.frame_started_ns, 0);
  EXPECT_NE(DeadlinePassed(clock, true, 101 * kMs, limits).find("still incomplete"),
            std::string::npos);
  clock.OnRead(102 * kMs, 300, 1);  // that frame completed; the 300 bytes begin the next one
  EXPECT_EQ(clock.frame_started_ns, 102 * kMs);
  EXPECT_EQ(DeadlinePassed(clock, true, 150 * kMs, limits), "");
  clock.OnRead(160 * kMs, 0, 1);  // nothing partial left
  EXPECT_EQ(clock.frame_started_ns, -1);
  EXPECT_EQ(DeadlinePassed(clock, true, 100'000 * kMs, limits), "");  // idle between frames is fine
}

TEST(IngestGuardTest, TheLargestPartialFramesGoUntilTheRestFit) {
  IngestLimits limits;
  limits.max_buffered_bytes = 100;
  EXPECT_TRUE(OverBudget({40, 60}, limits).empty());  // exactly the budget
  EXPECT_EQ(OverBudget({40, 70, 10}, limits), std::vector<size_t>{1});
  EXPECT_EQ(OverBudget({90, 80, 70}, limits), (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(OverBudget({}, limits).empty());
}

}  // namespace
}  // namespace inferscope::agentd
