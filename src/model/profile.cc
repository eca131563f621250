// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/profile.h"

#include <algorithm>
#include <unordered_map>

namespace inferscope::model {

int64_t LogHistogram::QuantileLowerBoundNs(double q) const {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  if (total == 0) return 0;
  const auto rank = static_cast<uint64_t>(q * static_cast<double>(total - 1));
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts[i];
    if (seen > rank) return i == 0 ? 0 : (int64_t{1} << i);
  }
  return int64_t{1} << (kBuckets - 1);
}

bool MoreFrequentConfig(const LaunchConfig& a, const LaunchConfig& b) {
  if (a.count != b.count) return a.count > b.count;
  if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
  return a.key() < b.key();
}

void MergeLaunchConfigs(const std::vector<LaunchConfig>& in, uint64_t in_distinct,
                        std::vector<LaunchConfig>* into, uint64_t* into_distinct, size_t keep) {
  if (in.empty() && in_distinct == 0) return;
  // Configurations seen but not listed, on each side: counted in distinct, never joined.
  const uint64_t unlisted = (*into_distinct > into->size() ? *into_distinct - into->size() : 0) +
                            (in_distinct > in.size() ? in_distinct - in.size() : 0);
  for (const LaunchConfig& c : in) {  // a handful on each side: a scan is cheapest
    auto it = std::find_if(into->begin(), into->end(),
                           [&c](const LaunchConfig& x) { return x.key() == c.key(); });
    if (it == into->end()) {
      into->push_back(c);
    } else {
      it->count += c.count;
      it->total_ns += c.total_ns;
    }
  }
  *into_distinct = into->size() + unlisted;
  std::sort(into->begin(), into->end(), MoreFrequentConfig);
  if (into->size() > keep) into->resize(keep);
}

void RangeTable::Trim(size_t top_k, bool sort) {
  if (sort) {
    std::sort(rows.begin(), rows.end(), [](const RangeStats& a, const RangeStats& b) {
      return a.duration.total_ns != b.duration.total_ns ? a.duration.total_ns > b.duration.total_ns
                                                        : a.name < b.name;
    });
  }
  for (size_t i = top_k; i < rows.size(); ++i) {
    tail.duration.Merge(rows[i].duration);
    tail.gpu_ops += rows[i].gpu_ops;
    tail.gpu_time_ns += rows[i].gpu_time_ns;
    ++tail_names;
  }
  if (rows.size() > top_k) rows.resize(top_k);
}

void RangeTable::Merge(const RangeTable& in, size_t top_k) {
  // A few dozen rows at most: a map by name for the join. Its keys view the rows' own names, so
  // the rows must not move while it is used: room for every row of `in` first (a reallocation
  // would move short names, kept inside the strings, and leave the keys dangling).
  rows.reserve(rows.size() + in.rows.size());
  std::unordered_map<std::string_view, size_t> at;
  at.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) at.emplace(rows[i].name, i);
  const size_t mine = rows.size();
  for (const RangeStats& r : in.rows) {
    auto it = at.find(r.name);
    if (it == at.end() || it->second >= mine) {
      rows.push_back(r);
      continue;
    }
    RangeStats& into = rows[it->second];
    into.duration.Merge(r.duration);
    into.gpu_ops += r.gpu_ops;
    into.gpu_time_ns += r.gpu_time_ns;
  }
  tail.duration.Merge(in.tail.duration);
  tail.gpu_ops += in.tail.gpu_ops;
  tail.gpu_time_ns += in.tail.gpu_time_ns;
  tail_names += in.tail_names;
  late += in.late;
  Trim(top_k, /*sort=*/true);
}

}  // namespace inferscope::model
