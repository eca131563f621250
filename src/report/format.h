// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Human formatting of report quantities: durations, bytes, counts, percentages.

#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/human_format.h"

namespace inferscope::report {

using base::FormatBytes;  // "512 B", "1.50 KB", "3.20 GB": the one byte convention (src/base)
using base::FormatCount;  // "1,234,567"

// "0 ns", "850 ns", "12.3 us", "4.56 ms", "1.23 s": the one duration style (src/base).
using base::FormatDuration;
// "45.1%".
std::string FormatPct(double pct);
// Bandwidth in GB/s: "12.3", "0.8"; below 0.05, two significant digits ("0.012") so real traffic
// never prints "0.0"; "<0.001" below that; "0.0" only for none.
std::string FormatGbps(double gbps);
// A bar of `width` cells, '#' for the filled share of `pct` (0..100).
std::string Bar(double pct, int width);
// Cuts `s` to at most `width` bytes, ending in "..." when cut, never inside a UTF-8 sequence.
std::string Ellipsize(std::string_view s, size_t width);

// Like Ellipsize but keeps the start and the end ("sm80_xmma_gemm_f32...tilesize64x64x8_stage3"):
// long kernel names differ mostly at the end.
std::string EllipsizeMiddle(std::string_view s, size_t width);

}  // namespace inferscope::report
