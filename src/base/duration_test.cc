// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/duration.h"

#include <gtest/gtest.h>

namespace inferscope::base {
namespace {

TEST(DurationTest, ParsesUnits) {
  EXPECT_EQ(*ParseDuration("250ns"), 250);
  EXPECT_EQ(*ParseDuration("30us"), 30'000);
  EXPECT_EQ(*ParseDuration("100ms"), 100'000'000);
  EXPECT_EQ(*ParseDuration("1.5s"), 1'500'000'000);
  EXPECT_EQ(*ParseDuration("0.5us"), 500);
  EXPECT_EQ(*ParseDuration("0"), 0);
  EXPECT_EQ(*ParseDuration("2s"), 2'000'000'000);
}

TEST(DurationTest, RejectsBadInput) {
  for (const char* bad :
       {"", "ms", "100", "10 ms", "-5ms", "5m", "5h", "1e3ns", "abc", "99999999999999s"}) {
    auto d = ParseDuration(bad);
    EXPECT_FALSE(d.ok()) << bad;
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), base::StatusCode::kInvalidArgument) << bad;
    }
  }
  EXPECT_NE(ParseDuration("100").status().message().find("missing unit"), std::string::npos);
}

TEST(DurationTest, LongUnitsOnlyWhenAsked) {
  constexpr DurationUnits kLong = DurationUnits::kWithLongUnits;
  EXPECT_EQ(*ParseDuration("5m", kLong), 300'000'000'000);
  EXPECT_EQ(*ParseDuration("1.5h", kLong), 5'400'000'000'000);
  EXPECT_EQ(*ParseDuration("7d", kLong), 604'800'000'000'000);
  EXPECT_EQ(*ParseDuration("100ms", kLong), 100'000'000);  // "ms" is still milliseconds
  EXPECT_EQ(*ParseDuration("30s", kLong), 30'000'000'000);
  EXPECT_EQ(*ParseDuration("0", kLong), 0);
  for (const char* bad : {"5", "5 m", "5min", "5D", "-1d", "200000d", "m"}) {
    EXPECT_FALSE(ParseDuration(bad, kLong).ok()) << bad;
  }
  EXPECT_FALSE(ParseDuration("5m").ok());  // the default stays sub-minute
  EXPECT_NE(ParseDuration("5x", kLong).status().message().find("7d"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::base
