// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/fleet_diff.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/base/time_point.h"
#include "src/fleet/query/fleet_profile.h"
#include "src/query/range_compare.h"

namespace inferscope::cli {

namespace ch = fleet;

namespace {

// The timeline resolution the slices are analyzed at: the fact tables hold no timelines, and
// the figures diff compares do not depend on it.
constexpr int64_t kSliceBinNs = 100'000'000;

std::vector<const model::ProfileWindow*> Pointers(const std::vector<model::ProfileWindow>& ws) {
  std::vector<const model::ProfileWindow*> out;
  for (const model::ProfileWindow& w : ws) out.push_back(&w);
  return out;
}

}  // namespace

std::string FleetSideLabel(const ch::FleetQuery& s) {
  std::string what;
  for (const std::string& h : s.hosts) what += (what.empty() ? "" : ", ") + h;
  for (const auto& [k, v] : s.labels) what += (what.empty() ? "" : ", ") + k + "=" + v;
  return "fleet " + (what.empty() ? std::string("(all hosts)") : what) + " " +
         base::FormatLocalTime(s.from_ns) + " .. " + base::FormatLocalTime(s.to_ns);
}

base::StatusOr<analyze::ComparisonSide> LoadFleetSide(const ch::ClickHouseClient& client,
                                                      const FleetSideSpec& spec,
                                                      size_t max_slices) {
  ch::FleetProfileQuery q;
  q.selection = spec.selection;
  q.top_k = query::kDiffTopK;
  q.launch_configs = false;  // diff compares no launch configurations
  ASSIGN_OR_RETURN(ch::FleetProfile whole, ch::QueryFleetProfile(client, q));
  if (whole.windows == 0)
    return base::NotFoundError(spec.flag + ": no windows of " + FleetSideLabel(spec.selection) +
                               " in " + client.target().ToUrl());
  analyze::ComparisonSide side;
  side.label = FleetSideLabel(spec.selection);
  side.whole = query::SliceFigures(Pointers(whole.slices.at(0)), kSliceBinNs);

  // Slices as the store cuts a range (query::LoadRangeSide): the windows of every process that
  // start together form one; past max_slices, neighbouring starts share one.
  ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                   ch::QueryWindowStarts(client, q, kMaxFleetWindowStarts));
  max_slices = std::max<size_t>(1, max_slices);
  if (starts.size() > kMaxFleetWindowStarts) {
    // Too many distinct starts to cut by: equal time slices over the range's windows.
    const int64_t first = starts.front();
    const int64_t span = std::max<int64_t>(1, spec.selection.to_ns - first);
    q.slice_starts.clear();
    for (size_t i = 0; i < max_slices; ++i)
      q.slice_starts.push_back(
          first + static_cast<int64_t>(static_cast<double>(span) * static_cast<double>(i) /
                                       static_cast<double>(max_slices)));
    side.slice_kind = fmt::format("{} time slices of more than {} window starts", max_slices,
                                  kMaxFleetWindowStarts);
  } else {
    const size_t groups = starts.size();
    const size_t slices = std::min(groups, max_slices);
    for (size_t g = 0; g < groups; ++g) {
      const size_t slice = g * slices / groups;
      if (slice == q.slice_starts.size()) q.slice_starts.push_back(starts[g]);
    }
    side.slice_kind = groups > slices
                          ? fmt::format("{} slices of {} window starts", slices, groups)
                          : fmt::format("{} window start{}", slices, slices == 1 ? "" : "s");
  }
  // Per slice, the GPUs' sums as one: a row per slice and figure, not per GPU (64 slices of
  // 1,000 GPUs would be millions of kernel rows), the same figures (they sum over ranks).
  q.collapse_devices = true;
  ASSIGN_OR_RETURN(ch::FleetProfile sliced, ch::QueryFleetProfile(client, q));
  for (const std::vector<model::ProfileWindow>& slice : sliced.slices)
    if (!slice.empty()) side.slices.push_back(query::SliceFigures(Pointers(slice), kSliceBinNs));
  return side;
}

}  // namespace inferscope::cli
