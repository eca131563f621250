// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/buffer_pool.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace inferscope::inject {
namespace {

TEST(BufferPoolTest, HandsOutEachBufferOnceThenReportsExhaustion) {
  BufferPool pool(1000, 3);  // rounded up to 1000 (already a multiple of 8)
  std::set<uint8_t*> seen;
  for (int i = 0; i < 3; ++i) {
    uint8_t* b = pool.Acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
    EXPECT_TRUE(seen.insert(b).second);
  }
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.exhausted(), 1u);
  pool.Release(*seen.begin(), 0);
  EXPECT_EQ(pool.Acquire(), *seen.begin());
}

TEST(BufferPoolTest, IgnoresBuffersItDidNotHandOut) {
  BufferPool pool(64, 2);
  uint8_t foreign[64];
  pool.Release(foreign, 0);
  pool.Release(pool.Acquire() + 1, 0);  // inside the pool but not a buffer start
  EXPECT_EQ(pool.foreign_releases(), 2u);
}

// CUPTI is told buffers come zeroed (ZEROED_OUT_ACTIVITY_BUFFER=1): a released buffer must be
// zero again wherever CUPTI wrote, and the first hand-out is zero throughout.
TEST(BufferPoolTest, BuffersComeBackZeroed) {
  BufferPool pool(256, 1);
  uint8_t* b = pool.Acquire();
  for (int i = 0; i < 256; ++i) ASSERT_EQ(b[i], 0) << i;
  std::memset(b, 0xab, 200);
  pool.Release(b, 200);
  uint8_t* again = pool.Acquire();
  ASSERT_EQ(again, b);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(again[i], 0) << i;
}

// Every buffer is its own heap block: a tool that frees one of our buffers (after taking over
// CUPTI's buffer callbacks) frees a block malloc gave, which free() accepts (ASan checks this).
TEST(BufferPoolTest, EachBufferIsItsOwnAllocation) {
  BufferPool pool(4096, 3);
  for (int i = 0; i < 3; ++i) {
    uint8_t* b = pool.Acquire();
    // Only the start of a heap block has a usable size (ASan reports anything else).
    EXPECT_GE(malloc_usable_size(b), 4096u);
  }
}

// Several threads acquire and release concurrently; no buffer is ever held twice (run under TSan).
TEST(BufferPoolTest, ConcurrentAcquireReleaseNeverDoubleHandsOut) {
  constexpr int kBuffers = 4;
  BufferPool pool(64, kBuffers);
  std::vector<uint8_t*> buffers;
  for (int i = 0; i < kBuffers; ++i) buffers.push_back(pool.Acquire());
  for (uint8_t* b : buffers) pool.Release(b, 0);
  std::vector<std::atomic<int>> owned(kBuffers);
  std::atomic<int> double_owned{0};
  std::atomic<int> acquired{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20'000; ++i) {
        uint8_t* b = pool.Acquire();
        if (b == nullptr) continue;
        acquired.fetch_add(1, std::memory_order_relaxed);
        size_t slot = 0;
        while (buffers[slot] != b) ++slot;
        if (owned[slot].exchange(1) != 0) double_owned.fetch_add(1);
        b[0] = static_cast<uint8_t>(t);  // the holder writes into its buffer (TSan checks this)
        owned[slot].store(0);
        pool.Release(b, 16);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(double_owned.load(), 0);
  EXPECT_GT(acquired.load(), 0);
  for (int i = 0; i < kBuffers; ++i) EXPECT_NE(pool.Acquire(), nullptr);  // all came back
}

}  // namespace
}  // namespace inferscope::inject
