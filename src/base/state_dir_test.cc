// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/state_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <string>

#include "tests/temp_dir.h"

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

// docs/agent.md: the state dir is 0700 whoever creates it (the agent, its store, or `inferscope
// run` before the agent starts), whatever the umask; an existing directory keeps its mode.
TEST(StateDirTest, CreatesOwnerOnlyWhateverTheUmask) {
  inferscope::testing::TempDir tmp;
  const mode_t old_umask = ::umask(0);
  const std::string dir = tmp.path() + "/a/b/inferscope";
  ASSERT_TRUE(CreateStateDir(dir).ok());
  ::umask(old_umask);
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  const std::string existing = tmp.path() + "/existing";
  ASSERT_EQ(::mkdir(existing.c_str(), 0755), 0);
  ::chmod(existing.c_str(), 0755);
  ASSERT_TRUE(CreateStateDir(existing).ok());
  ASSERT_EQ(::stat(existing.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);

  EXPECT_EQ(CreateStateDir("/proc/self/no/such").code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace inferscope::base
