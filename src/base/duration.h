// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string_view>

#include "src/base/status.h"

namespace inferscope::base {

// Which units ParseDuration accepts. Sub-minute is the default: the aggregation and injection
// settings are sub-second things, and there a stray "5m" is more likely a typo for "5ms" than five
// minutes. Long units (m, h, d) are opt-in, for flags measured in minutes to days (retention,
// `report --last`).
enum class DurationUnits { kSubMinute, kWithLongUnits };

// Parses a duration flag: a non-negative number (decimals allowed) followed by ns, us, ms or s,
// e.g. "100ms", "30us", "1.5s", "250ns"; with kWithLongUnits also m (minutes), h and d (24 h days),
// e.g. "5m", "1.5h", "7d". A bare "0" is accepted; other bare numbers are rejected (ambiguous).
// Errors are kInvalidArgument with a message that names the accepted forms.
StatusOr<int64_t> ParseDuration(std::string_view text,
                                DurationUnits units = DurationUnits::kSubMinute);

}  // namespace inferscope::base
