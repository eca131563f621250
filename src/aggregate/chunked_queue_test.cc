// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/chunked_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>

#include "src/aggregate/aggregator.h"

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

#include "src/aggregate/radix_sort.h"

namespace inferscope::aggregate {
namespace {

TEST(RadixSortTest, SortsStablyLikeStdStableSort) {
  std::mt19937_64 rng(11);
  for (const uint64_t range : {uint64_t{10}, uint64_t{1} << 20, uint64_t{1} << 50}) {
    std::vector<KeyIndex> items;
    for (uint32_t i = 0; i < 50'000; ++i) items.push_back(KeyIndex{rng() % range, i});
    auto expected = items;
    std::stable_sort(expected.begin(), expected.end(),
                     [](const KeyIndex& a, const KeyIndex& b) { return a.key < b.key; });
    RadixSortByKey(&items);
    ASSERT_EQ(items.size(), expected.size());
    for (size_t i = 0; i < items.size(); ++i) {
      ASSERT_EQ(items[i].key, expected[i].key) << i;
      ASSERT_EQ(items[i].index, expected[i].index) << i;  // ties keep their order
    }
  }
}

TEST(AggregatorOrderTest, AbsurdTimestampSpansStillSortCorrectly) {
  model::NameTable names;
  model::KernelClassifier classifier;
  const auto name = names.Intern("ampere_sgemm_128x64_tn");
  auto window = AggregateWholeTrace({}, &names, &classifier, [&](model::EventSink* s) {
    for (int64_t start : {int64_t{9'000'000'000'000'000'000}, int64_t{5}, int64_t{1'000}}) {
      model::KernelEvent k;
      k.pid = 1;
      k.start_ns = start;
      k.end_ns = start + 10;
      k.name = name;
      s->OnKernel(k);
    }
  });
  ASSERT_EQ(window.processes.size(), 1u);
  const auto& d = window.processes[0].devices[0];
  EXPECT_EQ(d.kernel_count, 3u);
  EXPECT_EQ(d.busy_ns, 30);
  EXPECT_EQ(d.first_start_ns, 5);
  EXPECT_TRUE(d.timeline.truncated);  // bins stop at the limit instead of exhausting memory
}

}  // namespace
}  // namespace inferscope::aggregate
