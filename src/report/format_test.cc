// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/report/format.h"

#include <gtest/gtest.h>

namespace inferscope::report {
namespace {

TEST(FormatTest, Durations) {
  EXPECT_EQ(FormatDuration(0), "0 ns");
  EXPECT_EQ(FormatDuration(850), "850 ns");
  EXPECT_EQ(FormatDuration(12'340), "12.3 us");
  EXPECT_EQ(FormatDuration(999'999), "1.00 ms");
  EXPECT_EQ(FormatDuration(4'560'000), "4.56 ms");
  EXPECT_EQ(FormatDuration(1'234'000'000), "1.23 s");
  EXPECT_EQ(FormatDuration(312'000'000'000), "312 s");
}

TEST(FormatTest, BytesCountsPct) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1500), "1.50 KB");
  EXPECT_EQ(FormatBytes(3'200'000'000), "3.20 GB");
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(100), "100");
  EXPECT_EQ(FormatPct(45.06), "45.1%");
  EXPECT_EQ(Bar(50, 10), "#####     ");
  EXPECT_EQ(Bar(0.1, 10), "#         ");
  EXPECT_EQ(Bar(250, 4), "####");
}

// Real traffic never shows as "0.0 GB/s".
TEST(FormatTest, BandwidthNeverRoundsRealTrafficToZero) {
  EXPECT_EQ(FormatGbps(0), "0.0");
  EXPECT_EQ(FormatGbps(12.34), "12.3");
  EXPECT_EQ(FormatGbps(0.05), "0.1");
  EXPECT_EQ(FormatGbps(0.012), "0.012");
  EXPECT_EQ(FormatGbps(0.0049), "0.0049");
  EXPECT_EQ(FormatGbps(0.0001), "<0.001");
}

TEST(FormatTest, EllipsizeNeverSplitsUtf8) {
  EXPECT_EQ(Ellipsize("short", 10), "short");
  EXPECT_EQ(Ellipsize("abcdefghijkl", 8), "abcde...");
  const std::string s = "ab\xC3\xA9\xC3\xA9\xC3\xA9xyz";  // abééé xyz
  const std::string cut = Ellipsize(s, 6);                // room for 3 bytes: 'a','b', half of é
  EXPECT_EQ(cut, "ab...");
}

TEST(FormatTest, EllipsizeMiddleKeepsBothEnds) {
  const std::string name =
      "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize2x2x1";
  const std::string cut = EllipsizeMiddle(name, 30);
  EXPECT_EQ(cut.size(), 30u);
  EXPECT_EQ(cut.rfind("sm80_xmma_gemm", 0), 0u);
  EXPECT_EQ(cut.substr(cut.size() - 6), "e2x2x1") << cut;
  EXPECT_EQ(EllipsizeMiddle("short", 30), "short");
}

}  // namespace
}  // namespace inferscope::report
