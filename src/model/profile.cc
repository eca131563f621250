// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/profile.h"

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

}  // namespace inferscope::model
