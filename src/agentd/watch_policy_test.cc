// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agentd/watch_policy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/temp_dir.h"

namespace inferscope::agentd {
namespace {

// A /proc with processes 100 <- 200 <- 300 (the agent) and 400, a child of init.
class WatchPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Process(100, "(systemd)", 1);
    Process(200, "(a (strange) name)", 100);  // comm with spaces and parentheses
    Process(300, "(inferscope)", 200);
    Process(400, "(vllm)", 1);
  }
  void Process(int pid, const std::string& comm, int ppid) {
    const std::string d = proc_.path() + "/" + std::to_string(pid);
    std::filesystem::create_directories(d);
    std::ofstream(d + "/stat") << pid << " " << comm << " S " << ppid << " 1 1 0 -1\n";
  }
  std::string Refusal(int pid, uid_t agent_uid = ::geteuid()) {
    return WatchRefusal(pid, 300, agent_uid, proc_.path());
  }
  testing::TempDir proc_;
};

TEST_F(WatchPolicyTest, TheUsersOwnProcessIsWatched) { EXPECT_EQ(Refusal(400), ""); }

TEST_F(WatchPolicyTest, InitTheAgentAndItsAncestorsAreNot) {
  EXPECT_NE(Refusal(1).find("never watched"), std::string::npos);
  EXPECT_NE(Refusal(300).find("ancestors"), std::string::npos);
  EXPECT_NE(Refusal(200).find("ancestors"), std::string::npos);
  EXPECT_NE(Refusal(100).find("ancestors"), std::string::npos);
  EXPECT_NE(Refusal(999).find("no process 999"), std::string::npos);
}

TEST_F(WatchPolicyTest, AnotherUsersProcessIsNot) {
  // The fake /proc's entries belong to this test's uid: to an agent of any other user they are
  // another user's processes.
  const uid_t other = ::geteuid() == 4242 ? 4343 : 4242;
  EXPECT_NE(Refusal(400, other).find("belongs to uid " + std::to_string(::geteuid())),
            std::string::npos);
  EXPECT_EQ(Refusal(400, 0), "");  // root's agent may watch any process
}

TEST(ParsePidTest, DigitsOnly) {
  EXPECT_EQ(ParsePid("4242"), 4242);
  EXPECT_EQ(ParsePid("12x"), std::nullopt);
  EXPECT_EQ(ParsePid("-1"), std::nullopt);
  EXPECT_EQ(ParsePid("0"), std::nullopt);
  EXPECT_EQ(ParsePid(""), std::nullopt);
  EXPECT_EQ(ParsePid("99999999999999"), std::nullopt);
  EXPECT_EQ(ParsePid(" 7"), std::nullopt);
}

}  // namespace
}  // namespace inferscope::agentd
