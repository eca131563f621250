// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope diff --source clickhouse://...` (docs/fleet.md, docs/diff.md): a side is a slice
// of the fleet, a time range and a host/label selection. ClickHouse sums it per device for the
// whole range and per slice of window starts (agent/clickhouse/fleet_profile.h); the sums go
// through the same analysis and figures as a store range's side (agent/range_compare.h), cut
// into slices the same way (one per window start; past max_slices, neighbouring starts share
// one), so a fleet side equals the per-host store's side on the same windows.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/analyze/compare.h"
#include "src/base/status.h"
#include "src/fleet/query/fleet_query.h"

namespace inferscope::cli {

struct FleetSideSpec {
  std::string flag;             // "--baseline-range": how errors name the side
  fleet::FleetQuery selection;  // from/to, hosts, labels, exact
};

// The most distinct window starts read to cut slices exactly as the store does; beyond it the
// range is cut into max_slices equal time slices (a day of 10 s windows has 8,640 starts per
// clock, so this only applies to fleets whose hosts' windows do not share starts).
inline constexpr size_t kMaxFleetWindowStarts = 100'000;

// NotFound naming the flag when the selection holds no windows.
base::StatusOr<analyze::ComparisonSide> LoadFleetSide(const fleet::ClickHouseClient& client,
                                                      const FleetSideSpec& spec, size_t max_slices);

// The side's label: "fleet host-a, replica=r1 2026-11-27 10:00:00 .. 10:30:00".
std::string FleetSideLabel(const fleet::FleetQuery& selection);

}  // namespace inferscope::cli
