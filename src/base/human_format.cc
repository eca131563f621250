// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/human_format.h"

#include <fmt/format.h>

namespace inferscope::base {

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

}  // namespace inferscope::base
