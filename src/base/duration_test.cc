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

}  // namespace
}  // namespace inferscope::base
