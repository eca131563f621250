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
  // A time the C library cannot convert still says something: the Unix seconds.
  if (localtime_r(&t, &local) == nullptr) return std::to_string(unix_ns / kNsPerSec);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &local);
  return buf;
}

namespace {

// Seconds since the epoch, rounded down (times before 1970 too).
time_t Seconds(int64_t unix_ns) {
  int64_t s = unix_ns / kNsPerSec;
  if (unix_ns % kNsPerSec < 0) --s;
  return static_cast<time_t>(s);
}

// "2026-01-02 03:04:05", or with a 'T' between date and time.
std::string DateTime(const tm& t, bool iso) {
  char buf[64];
  std::strftime(buf, sizeof(buf), iso ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &t);
  return buf;
}

}  // namespace

std::string FormatUtcTime(int64_t unix_ns) {
  const time_t t = Seconds(unix_ns);
  tm utc{};
  gmtime_r(&t, &utc);
  return DateTime(utc, false);
}

std::string LocalUtcOffset(int64_t unix_ns) {
  const time_t t = Seconds(unix_ns);
  tm local{};
  localtime_r(&t, &local);
  const long offset_s = local.tm_gmtoff;  // glibc: seconds east of UTC, DST included
  const int abs_min = static_cast<int>((offset_s < 0 ? -offset_s : offset_s) / 60 % (24 * 60));
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%c%02d:%02d", offset_s < 0 ? '-' : '+', abs_min / 60,
                abs_min % 60);
  return buf;
}

std::string FormatIsoTime(int64_t unix_ns, bool utc) {
  const time_t t = Seconds(unix_ns);
  tm parts{};
  if (utc) {
    gmtime_r(&t, &parts);
    return DateTime(parts, true) + "Z";
  }
  localtime_r(&t, &parts);
  return DateTime(parts, true) + LocalUtcOffset(unix_ns);
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
