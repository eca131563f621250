// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/human_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace inferscope::base {

namespace {

std::string DurationOf(double ns) {
  if (!std::isfinite(ns)) return "-";
  if (ns < 0) return "-" + DurationOf(-ns);
  if (ns < 999.5) return fmt::format("{:.0f} ns", ns);
  // Switch units slightly early so rounding never prints "1000 us".
  if (ns < 999.5e3) return ThreeSignificantDigits(ns / 1e3, "us");
  if (ns < 999.5e6) return ThreeSignificantDigits(ns / 1e6, "ms");
  return ThreeSignificantDigits(ns / 1e9, "s");
}

}  // namespace

std::string FormatDuration(int64_t ns) {
  if (ns >= 0 && ns < 1000) return fmt::format("{} ns", ns);
  return DurationOf(static_cast<double>(ns));
}

std::string FormatSeconds(double seconds) { return DurationOf(seconds * 1e9); }

std::string ThreeSignificantDigits(double value, const char* unit) {
  if (value >= 100) return fmt::format("{:.0f} {}", value, unit);
  if (value >= 10) return fmt::format("{:.1f} {}", value, unit);
  return fmt::format("{:.2f} {}", value, unit);
}

std::string FormatBytes(uint64_t bytes) {
  const double v = static_cast<double>(bytes);
  if (bytes < 1000) return fmt::format("{} B", bytes);
  if (v < 999.5e3) return ThreeSignificantDigits(v / 1e3, "KB");
  if (v < 999.5e6) return ThreeSignificantDigits(v / 1e6, "MB");
  if (v < 999.5e9) return ThreeSignificantDigits(v / 1e9, "GB");
  return ThreeSignificantDigits(v / 1e12, "TB");
}

std::string FormatCount(uint64_t count) {
  const std::string digits = std::to_string(count);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string FormatUsd(double usd) {
  if (!std::isfinite(usd) || usd == 0) return "$0";
  const char* sign = usd < 0 ? "-" : "";
  const double a = std::fabs(usd);
  if (a >= 0.9995) {
    // Cents, with thousands separators in the whole dollars.
    const auto cents = static_cast<uint64_t>(std::llround(a * 100));
    return fmt::format("{}${}.{:02}", sign, FormatCount(cents / 100), cents % 100);
  }
  // Three significant digits: as many decimals as the leading digit's position needs.
  const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(a))), 3, 15);
  return fmt::format("{}${:.{}f}", sign, a, decimals);
}

}  // namespace inferscope::base
