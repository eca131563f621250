// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/access_token.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "tests/temp_dir.h"

namespace inferscope::base {
namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(AccessTokenTest, CreatedOnceRandomAndPrivateWhateverTheUmask) {
  inferscope::testing::TempDir tmp;
  EXPECT_EQ(ReadAccessToken(tmp.path()).status().code(), StatusCode::kNotFound);
  const mode_t old_umask = ::umask(0);
  auto token = EnsureAccessToken(tmp.path());
  ::umask(old_umask);
  ASSERT_TRUE(token.ok()) << token.status().message();
  EXPECT_EQ(token->size(), 64u);
  EXPECT_EQ(ModeOf(tmp.path() + "/agent.token"), 0600u);
  auto again = EnsureAccessToken(tmp.path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *token);  // kept, not regenerated
  auto read = ReadAccessToken(tmp.path());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, *token);

  inferscope::testing::TempDir other;
  auto different = EnsureAccessToken(other.path());
  ASSERT_TRUE(different.ok());
  EXPECT_NE(*different, *token);
}

TEST(AccessTokenTest, ATokenOthersCanReadOrASymlinkIsRefused) {
  inferscope::testing::TempDir tmp;
  ASSERT_TRUE(EnsureAccessToken(tmp.path()).ok());
  const std::string path = tmp.path() + "/agent.token";
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto r = ReadAccessToken(tmp.path());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("chmod 600"), std::string::npos) << r.status().message();
  EXPECT_EQ(EnsureAccessToken(tmp.path()).status().code(), StatusCode::kUnavailable);

  const std::string elsewhere = tmp.path() + "/elsewhere";
  std::ofstream(elsewhere) << "planted-token-value\n";
  ::chmod(elsewhere.c_str(), 0600);
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), path.c_str()), 0);
  EXPECT_EQ(ReadAccessToken(tmp.path()).status().code(), StatusCode::kUnavailable);
}

// One secret: an MCP token of an earlier version becomes the access token and its file goes.
TEST(AccessTokenTest, AdoptsTheLegacyMcpToken) {
  inferscope::testing::TempDir tmp;
  std::ofstream(tmp.path() + "/mcp.token") << "  tok-123\n";
  auto token = EnsureAccessToken(tmp.path());
  ASSERT_TRUE(token.ok()) << token.status().message();
  EXPECT_EQ(*token, "tok-123");
  EXPECT_EQ(ModeOf(tmp.path() + "/agent.token"), 0600u);
  EXPECT_NE(::access((tmp.path() + "/mcp.token").c_str(), F_OK), 0);
}

TEST(AccessTokenTest, TheFileIsReReadWhenItChanges) {
  inferscope::testing::TempDir tmp;
  auto first = EnsureAccessToken(tmp.path());
  ASSERT_TRUE(first.ok());
  AccessTokenFile file(tmp.path() + "/agent.token");
  auto current = file.Current();
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(*current, *first);
  const std::string path = tmp.path() + "/agent.token";
  {
    std::ofstream out(path, std::ios::trunc);
    out << "rotated-token-value-0123456789\n";
  }
  current = file.Current();
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(*current, "rotated-token-value-0123456789");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  EXPECT_FALSE(file.Current().ok());  // fail closed
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_FALSE(file.Current().ok());
}

TEST(AccessTokenTest, SameSecretComparesWholeStrings) {
  EXPECT_TRUE(SameSecret("abc", "abc"));
  EXPECT_FALSE(SameSecret("abc", "abd"));
  EXPECT_FALSE(SameSecret("abc", "abcd"));
  EXPECT_FALSE(SameSecret("", "a"));
}

}  // namespace
}  // namespace inferscope::base
