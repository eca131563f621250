// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Smoke test of the live path without a GPU: replay_engine replays real traces, loading echo_tool
// (linked against the real libcupti) as the injection library; the tool must count exactly the
// trace's kernels and memcpys, which proves it bound to the fake CUPTI.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "src/import/trace_importer.h"
#include "tests/fakes/replay_engine/replay.h"
#include "tests/test_traces.h"

namespace inferscope::fakes {
namespace {

struct EngineRun {
  int exit_code = -1;
  std::string output;  // stdout + stderr
};

EngineRun RunEngine(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " " + REPLAY_ENGINE_PATH + " " + args + " 2>&1";
  EngineRun run;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return run;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) run.output.append(buf, n);
  const int status = pclose(p);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Sums one field over every "echo_tool ..." line; -1 when no line was printed.
int64_t EchoTotal(const std::string& output, const std::string& field) {
  int64_t total = -1;
  for (size_t line = output.find("echo_tool pid="); line != std::string::npos;
       line = output.find("echo_tool pid=", line + 1)) {
    const size_t eol = output.find('\n', line);
    const size_t at = output.find(" " + field + "=", line);
    if (at == std::string::npos || at > eol) continue;
    total = (total < 0 ? 0 : total) + std::stoll(output.substr(at + field.size() + 2));
  }
  return total;
}

struct Expected {
  int64_t kernels = 0, memcpys = 0, memsets = 0, syncs = 0, processes = 0;
};
Expected Count(const std::string& path) {
  model::NameTable names;
  CollectingSink sink;
  auto stats = import::ImportTrace(path, &names, &sink);
  EXPECT_TRUE(stats.ok()) << path;
  Expected e;
  for (const auto& [pid, t] : sink.processes()) {
    e.kernels += static_cast<int64_t>(t.kernels.size());
    e.memcpys += static_cast<int64_t>(t.memcpys.size());
    e.memsets += static_cast<int64_t>(t.memsets.size());
    e.syncs += static_cast<int64_t>(t.syncs.size());
    ++e.processes;
  }
  return e;
}

void ExpectEchoMatches(const std::string& trace, const std::string& env = "") {
  const Expected want = Count(trace);
  ASSERT_GT(want.kernels, 0);
  const EngineRun run =
      RunEngine(std::string("--speed 0 --inject ") + ECHO_TOOL_PATH + " " + trace, env);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(EchoTotal(run.output, "kernel"), want.kernels) << run.output;
  EXPECT_EQ(EchoTotal(run.output, "memcpy"), want.memcpys) << run.output;
  EXPECT_EQ(EchoTotal(run.output, "memset"), want.memsets) << run.output;
  EXPECT_EQ(EchoTotal(run.output, "sync"), want.syncs) << run.output;
  EXPECT_EQ(EchoTotal(run.output, "dropped"), 0) << run.output;
  size_t lines = 0;
  for (size_t pos = 0; (pos = run.output.find("echo_tool pid=", pos)) != std::string::npos; ++pos)
    ++lines;
  EXPECT_EQ(lines, static_cast<size_t>(want.processes)) << run.output;  // one process per rank
}

TEST(ReplayEngineTest, SingleRankKinetoTrace) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  ExpectEchoMatches(
      ::inferscope::testing::SharedTrace("HolisticTraceAnalysis/critical_path/alexnet/"
                                         "benchmark_result_2869224_1695835535_trace.json.gz"));
}

TEST(ReplayEngineTest, TwoRankNsysTraceForksOneProcessPerRank) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  // LD_LIBRARY_PATH pointing at the real CUPTI must not win over the fake (DT_RPATH).
  ExpectEchoMatches(::inferscope::testing::SharedTrace("nsys-ai/mfu_2gpu_before.sqlite"),
                    "LD_LIBRARY_PATH=/usr/local/cuda/lib64");
  const EngineRun run =
      RunEngine(std::string("--speed 0 --inject ") + ECHO_TOOL_PATH + " " +
                ::inferscope::testing::SharedTrace("nsys-ai/mfu_2gpu_before.sqlite"));
  EXPECT_NE(run.output.find("rank=0 "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("rank=1 "), std::string::npos) << run.output;
}

// The project's own example (a real vLLM TP=2 decode trace, two ranks): the tests below that
// test the engine rather than a trace run on it, so a fresh clone without ../shared runs them too.
std::string Example(const char* rank) {
  return std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode/" + rank + ".json.gz";
}

TEST(ReplayEngineTest, BundledExampleTwoRanksExactly) {
  // Two trace files are two ranks: one process each, every kernel and copy delivered once.
  const std::string both = Example("rank0") + " " + Example("rank1");
  Expected want = Count(Example("rank0"));
  const Expected rank1 = Count(Example("rank1"));
  want.kernels += rank1.kernels;
  want.memcpys += rank1.memcpys;
  const EngineRun run = RunEngine(std::string("--speed 0 --inject ") + ECHO_TOOL_PATH + " " + both);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ASSERT_GT(want.kernels, 0);
  EXPECT_EQ(EchoTotal(run.output, "kernel"), want.kernels) << run.output;
  EXPECT_EQ(EchoTotal(run.output, "memcpy"), want.memcpys) << run.output;
  EXPECT_EQ(EchoTotal(run.output, "dropped"), 0) << run.output;
  EXPECT_NE(run.output.find("rank=0 "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("rank=1 "), std::string::npos) << run.output;
}

TEST(ReplayEngineTest, InjectionPathFromEnvironmentAndWithout) {
  const std::string trace = Example("rank0");
  EngineRun run =
      RunEngine("--speed 0 " + trace, std::string("CUDA_INJECTION64_PATH=") + ECHO_TOOL_PATH);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(EchoTotal(run.output, "kernel"), Count(trace).kernels);
  run = RunEngine("--speed 0 " + trace, "env -u CUDA_INJECTION64_PATH");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(EchoTotal(run.output, "kernel"), -1);  // no tool, still replays
  EXPECT_NE(run.output.find("filtered"), std::string::npos);
}

TEST(ReplayEngineTest, SpeedPacesTheReplay) {
  const std::string trace = Example("rank0");  // 316 ms from first to last GPU operation
  auto run_ms = [&](const char* speed) {
    const auto start = std::chrono::steady_clock::now();
    const EngineRun run = RunEngine(std::string("--speed ") + speed + " " + trace);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  };
  EXPECT_GE(run_ms("1"), 300);  // real time: at least the trace's span
  EXPECT_GE(run_ms("2"), 150);  // twice as fast: at least half of it
}

TEST(ReplayEngineTest, BadArgumentsAndMissingTool) {
  EXPECT_EQ(RunEngine("").exit_code, 2);
  EXPECT_EQ(RunEngine("/nonexistent/trace.json").exit_code, 2);
  EXPECT_EQ(RunEngine("--speed 0 --inject /nonexistent.so " + Example("rank0")).exit_code, 1);
}

TEST(ReplayEngineTest, CallbackIdsForCommonApis) {
  using model::ApiKind;
  using model::SyncType;
  EXPECT_EQ(CbidForApi("cudaLaunchKernel", ApiKind::kKernelLaunch, SyncType::kUnknown).cbid, 211u);
  EXPECT_EQ(CbidForApi("cudaLaunchKernel_v7000", ApiKind::kKernelLaunch, SyncType::kUnknown).cbid,
            211u);
  EXPECT_EQ(CbidForApi("cudaStreamSynchronize", ApiKind::kSync, SyncType::kStream).cbid, 131u);
  const ApiCbid drv = CbidForApi("cuLaunchKernelEx", ApiKind::kKernelLaunch, SyncType::kUnknown);
  EXPECT_TRUE(drv.driver);
  EXPECT_EQ(drv.cbid, 652u);
  EXPECT_EQ(CbidForApi("cudaSomethingNew_v99000", ApiKind::kMalloc, SyncType::kUnknown).cbid, 20u);
}

}  // namespace
}  // namespace inferscope::fakes
