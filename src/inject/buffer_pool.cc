// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/buffer_pool.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace inferscope::inject {

BufferPool::BufferPool(size_t buffer_bytes, size_t buffer_count)
    : buffer_bytes_((buffer_bytes + 7) & ~size_t{7}),
      count_(buffer_count),
      buffers_(new uint8_t*[buffer_count]()),
      next_(new std::atomic<uint32_t>[buffer_count]),
      head_(Pack(buffer_count > 0 ? 0 : kEmpty, 0)) {
  // calloc: zeroed, and aligned for any fundamental type (>= 8 bytes, as CUPTI requires).
  for (size_t i = 0; i < count_; ++i) {
    buffers_[i] = static_cast<uint8_t*>(std::calloc(1, buffer_bytes_));
    if (buffers_[i] == nullptr) {
      for (size_t j = 0; j < i; ++j) std::free(buffers_[j]);
      throw std::bad_alloc();
    }
  }
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
      return buffers_[index];
    }
  }
}

BufferPool::~BufferPool() {
  for (size_t i = 0; i < count_; ++i) std::free(buffers_[i]);
}

uint32_t BufferPool::IndexOf(const uint8_t* buffer) const {
  for (size_t i = 0; i < count_; ++i)
    if (buffers_[i] == buffer) return static_cast<uint32_t>(i);
  return kEmpty;
}

void BufferPool::Release(uint8_t* buffer, size_t used_bytes) {
  const uint32_t index = IndexOf(buffer);
  if (index == kEmpty) {
    foreign_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::memset(buffer, 0, used_bytes < buffer_bytes_ ? used_bytes : buffer_bytes_);
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
