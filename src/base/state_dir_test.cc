// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/state_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
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

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// A state dir others can write (0777) was used silently; anyone could then
// replace the socket or plant an agent.json. It is refused with the fix; the user's own
// group-writable directory (user private groups) is accepted.
TEST(StateDirTest, RefusesADirectoryOthersCanWrite) {
  inferscope::testing::TempDir tmp;
  const std::string open_dir = tmp.path() + "/open";
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  const Status s = CreateStateDir(open_dir);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("writable by every user"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("chmod 700"), std::string::npos) << s.message();
  EXPECT_EQ(ModeOf(open_dir), 0777u);  // refused, not silently changed

  ASSERT_EQ(::chmod(open_dir.c_str(), 0770), 0);  // group-writable, our own primary group
  EXPECT_TRUE(CheckStateDirTrusted(open_dir).ok());
  ASSERT_EQ(::chmod(open_dir.c_str(), 0700), 0);
  EXPECT_TRUE(CreateStateDir(open_dir).ok());

  const std::string file = tmp.path() + "/file";
  std::ofstream(file) << "x";
  EXPECT_EQ(CheckStateDirTrusted(file).code(), StatusCode::kUnavailable);
  EXPECT_EQ(CheckStateDirTrusted(tmp.path() + "/none").code(), StatusCode::kNotFound);
}

// The same for a directory another user owns (0700, so only its owner could write it): the
// owner could replace the socket. Needs root to hand the directory to another uid.
TEST(StateDirTest, RefusesADirectoryAnotherUserOwns) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown a directory to another uid";
  inferscope::testing::TempDir tmp;
  const std::string theirs = tmp.path() + "/theirs";
  ASSERT_EQ(::mkdir(theirs.c_str(), 0700), 0);
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  const Status s = CreateStateDir(theirs);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("belongs to uid 65534"), std::string::npos) << s.message();
  // A symlink to it is judged by its target.
  const std::string link = tmp.path() + "/link";
  ASSERT_EQ(::symlink(theirs.c_str(), link.c_str()), 0);
  EXPECT_EQ(CreateStateDir(link).code(), StatusCode::kUnavailable);
}

// Files the agent writes are 0600 and its subdirectories 0700 whatever the umask; a symlink
// planted at the path is replaced, not followed.
TEST(StateDirTest, PrivateFilesAndDirsIgnoreTheUmask) {
  inferscope::testing::TempDir tmp;
  const mode_t old_umask = ::umask(0);
  const std::string file = tmp.path() + "/agent.json";
  ASSERT_TRUE(WritePrivateFile(file, "{}\n").ok());
  const std::string dir = tmp.path() + "/captures";
  ASSERT_TRUE(CreatePrivateDir(dir).ok());
  ::umask(old_umask);
  EXPECT_EQ(ModeOf(file), 0600u);
  EXPECT_EQ(ModeOf(dir), 0700u);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_TRUE(CreatePrivateDir(dir).ok());
  EXPECT_EQ(ModeOf(dir), 0700u);

  const std::string victim = tmp.path() + "/victim";
  std::ofstream(victim) << "keep";
  const std::string planted = tmp.path() + "/planted.json";
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  ASSERT_TRUE(WritePrivateFile(planted, "new").ok());
  std::ifstream in(victim);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "keep");
  struct stat st {};
  ASSERT_EQ(::lstat(planted.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

}  // namespace
}  // namespace inferscope::base
