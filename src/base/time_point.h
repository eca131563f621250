// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Wall-clock time points as users type them (--from/--to, the HTTP API's from/to parameters).

#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace inferscope::base {

inline constexpr int64_t kNsPerSec = 1'000'000'000;

// CLOCK_REALTIME in ns since the Unix epoch.
int64_t UnixNowNs();

// "now", "-DURATION" (before now: -5m, -1h, -2d), an ISO date-time "YYYY-MM-DDTHH:MM[:SS]" (local
// time; a trailing Z = UTC) or Unix seconds ("1767225600"). Returns Unix ns; kInvalidArgument
// naming the accepted forms otherwise.
StatusOr<int64_t> ParseTimePoint(std::string_view text, int64_t now_unix_ns);

// "2026-01-02 03:04:05" in local time, for messages.
std::string FormatLocalTime(int64_t unix_ns);
// "2026-01-02 03:04:05" in UTC.
std::string FormatUtcTime(int64_t unix_ns);
// The local time zone's offset from UTC at that time: "+01:00", "-05:00", "+00:00".
std::string LocalUtcOffset(int64_t unix_ns);
// ISO 8601 to the second: "2026-01-02T03:04:05Z" (utc) or "2026-01-02T04:04:05+01:00" (local).
std::string FormatIsoTime(int64_t unix_ns, bool utc);

}  // namespace inferscope::base
