// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/report/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace inferscope::report {

std::string FormatPct(double pct) {
  if (!std::isfinite(pct)) pct = 0;
  return fmt::format("{:.1f}%", pct);
}

std::string FormatGbps(double gbps) {
  if (!std::isfinite(gbps) || gbps <= 0) return "0.0";
  if (gbps >= 0.05) return fmt::format("{:.1f}", gbps);
  if (gbps < 0.001) return "<0.001";
  return fmt::format("{:.2g}", gbps);
}

std::string Bar(double pct, int width) {
  if (!std::isfinite(pct)) pct = 0;
  const double clamped = std::clamp(pct, 0.0, 100.0);
  auto filled = static_cast<int>(std::lround(clamped * width / 100.0));
  if (filled == 0 && clamped > 0) filled = 1;  // visible for anything above zero
  return std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(width - filled), ' ');
}

std::string Ellipsize(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width <= 3) return std::string(width, '.');
  size_t cut = width - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

std::string EllipsizeMiddle(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width < 12) return Ellipsize(s, width);
  size_t head = (width - 3) * 3 / 5;
  size_t tail_start = s.size() - (width - 3 - head);
  while (head > 0 && (static_cast<unsigned char>(s[head]) & 0xC0) == 0x80) --head;
  while (tail_start < s.size() && (static_cast<unsigned char>(s[tail_start]) & 0xC0) == 0x80)
    ++tail_start;
  return std::string(s.substr(0, head)) + "..." + std::string(s.substr(tail_start));
}

}  // namespace inferscope::report
