// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <utility>

namespace inferscope::aggregate {

// A FIFO of T in fixed-size chunks with random access. Unlike std::vector it never copies its
// contents to grow (no 2.5x memory spike while reallocating a large buffer) and frees consumed
// chunks from the front in O(1); unlike std::deque its chunks are large (kChunk elements), so
// iteration stays as cheap as over an array. One spare chunk is kept to avoid churn in steady
// state.
template <typename T, size_t kChunk = 4096>
class ChunkedQueue {
 public:
  size_t size() const { return end_ - begin_; }
  bool empty() const { return end_ == begin_; }

  // Element i counted from the front.
  T& operator[](size_t i) {
    const size_t a = begin_ + i - base_;
    return chunks_[a / kChunk][a % kChunk];
  }
  T& back() { return (*this)[size() - 1]; }

  void push_back(T value) { AppendSlot() = std::move(value); }

  // Appends an element and returns it for filling in place (it holds a default or an old value).
  T& AppendSlot() {
    const size_t a = end_ - base_;
    if (a / kChunk == chunks_.size()) {
      chunks_.push_back(spare_ ? std::move(spare_) : std::make_unique<T[]>(kChunk));
    }
    ++end_;
    return chunks_[a / kChunk][a % kChunk];
  }

  // Drops the first n elements; chunks that become unused are released.
  void pop_front(size_t n) {
    begin_ += n < size() ? n : size();
    while (!chunks_.empty() && begin_ - base_ >= kChunk) {
      spare_ = std::move(chunks_.front());
      chunks_.pop_front();
      base_ += kChunk;
    }
    if (empty()) clear();
  }

  void clear() {
    if (!chunks_.empty() && !spare_) spare_ = std::move(chunks_.front());
    chunks_.clear();
    base_ = begin_ = end_ = 0;
  }

 private:
  std::deque<std::unique_ptr<T[]>> chunks_;
  std::unique_ptr<T[]> spare_;
  size_t base_ = 0;   // logical index of chunks_[0][0]
  size_t begin_ = 0;  // logical index of the front element
  size_t end_ = 0;    // logical index one past the back element
};

}  // namespace inferscope::aggregate
