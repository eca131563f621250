// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/duration.h"

#include <cmath>
#include <string>

namespace inferscope::base {

StatusOr<int64_t> ParseDuration(std::string_view text, DurationUnits units) {
  const bool long_units = units == DurationUnits::kWithLongUnits;
  const std::string quoted = "'" + std::string(text) + "'";
  auto bad = [&](const char* why) {
    return base::InvalidArgumentError("invalid duration " + quoted + ": " + why +
                                      (long_units ? " (use e.g. 100ms, 1.5s, 5m, 2h, 7d)"
                                                  : " (use e.g. 250ns, 30us, 100ms, 1.5s)"));
  };
  size_t i = 0;
  double whole = 0;
  bool digits = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    whole = whole * 10 + (text[i] - '0');
    digits = true;
    ++i;
  }
  double frac = 0, scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      frac = frac * 10 + (text[i] - '0');
      scale *= 10;
      digits = true;
      ++i;
    }
  }
  if (!digits) return bad("expected a number");
  const double value = whole + frac / scale;
  const std::string_view unit = text.substr(i);
  double ns_per_unit;
  if (unit == "ns") {
    ns_per_unit = 1;
  } else if (unit == "us") {
    ns_per_unit = 1e3;
  } else if (unit == "ms") {
    ns_per_unit = 1e6;
  } else if (unit == "s") {
    ns_per_unit = 1e9;
  } else if (long_units && unit == "m") {
    ns_per_unit = 60e9;
  } else if (long_units && unit == "h") {
    ns_per_unit = 3600e9;
  } else if (long_units && unit == "d") {
    ns_per_unit = 86400e9;
  } else if (unit.empty()) {
    if (value == 0) return int64_t{0};
    return bad("missing unit");
  } else {
    return bad("unknown unit");
  }
  const double ns = std::round(value * ns_per_unit);
  if (!(ns < 9.2e18)) return bad("too large");
  return static_cast<int64_t>(ns);
}

}  // namespace inferscope::base
