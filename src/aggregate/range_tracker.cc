// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/range_tracker.h"

#include <algorithm>
#include <climits>

namespace inferscope::aggregate {

namespace {
// Names past this many distinct ones share one row: a process naming every instance apart
// ("request 1234") must not grow the table without bound in a long run.
constexpr size_t kMaxGroups = 10'000;
constexpr std::string_view kOverflowGroup = "(other range names)";
constexpr std::string_view kUnnamed = "(unnamed)";
// Ranges kept open per thread for projection; deeper nesting is counted but not projected.
constexpr size_t kMaxOpenPerThread = 256;
}  // namespace

std::string_view RangeGroupText(std::string_view text) {
  // The engines' per-iteration ranges carry the iteration number and request counts in their
  // names (model/step_phase.cc): one row per engine, not one per iteration, or a long run fills
  // the table with single instances (and the live tracker with as many groups and name sets).
  for (std::string_view iteration :
       {"[Executor] _forward_step", "_forward_step", "execute_context"})
    if (text.starts_with(iteration)) return text.substr(0, iteration.size());
  // One pass over the ", " separators (most names have none).
  for (size_t at = text.find(", "); at != std::string_view::npos; at = text.find(", ", at + 2)) {
    const std::string_view rest = text.substr(at + 2);
    if (rest.starts_with("seq = ") || rest.starts_with("op_id = ") || rest.starts_with("sizes = "))
      return text.substr(0, at);
  }
  return text;
}

uint32_t RangeTracker::Group(model::NameId name) {
  std::string_view text = kUnnamed;
  int64_t* slot = nullptr;
  if (name != model::kNoName) {
    if (name >= group_of_name_.size()) group_of_name_.resize(static_cast<size_t>(name) + 1, -1);
    slot = &group_of_name_[name];
    if (*slot >= 0) return static_cast<uint32_t>(*slot);
    text = RangeGroupText(names_->Get(name));
  }
  if (group_names_.size() >= kMaxGroups && !group_index_.count(text)) text = kOverflowGroup;
  auto [it, added] = group_index_.try_emplace(text, static_cast<uint32_t>(group_names_.size()));
  if (added) {
    group_names_.push_back(text);
    accs_.emplace_back();
  }
  if (slot != nullptr) *slot = it->second;
  return it->second;
}

RangeTracker::Thread* RangeTracker::FindThread(uint32_t tid) {
  if (last_thread_ < threads_.size() && threads_[last_thread_].tid == tid)
    return &threads_[last_thread_];
  for (size_t i = 0; i < threads_.size(); ++i) {
    if (threads_[i].tid == tid) {
      last_thread_ = i;
      return &threads_[i];
    }
  }
  return nullptr;
}

void RangeTracker::OnRange(const model::NvtxEvent& e, bool late) {
  const uint32_t group = Group(e.name);
  Touch(group).duration.Add(e.end_ns - e.start_ns);
  if (late) {
    ++late_;
    return;
  }
  Thread* t = FindThread(e.tid);
  if (t == nullptr) {
    if (threads_.size() < kMaxThreads) {
      threads_.emplace_back();
      last_thread_ = threads_.size() - 1;
    } else {
      // Recycle the thread with the fewest open ranges (a finished worker's).
      last_thread_ = 0;
      for (size_t i = 1; i < threads_.size(); ++i)
        if (threads_[i].open.size() < threads_[last_thread_].open.size()) last_thread_ = i;
      threads_[last_thread_] = Thread{};
    }
    t = &threads_[last_thread_];
    t->tid = e.tid;
  }
  // Ranges that ended before this one starts can hold no later launch.
  std::erase_if(t->open, [&e](const Open& o) { return o.end_ns <= e.start_ns; });
  if (t->open.size() < kMaxOpenPerThread) t->open.push_back({group, e.start_ns, e.end_ns});
  t->context_until_ns = -1;  // the set open from here on changed
}

uint32_t RangeTracker::ContextAt(uint32_t tid, int64_t t_ns) {
  Thread* t = FindThread(tid);
  if (t == nullptr) return 0;
  if (t_ns >= t->context_from_ns && t_ns < t->context_until_ns) return t->context;
  std::erase_if(t->open, [t_ns](const Open& o) { return o.end_ns <= t_ns; });
  scratch_.clear();
  int64_t until = INT64_MAX;
  for (const Open& o : t->open) {
    if (o.start_ns <= t_ns) {
      scratch_.push_back(o.group);
      until = std::min(until, o.end_ns);
    } else {
      until = std::min(until, o.start_ns);
    }
  }
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  t->context = scratch_.empty() ? 0 : Intern(scratch_);
  t->context_from_ns = t_ns;
  t->context_until_ns = until;
  return t->context;
}

uint32_t RangeTracker::Intern(const std::vector<uint32_t>& groups) {
  std::string key(reinterpret_cast<const char*>(groups.data()), groups.size() * sizeof(uint32_t));
  auto it = context_index_.find(key);
  if (it != context_index_.end()) return it->second;
  if (contexts_.size() >= kMaxContexts) return 0;
  const auto id = static_cast<uint32_t>(contexts_.size());
  contexts_.push_back(groups);
  context_index_.emplace(std::move(key), id);
  return id;
}

model::RangeTable RangeTracker::TakeWindow(size_t top_k) {
  model::RangeTable table;
  table.late = late_;
  late_ = 0;
  table.rows.reserve(touched_.size());
  for (uint32_t group : touched_) {
    Acc& a = accs_[group];
    model::RangeStats row;
    row.name = std::string(group_names_[group]);
    row.duration = a.duration;
    row.gpu_ops = a.gpu_ops;
    row.gpu_time_ns = a.gpu_time_ns;
    table.rows.push_back(std::move(row));
    a = Acc{};
  }
  touched_.clear();
  table.Trim(top_k, /*sort=*/true);
  return table;
}

}  // namespace inferscope::aggregate
