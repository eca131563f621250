// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace inferscope::inject {
namespace {

std::map<std::string, std::string>* g_env = nullptr;

const char* FakeEnv(const char* name) {
  auto it = g_env->find(name);
  return it == g_env->end() ? nullptr : it->second.c_str();
}

Config Read(std::map<std::string, std::string> env) {
  g_env = &env;
  Config c = ReadConfig(&FakeEnv);
  g_env = nullptr;
  return c;
}

TEST(ConfigTest, DefaultsWithAnEmptyEnvironment) {
  const Config c = Read({{"HOME", "/home/u"}});
  EXPECT_EQ(c.window_ns, 10'000'000'000);
  EXPECT_EQ(c.flush_period_ns, 500'000'000);
  EXPECT_EQ(c.socket_path, "/home/u/.local/state/inferscope/agent.sock");
  EXPECT_EQ(c.rank, -1);
  EXPECT_TRUE(c.warnings.empty());
}

TEST(ConfigTest, NvtxIsOptIn) {
  EXPECT_FALSE(Read({}).nvtx);
  EXPECT_TRUE(Read({{"INFERSCOPE_NVTX", "1"}}).nvtx);
  EXPECT_FALSE(Read({{"INFERSCOPE_NVTX", "0"}}).nvtx);
  const Config bad = Read({{"INFERSCOPE_NVTX", "yes"}});
  EXPECT_FALSE(bad.nvtx);
  EXPECT_NE(bad.warnings.find("INFERSCOPE_NVTX=yes ignored"), std::string::npos) << bad.warnings;
}

TEST(ConfigTest, ReadsSettingsAndRankVariablesOfEachLauncher) {
  Config c = Read({{"INFERSCOPE_WINDOW", "5s"},
                   {"INFERSCOPE_STATE_DIR", "/tmp/s"},
                   {"INFERSCOPE_BUFFER_COUNT", "16"},
                   {"INFERSCOPE_LOG", "debug"},
                   {"RANK", "3"},
                   {"LOCAL_RANK", "1"},
                   {"WORLD_SIZE", "8"}});
  EXPECT_EQ(c.window_ns, 5'000'000'000);
  EXPECT_EQ(c.socket_path, "/tmp/s/agent.sock");
  EXPECT_EQ(c.buffer_count, 16u);
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.world_size, 8);
  c = Read({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "16"}});
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(c.world_size, 16);
  c = Read({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}});
  EXPECT_EQ(c.rank, 2);
  EXPECT_EQ(c.local_rank, 0);
  EXPECT_EQ(Read({{"INFERSCOPE_SOCKET", "/x.sock"}, {"INFERSCOPE_STATE_DIR", "/y"}}).socket_path,
            "/x.sock");
}

TEST(ConfigTest, BadValuesFallBackToDefaultsWithAWarning) {
  const Config c = Read({{"INFERSCOPE_WINDOW", "10"},         // no unit
                         {"INFERSCOPE_BUFFER_SIZE", "huge"},  // not a number
                         {"INFERSCOPE_BUFFER_COUNT", "0"},    // below the minimum
                         {"INFERSCOPE_LOG", "loud"},
                         {"RANK", "three"}});
  EXPECT_EQ(c.window_ns, 10'000'000'000);
  EXPECT_EQ(c.buffer_bytes, size_t{4} << 20);
  EXPECT_EQ(c.buffer_count, 8u);
  EXPECT_EQ(c.log_level, LogLevel::kError);
  EXPECT_EQ(c.rank, -1);
  EXPECT_NE(c.warnings.find("INFERSCOPE_WINDOW"), std::string::npos);
  EXPECT_NE(c.warnings.find("INFERSCOPE_BUFFER_SIZE"), std::string::npos);
  EXPECT_NE(c.warnings.find("INFERSCOPE_LOG"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::inject
