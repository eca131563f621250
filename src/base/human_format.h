// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Quantities for people, one convention for the whole tool: the CLI's status and progress lines
// and the reports print a byte count the same way.

#include <cstdint>
#include <string>

namespace inferscope::base {

// Three significant digits of `value` (>= 1, < 1000) and `unit`: "4.56 ms", "12.3 MB", "512 KB".
std::string ThreeSignificantDigits(double value, const char* unit);

// "512 B", "1.50 KB", "3.20 GB": decimal units (1 KB = 1000 bytes, as bandwidth's GB/s = 1e9
// bytes/s), three significant digits, switching unit early so rounding never prints "1000 KB".
std::string FormatBytes(uint64_t bytes);

// The one duration style of every table the tool prints (report, diff, status, context, top):
// "0 ns", "850 ns", "12.3 us", "4.56 ms", "1.23 s", "312 s": three significant digits, the unit
// chosen per value and switched slightly early so rounding never prints "1000 us"; negative
// values get a leading '-'.
std::string FormatDuration(int64_t ns);
// The same style for a duration held as (possibly fractional) seconds: engine histograms,
// latency percentiles. Non-finite values print "-".
std::string FormatSeconds(double seconds);

// "1,234,567": thousands separators, for every count a person reads.
std::string FormatCount(uint64_t count);

// US dollars with sensible precision: cents from $1 up ("$7.20", "$1,234.50"), three significant
// digits below ("$0.500", "$0.000123", "$0.0000000456"): a request's cost is often far below a
// cent and must not print as "$0.000000". "$0" for nothing.
std::string FormatUsd(double usd);

}  // namespace inferscope::base
