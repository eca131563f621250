// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/temp_dir.h"

namespace inferscope::base {
namespace {

TEST(ReadSmallFileTest, ReadsBytesAndNamesWhatIsMissing) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/t.txt";
  {
    std::ofstream f(path, std::ios::binary);
    f << std::string("a = 1\n\0b", 8);
  }
  auto text = ReadSmallFile(path, "the table");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, std::string("a = 1\n\0b", 8));
  auto missing = ReadSmallFile(dir.path() + "/none", "the table");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message().rfind(dir.path() + "/none: cannot read the table (", 0), 0u);
}

}  // namespace
}  // namespace inferscope::base
