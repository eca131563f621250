// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace inferscope::inject {

// A fixed set of equally sized, 8-byte aligned CUPTI activity buffers, allocated once at start.
// Acquire and Release are lock-free (a Treiber stack of indices with an ABA tag) and never
// allocate, so CUPTI's buffer-request callback, which can run on an application thread, costs a
// few atomic operations. When every buffer is in use Acquire returns nullptr: CUPTI then drops
// records and counts them, and memory never grows.
class BufferPool {
 public:
  BufferPool(size_t buffer_bytes, size_t buffer_count);
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  uint8_t* Acquire();
  // Returns a buffer obtained from Acquire; anything else is ignored (and counted).
  void Release(uint8_t* buffer);

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t buffer_count() const { return count_; }
  uint64_t exhausted() const { return exhausted_.load(std::memory_order_relaxed); }
  uint64_t foreign_releases() const { return foreign_.load(std::memory_order_relaxed); }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;
  // head_: low 32 bits = index of the top free buffer (kEmpty when none), high 32 = ABA tag.
  static uint64_t Pack(uint32_t index, uint32_t tag) { return (uint64_t{tag} << 32) | index; }

  const size_t buffer_bytes_;
  const size_t count_;
  std::unique_ptr<uint8_t[]> storage_;
  uint8_t* base_ = nullptr;                        // storage_ rounded up to 8 bytes
  std::unique_ptr<std::atomic<uint32_t>[]> next_;  // free-list links
  std::atomic<uint64_t> head_;
  std::atomic<uint64_t> exhausted_{0};
  std::atomic<uint64_t> foreign_{0};
};

}  // namespace inferscope::inject
