// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace inferscope::inject {

// A fixed set of equally sized, 8-byte aligned, zeroed CUPTI activity buffers, allocated once at
// start. Acquire and Release are lock-free (a Treiber stack of indices with an ABA tag) and never
// allocate, so CUPTI's buffer-request callback, which can run on an application thread, costs a
// few atomic operations. When every buffer is in use Acquire returns nullptr: CUPTI then drops
// records and counts them, and memory never grows.
//
// Each buffer is its own allocation: if another tool re-registers CUPTI's buffer callbacks and
// frees buffers we handed out, it frees a block malloc gave, not a slice of one (an abort).
// Buffers are zeroed again on Release (on CUPTI's completion thread), because CUPTI is told they
// come zeroed (ZEROED_OUT_ACTIVITY_BUFFER=1) so that it does not memset them on the launching
// thread; only the bytes CUPTI wrote need clearing.
class BufferPool {
 public:
  BufferPool(size_t buffer_bytes, size_t buffer_count);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  uint8_t* Acquire();
  // Returns a buffer obtained from Acquire, zeroing its first `used_bytes` (what CUPTI wrote);
  // anything else is ignored (and counted).
  void Release(uint8_t* buffer, size_t used_bytes);

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t buffer_count() const { return count_; }
  uint64_t exhausted() const { return exhausted_.load(std::memory_order_relaxed); }
  uint64_t foreign_releases() const { return foreign_.load(std::memory_order_relaxed); }

 private:
  // Index of `buffer` in buffers_, or kEmpty. A linear scan: pools hold a few dozen buffers at
  // most, and it runs once per completed (multi-megabyte) buffer.
  uint32_t IndexOf(const uint8_t* buffer) const;

  static constexpr uint32_t kEmpty = 0xffffffffu;
  // head_: low 32 bits = index of the top free buffer (kEmpty when none), high 32 = ABA tag.
  static uint64_t Pack(uint32_t index, uint32_t tag) { return (uint64_t{tag} << 32) | index; }

  const size_t buffer_bytes_;
  const size_t count_;
  std::unique_ptr<uint8_t*[]> buffers_;            // one calloc'ed block each
  std::unique_ptr<std::atomic<uint32_t>[]> next_;  // free-list links
  std::atomic<uint64_t> head_;
  std::atomic<uint64_t> exhausted_{0};
  std::atomic<uint64_t> foreign_{0};
};

}  // namespace inferscope::inject
