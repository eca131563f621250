// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/aggregate/slice_sink.h"

#include <type_traits>
#include <variant>

#include "src/base/human_format.h"

namespace inferscope::aggregate {

void SliceSink::Finish() {
  if (!slice_.relative) return;
  const int64_t origin = held_.empty() ? 0 : first_ns_;
  for (const model::AnyEvent& any : held_) {
    std::visit(
        [&](const auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, model::ProcessInfo> ||
                        std::is_same_v<T, model::DeviceInfo> ||
                        std::is_same_v<T, model::DataQualityEvent> ||
                        std::is_same_v<T, model::KernelResourcesEvent>) {
            model::Deliver(any, next_);
          } else {
            Pass(e, origin);
          }
        },
        any);
  }
  held_.clear();
  held_.shrink_to_fit();
}

std::string DescribeSlice(const TimeSlice& slice) {
  if (!slice.active()) return "";
  auto bound = [&](int64_t ns, bool open, const char* open_word) -> std::string {
    if (open) return open_word;
    return slice.relative ? base::FormatDuration(ns) : "@" + std::to_string(ns);
  };
  return "[" + bound(slice.from_ns, slice.from_ns == TimeSlice::kOpen, "start") + ", " +
         bound(slice.to_ns, slice.to_ns == TimeSlice::kOpenEnd, "end") + ")" +
         (slice.relative ? " of each file (from its first event)" : " on the trace clock") +
         ": operations that start in it";
}

}  // namespace inferscope::aggregate
