// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/state_dir.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace inferscope::base {
namespace {

std::map<std::string, std::string>* g_env = nullptr;
const char* FakeEnv(const char* name) {
  auto it = g_env->find(name);
  return it == g_env->end() ? nullptr : it->second.c_str();
}

std::string With(std::map<std::string, std::string> env) {
  g_env = &env;
  std::string dir = DefaultStateDir(&FakeEnv);
  g_env = nullptr;
  return dir;
}

TEST(StateDirTest, FollowsPrecedence) {
  EXPECT_EQ(With({{"INFERSCOPE_STATE_DIR", "/s"}, {"XDG_STATE_HOME", "/x"}, {"HOME", "/h"}}), "/s");
  EXPECT_EQ(With({{"INFERSCOPE_STATE_DIR", ""}, {"XDG_STATE_HOME", "/x"}, {"HOME", "/h"}}),
            "/x/inferscope");
  EXPECT_EQ(With({{"HOME", "/h"}}), "/h/.local/state/inferscope");
  EXPECT_EQ(With({}), "/tmp/inferscope");
}

}  // namespace
}  // namespace inferscope::base
