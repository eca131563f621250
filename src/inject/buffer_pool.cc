// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/buffer_pool.h"

namespace inferscope::inject {

BufferPool::BufferPool(size_t buffer_bytes, size_t buffer_count)
    : buffer_bytes_((buffer_bytes + 7) & ~size_t{7}),
      count_(buffer_count),
      storage_(new uint8_t[buffer_bytes_ * buffer_count + 8]),
      next_(new std::atomic<uint32_t>[buffer_count]),
      head_(Pack(buffer_count > 0 ? 0 : kEmpty, 0)) {
  const auto addr = reinterpret_cast<uintptr_t>(storage_.get());
  base_ = storage_.get() + ((8 - (addr & 7)) & 7);
  for (size_t i = 0; i < count_; ++i)
    next_[i].store(i + 1 < count_ ? static_cast<uint32_t>(i + 1) : kEmpty,
                   std::memory_order_relaxed);
}

uint8_t* BufferPool::Acquire() {
  uint64_t head = head_.load(std::memory_order_acquire);
  while (true) {
    const auto index = static_cast<uint32_t>(head);
    if (index == kEmpty) {
      exhausted_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    const uint32_t next = next_[index].load(std::memory_order_relaxed);
    const uint64_t desired = Pack(next, static_cast<uint32_t>(head >> 32) + 1);
    if (head_.compare_exchange_weak(head, desired, std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      return base_ + index * buffer_bytes_;
    }
  }
}

void BufferPool::Release(uint8_t* buffer) {
  if (buffer < base_ || buffer >= base_ + count_ * buffer_bytes_ ||
      (buffer - base_) % buffer_bytes_ != 0) {
    foreign_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const auto index = static_cast<uint32_t>((buffer - base_) / buffer_bytes_);
  uint64_t head = head_.load(std::memory_order_acquire);
  while (true) {
    next_[index].store(static_cast<uint32_t>(head), std::memory_order_relaxed);
    const uint64_t desired = Pack(index, static_cast<uint32_t>(head >> 32) + 1);
    if (head_.compare_exchange_weak(head, desired, std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      return;
    }
  }
}

}  // namespace inferscope::inject
