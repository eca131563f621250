// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/time_point.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "src/base/duration.h"

namespace inferscope::base {

int64_t UnixNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

std::string FormatLocalTime(int64_t unix_ns) {
  const time_t t = static_cast<time_t>(unix_ns / kNsPerSec);
  tm local{};
  localtime_r(&t, &local);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &local);
  return buf;
}

StatusOr<int64_t> ParseTimePoint(std::string_view text, int64_t now_unix_ns) {
  auto bad = [&]() {
    return InvalidArgumentError("invalid time '" + std::string(text) +
                                "' (use now, -5m, -2h, 2026-01-02T15:04[:05][Z] or Unix seconds)");
  };
  if (text == "now") return now_unix_ns;
  if (!text.empty() && text[0] == '-') {
    auto ago = ParseDuration(text.substr(1), DurationUnits::kWithLongUnits);
    if (!ago.ok()) return bad();
    return now_unix_ns - *ago;
  }
  if (!text.empty() &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (text.size() > 12) return bad();
    return static_cast<int64_t>(std::stoll(std::string(text))) * kNsPerSec;
  }
  std::string s(text);
  const bool utc = !s.empty() && (s.back() == 'Z' || s.back() == 'z');
  if (utc) s.pop_back();
  tm t{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[T ]%2d:%2d%n", &t.tm_year, &t.tm_mon, &t.tm_mday,
                  &t.tm_hour, &t.tm_min, &consumed) != 5)
    return bad();
  if (static_cast<size_t>(consumed) < s.size()) {
    int more = 0;
    if (std::sscanf(s.c_str() + consumed, ":%2d%n", &t.tm_sec, &more) != 1 ||
        static_cast<size_t>(consumed + more) != s.size())
      return bad();
  }
  if (t.tm_mon < 1 || t.tm_mon > 12 || t.tm_mday < 1 || t.tm_mday > 31 || t.tm_hour > 23 ||
      t.tm_min > 59 || t.tm_sec > 60)
    return bad();
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  t.tm_isdst = -1;
  const time_t seconds = utc ? timegm(&t) : mktime(&t);
  if (seconds == static_cast<time_t>(-1)) return bad();
  return static_cast<int64_t>(seconds) * kNsPerSec;
}

}  // namespace inferscope::base
