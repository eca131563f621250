// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "src/model/events.h"

namespace inferscope::model {

// Interns strings to dense NameIds (0, 1, 2, ...). Ids are stable for the table's lifetime and
// string_views returned by Get() stay valid (storage is a deque, never reallocated). Not thread-safe:
// one table per importer or drain thread.
class NameTable {
 public:
  NameTable() = default;
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  NameId Intern(std::string_view name) {
    auto it = index_.find(name);
    if (it != index_.end()) return it->second;
    const auto id = static_cast<NameId>(strings_.size());
    const std::string& stored = strings_.emplace_back(name);
    index_.emplace(std::string_view(stored), id);
    return id;
  }

  // The string for `id`; empty for kNoName or an id this table never issued.
  std::string_view Get(NameId id) const {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }

  size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, NameId> index_;
};

}  // namespace inferscope::model
