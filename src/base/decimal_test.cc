// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/decimal.h"

#include <gtest/gtest.h>

#include <string>

namespace inferscope::base {
namespace {

TEST(ParseDecimalTest, TheWholeTextMustBeANumberThatFits) {
  EXPECT_EQ(ParseDecimal("0"), 0u);
  EXPECT_EQ(ParseDecimal("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseDecimal("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseDecimal("-1"), std::nullopt);
  EXPECT_EQ(ParseDecimal("+1"), std::nullopt);
  EXPECT_EQ(ParseDecimal("12x"), std::nullopt);
  EXPECT_EQ(ParseDecimal(" 7"), std::nullopt);
  EXPECT_EQ(ParseDecimal(""), std::nullopt);
  EXPECT_EQ(ParseDecimal(std::string("1\0", 2)), std::nullopt);  // ?id=1%00
}

}  // namespace
}  // namespace inferscope::base
