// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/model/events.h"

namespace inferscope::model {

// Interns strings to dense NameIds (0, 1, 2, ...). Ids are stable for the table's lifetime and the
// string_views returned by Get() stay valid: strings live in fixed-size chunks whose pointer table
// is allocated once and never moves.
//
// Threading: one thread interns. Other threads may call Get(id) for any id they learned through a
// synchronizing hand-off (a queue with a mutex, a release/acquire pair) after it was interned; that
// is how a pipelined importer and its aggregator share one table.
class NameTable {
 public:
  NameTable() : chunks_(kMaxChunks) {}
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  NameId Intern(std::string_view name) {
    auto it = index_.find(name);
    if (it != index_.end()) return it->second;
    const size_t id = size_.load(std::memory_order_relaxed);
    if (id >= kMaxChunks * kChunkSize) return kNoName;  // 16 M distinct names: refuse, never crash
    std::unique_ptr<Chunk>& chunk = chunks_[id / kChunkSize];
    if (!chunk) chunk = std::make_unique<Chunk>();
    std::string& stored = (*chunk)[id % kChunkSize];
    stored.assign(name);
    size_.store(id + 1, std::memory_order_release);  // publishes the string to readers
    index_.emplace(std::string_view(stored), static_cast<NameId>(id));
    return static_cast<NameId>(id);
  }

  // The string for `id`; empty for kNoName or an id this table never issued.
  std::string_view Get(NameId id) const {
    if (id == kNoName || id >= kMaxChunks * kChunkSize) return {};
    const Chunk* chunk = chunks_[id / kChunkSize].get();
    return chunk ? std::string_view((*chunk)[id % kChunkSize]) : std::string_view();
  }

  // Number of names interned; ids below it are readable (acquire pairs with Intern's release).
  size_t size() const { return size_.load(std::memory_order_acquire); }

 private:
  static constexpr size_t kChunkSize = 1024;
  static constexpr size_t kMaxChunks = 16 * 1024;
  using Chunk = std::array<std::string, kChunkSize>;

  std::vector<std::unique_ptr<Chunk>> chunks_;  // sized once; slots filled as names arrive
  std::atomic<size_t> size_{0};
  std::unordered_map<std::string_view, NameId> index_;
};

}  // namespace inferscope::model
