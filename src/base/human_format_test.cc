// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/human_format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace inferscope::base {
namespace {

// The one duration style: integral nanoseconds and fractional seconds print alike.
TEST(HumanFormatTest, DurationsInOneStyle) {
  EXPECT_EQ(FormatDuration(0), "0 ns");
  EXPECT_EQ(FormatDuration(850), "850 ns");
  EXPECT_EQ(FormatDuration(999), "999 ns");
  EXPECT_EQ(FormatDuration(12'340), "12.3 us");
  EXPECT_EQ(FormatDuration(999'999), "1.00 ms");  // never "1000 us"
  EXPECT_EQ(FormatDuration(4'560'000), "4.56 ms");
  EXPECT_EQ(FormatDuration(1'234'000'000), "1.23 s");
  EXPECT_EQ(FormatDuration(312'000'000'000), "312 s");
  EXPECT_EQ(FormatDuration(-4'560'000), "-4.56 ms");
  EXPECT_EQ(FormatDuration(-850), "-850 ns");
  EXPECT_EQ(FormatSeconds(0.00456), FormatDuration(4'560'000));
  EXPECT_EQ(FormatSeconds(1.234), "1.23 s");
  EXPECT_EQ(FormatSeconds(0.5e-6), "500 ns");
  EXPECT_EQ(FormatSeconds(std::nan("")), "-");
}

TEST(HumanFormatTest, BytesInDecimalUnitsWithThreeDigits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(999), "999 B");
  EXPECT_EQ(FormatBytes(1000), "1.00 KB");
  EXPECT_EQ(FormatBytes(1500), "1.50 KB");
  EXPECT_EQ(FormatBytes(54'000'000), "54.0 MB");
  EXPECT_EQ(FormatBytes(999'499), "999 KB");
  EXPECT_EQ(FormatBytes(999'500), "1.00 MB");  // never "1000 KB"
  EXPECT_EQ(FormatBytes(3'200'000'000), "3.20 GB");
  EXPECT_EQ(FormatBytes(2'000'000'000'000), "2.00 TB");
}

TEST(HumanFormatTest, UsdWithSensiblePrecision) {
  EXPECT_EQ(FormatUsd(0), "$0");
  EXPECT_EQ(FormatUsd(7.2), "$7.20");
  EXPECT_EQ(FormatUsd(1234.5), "$1,234.50");
  EXPECT_EQ(FormatUsd(0.5), "$0.500");
  EXPECT_EQ(FormatUsd(0.0005), "$0.000500");
  EXPECT_EQ(FormatUsd(0.000123456), "$0.000123");
  EXPECT_EQ(FormatUsd(4.56e-8), "$0.0000000456");  // not "$0.000000"
  EXPECT_EQ(FormatUsd(0.99999), "$1.00");
  EXPECT_EQ(FormatUsd(-2.5), "-$2.50");
}

TEST(HumanFormatTest, ThreeSignificantDigits) {
  EXPECT_EQ(ThreeSignificantDigits(4.561, "ms"), "4.56 ms");
  EXPECT_EQ(ThreeSignificantDigits(12.34, "us"), "12.3 us");
  EXPECT_EQ(ThreeSignificantDigits(512.4, "KB"), "512 KB");
}

}  // namespace
}  // namespace inferscope::base
