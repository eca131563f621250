// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/chunked_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>

namespace inferscope::aggregate {
namespace {

// Random pushes and pops against std::deque as the reference, with a tiny chunk so that chunk
// boundaries, releases and the spare chunk are all exercised.
TEST(ChunkedQueueTest, BehavesLikeADequeAcrossChunkBoundaries) {
  ChunkedQueue<int, 4> q;
  std::deque<int> ref;
  std::mt19937 rng(7);
  int next = 0;
  for (int step = 0; step < 20'000; ++step) {
    if (rng() % 3 != 0) {
      q.push_back(next);
      ref.push_back(next);
      ++next;
    } else {
      const size_t n = rng() % 7;
      q.pop_front(n);
      for (size_t i = 0; i < n && !ref.empty(); ++i) ref.pop_front();
    }
    ASSERT_EQ(q.size(), ref.size());
    if (!ref.empty()) {
      ASSERT_EQ(q[0], ref.front());
      ASSERT_EQ(q.back(), ref.back());
      const size_t mid = ref.size() / 2;
      ASSERT_EQ(q[mid], ref[mid]);
    }
  }
  q.clear();
  EXPECT_TRUE(q.empty());
  q.push_back(42);
  EXPECT_EQ(q[0], 42);
}

}  // namespace
}  // namespace inferscope::aggregate
