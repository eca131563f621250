// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Strict decimal parsing for numbers from outside (query parameters, flags): the whole text must
// be digits and fit, so "12x", "-1" (which strtoull turns into 2^64-1), " 7" and "1\0..." (a
// %00 in a URL, which a C-string parser stops at) are all refused.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace inferscope::base {

inline std::optional<uint64_t> ParseDecimal(std::string_view text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace inferscope::base
