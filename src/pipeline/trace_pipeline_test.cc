// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The offline pipeline: grouping inputs by job, and ImportTraces keeping one job of unrelated runs.
#include "src/pipeline/trace_pipeline.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "src/report/report.h"
#include "tests/temp_dir.h"
#include "tests/test_traces.h"

namespace inferscope::pipeline {
namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kEpoch2025 = 1'735'689'600 * kSec;  // 2025-01-01, a wall-clock timestamp

// A trace of one process on one GPU, active over [first_ns, last_ns).
ImportedTrace Trace(const std::string& path, int32_t rank, int32_t world_size, int64_t first_ns,
                    int64_t last_ns, uint32_t pid = 100, const std::string& host = "") {
  ImportedTrace t;
  t.path = path;
  model::ProcessProfile p;
  p.pid = pid;
  p.rank = rank;
  p.world_size = world_size;
  p.hostname = host;
  model::DeviceProfile d;
  d.first_start_ns = first_ns;
  d.last_end_ns = last_ns;
  p.devices.push_back(d);
  t.window.processes.push_back(p);
  return t;
}

std::vector<std::vector<size_t>> Indices(const std::vector<JobGroup>& groups) {
  std::vector<std::vector<size_t>> out;
  for (const JobGroup& g : groups) out.push_back(g.traces);
  return out;
}

TEST(GroupTracesByJobTest, RanksOfOneJobStayTogether) {
  const auto groups = GroupTracesByJob({Trace("r0", 0, 4, 10, 20), Trace("r1", 1, 4, 11, 21),
                                        Trace("r2", 2, 4, 10, 19), Trace("r3", 3, 4, 12, 22)});
  EXPECT_EQ(Indices(groups), (std::vector<std::vector<size_t>>{{0, 1, 2, 3}}));
  EXPECT_EQ(groups[0].why_separate, "");
}

TEST(GroupTracesByJobTest, ThreeRunsOfTwoRanksAreThreeJobs) {
  // A directory holding three separate runs, sorted by name: a0 a1 b0 b1 c0 c1.
  std::vector<ImportedTrace> traces;
  for (const char* run : {"a", "b", "c"})
    for (int rank = 0; rank < 2; ++rank)
      traces.push_back(Trace(std::string(run) + std::to_string(rank), rank, 2, 10, 20));
  const auto groups = GroupTracesByJob(traces);
  EXPECT_EQ(Indices(groups), (std::vector<std::vector<size_t>>{{0, 1}, {2, 3}, {4, 5}}));
  EXPECT_EQ(groups[1].why_separate, "rank 0 again");
  EXPECT_EQ(groups[2].why_separate, "rank 0 again");
}

TEST(GroupTracesByJobTest, RunsInterleavedByRankStillPair) {
  // Named by rank first (rank0_a, rank0_b, rank1_a, rank1_b): the wall clock pairs them.
  const int64_t a = kEpoch2025, b = kEpoch2025 + 3600 * kSec;
  const auto groups =
      GroupTracesByJob({Trace("rank0_a", 0, 2, a, a + kSec), Trace("rank0_b", 0, 2, b, b + kSec),
                        Trace("rank1_b", 1, 2, b, b + kSec), Trace("rank1_a", 1, 2, a, a + kSec)});
  EXPECT_EQ(Indices(groups), (std::vector<std::vector<size_t>>{{0, 3}, {1, 2}}));
}

TEST(GroupTracesByJobTest, WorldSizeWallClockAndProcessTellJobsApart) {
  EXPECT_EQ(GroupTracesByJob({Trace("a", 0, 2, 10, 20), Trace("b", 1, 8, 10, 20)})[1].why_separate,
            "world size 8, not 2");
  // Single-process traces without distributedInfo: an hour apart on the wall clock.
  const auto apart =
      GroupTracesByJob({Trace("a", -1, -1, kEpoch2025, kEpoch2025 + kSec),
                        Trace("b", -1, -1, kEpoch2025 + 3600 * kSec, kEpoch2025 + 3601 * kSec)});
  ASSERT_EQ(apart.size(), 2u);
  EXPECT_EQ(apart[1].why_separate.rfind("ran ", 0), 0u) << apart[1].why_separate;
  // The same process of a named host twice.
  EXPECT_EQ(GroupTracesByJob({Trace("a", -1, -1, 10, 20, 7, "node-a"),
                              Trace("b", -1, -1, 10, 20, 7, "node-a")})[1]
                .why_separate,
            "pid 7 on node-a again");
}

TEST(GroupTracesByJobTest, BaseTimePutsMonotonicClocksOnTheWallClock) {
  // Two hosts' ranks: monotonic clocks 1000 s apart, the same wall-clock time.
  ImportedTrace r0 = Trace("r0", 0, 2, 5000 * kSec, 5001 * kSec);
  ImportedTrace r1 = Trace("r1", 1, 2, 6000 * kSec, 6001 * kSec);
  r0.stats.wall_clock_offset_ns = kEpoch2025;
  r1.stats.wall_clock_offset_ns = kEpoch2025 - 1000 * kSec;
  EXPECT_EQ(GroupTracesByJob({r0, r1}).size(), 1u);
  // One host, two runs 2.6 h apart (TraceLens/h100 holds two such traces).
  ImportedTrace a = Trace("a", -1, -1, 1'419'116 * kSec, 1'419'117 * kSec);
  ImportedTrace b = Trace("b", -1, -1, 1'428'625 * kSec, 1'428'626 * kSec, 200);
  a.stats.wall_clock_offset_ns = b.stats.wall_clock_offset_ns = kEpoch2025;
  const auto groups = GroupTracesByJob({a, b});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].why_separate.rfind("ran ", 0), 0u) << groups[1].why_separate;
  // Without the offset the same two say nothing about when they ran.
  a.stats.wall_clock_offset_ns = b.stats.wall_clock_offset_ns = 0;
  EXPECT_EQ(GroupTracesByJob({a, b}).size(), 1u);
}

TEST(GroupTracesByJobTest, TracesThatSayNothingStayTogether) {
  // Session clocks (Nsight) say nothing about when runs happened; unnamed hosts may reuse pids.
  EXPECT_EQ(GroupTracesByJob({Trace("a", -1, -1, 10, 20), Trace("b", -1, -1, 900, 1000),
                              Trace("c", -1, -1, 10, 20, 100, "")})
                .size(),
            1u);
  // Wall-clock ranks that overlap or nearly touch are one job.
  EXPECT_EQ(GroupTracesByJob({Trace("a", 0, 2, kEpoch2025, kEpoch2025 + 10 * kSec),
                              Trace("b", 1, 2, kEpoch2025 + 12 * kSec, kEpoch2025 + 20 * kSec)})
                .size(),
            1u);
}

TEST(GroupTracesByJobTest, FormatsClocksAndHostsTellJobsApart) {
  // A Kineto rank beside an Nsight export of two processes: never one job's three ranks.
  ImportedTrace kineto = Trace("rank1.json.gz", 1, 2, 10, 20);
  kineto.format = "kineto_json";
  ImportedTrace nsys = Trace("run.sqlite", -1, -1, 10, 20, 7, "node-a");
  nsys.window.processes.push_back(nsys.window.processes.front());
  nsys.window.processes.back().pid = 8;
  nsys.format = "nsys_sqlite";
  auto groups = GroupTracesByJob({nsys, kineto});
  EXPECT_EQ(Indices(groups), (std::vector<std::vector<size_t>>{{0}, {1}}));
  EXPECT_EQ(groups[1].why_separate, "kineto_json, not nsys_sqlite");

  // One trace on the wall clock, one on a session clock.
  ImportedTrace wall = Trace("a", -1, -1, kEpoch2025, kEpoch2025 + kSec);
  ImportedTrace session = Trace("b", -1, -1, 5 * kSec, 6 * kSec, 200);
  EXPECT_EQ(GroupTracesByJob({wall, session})[1].why_separate, "not on the wall clock");

  // Two Nsight exports of unranked processes on two hosts are two runs, even at the same time...
  ImportedTrace a = Trace("a.sqlite", -1, -1, 10, 20, 7, "node-a");
  ImportedTrace b = Trace("b.sqlite", -1, -1, 10, 20, 9, "node-b");
  a.format = b.format = "nsys_sqlite";
  EXPECT_EQ(GroupTracesByJob({a, b})[1].why_separate, "host node-b, not node-a");
  // ... but the ranks of a distributed job on two hosts are one job.
  ImportedTrace r0 = Trace("r0.json", 0, 2, 10, 20, 7, "node-a");
  ImportedTrace r1 = Trace("r1.json", 1, 2, 11, 21, 7, "node-b");
  r0.format = r1.format = "kineto_json";
  EXPECT_EQ(GroupTracesByJob({r0, r1}).size(), 1u);
}

// One GEMM on GPU 0 of `rank` in a job of two, at `ts_us`.
std::string KinetoTrace(int rank, int64_t ts_us) {
  std::ostringstream s;
  s << R"({"distributedInfo": {"backend": "nccl", "rank": )" << rank
    << R"(, "world_size": 2}, "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
     "ts": )"
    << ts_us << R"(, "dur": 5, "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "tid": 7,
     "ts": )"
    << ts_us + 10 << R"(, "dur": 100, "args": {"device": 0, "stream": 7, "correlation": 1}}]})";
  return s.str();
}

TEST(ImportTracesTest, UnrelatedRunsInADirectoryKeepTheLargestJobAndSaySo) {
  testing::TempDir dir;
  // Job "a": ranks 0 and 1; job "b": rank 0 only (its rank 1 was not collected).
  for (const auto& [name, rank] :
       std::vector<std::pair<std::string, int>>{{"a_rank0", 0}, {"a_rank1", 1}, {"b_rank0", 0}})
    std::ofstream(dir.path() + "/" + name + ".json") << KinetoTrace(rank, 1000);
  model::KernelClassifier classifier;
  std::string failed_path;
  std::ostringstream err;
  auto set = ImportTraces({dir.path()}, TraceOptions{}, classifier, &failed_path, err);
  ASSERT_TRUE(set.ok()) << set.status().message();
  ASSERT_EQ(set->traces.size(), 2u);
  EXPECT_EQ(set->traces[0].path, dir.path() + "/a_rank0.json");
  EXPECT_EQ(set->traces[1].path, dir.path() + "/a_rank1.json");
  EXPECT_EQ(set->left_out, std::vector<std::string>{dir.path() + "/b_rank0.json"});
  EXPECT_EQ(set->job_warning,
            "the inputs are 2 separate jobs, not one (ranks of different runs would be compared "
            "as one job's): job 1 = a_rank0.json, a_rank1.json (analyzed); job 2 = b_rank0.json "
            "(rank 0 again). Only job 1 is analyzed: give each job's files on their own for the "
            "others.");
  const analyze::Analysis analysis = AnalyzeTraces(*set, TraceOptions{});
  EXPECT_EQ(analysis.summary.rank_count, 2u);
  EXPECT_TRUE(HasGpuActivity(analysis));

  // One job's files on their own: no warning, nothing left out.
  set = ImportTraces({dir.path() + "/b_rank0.json"}, TraceOptions{}, classifier, &failed_path, err);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->traces.size(), 1u);
  EXPECT_TRUE(set->left_out.empty());
  EXPECT_EQ(set->job_warning, "");
}

// The bundled example, two ranks of one vLLM TP=2 job, stays one job: no warning in the report.
TEST(ImportTracesTest, TheExampleIsOneJob) {
  model::KernelClassifier classifier;
  std::string failed_path;
  std::ostringstream err;
  auto set = ImportTraces({std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode"},
                          TraceOptions{}, classifier, &failed_path, err);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->traces.size(), 2u);
  EXPECT_EQ(set->job_warning, "");
  const analyze::Analysis analysis = AnalyzeTraces(*set, TraceOptions{});
  EXPECT_EQ(analysis.ranks.size(), 2u);
  EXPECT_TRUE(analysis.other_jobs.empty());
  EXPECT_EQ(report::RenderText(analysis).find("warning:"), std::string::npos);
  const std::string json = report::RenderJson(analysis);
  EXPECT_NE(json.find(R"("jobs": {
    "count": 1,
    "warning": "",
    "left_out": [])"),
            std::string::npos);
}

// A Kineto rank given beside a 2-GPU Nsight export of another run: the export (two processes) is
// analyzed, the Kineto file is named as another job, in the header and in JSON.
TEST(ImportTracesTest, KinetoBesideAnNsightExportIsAnotherJob) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  model::KernelClassifier classifier;
  std::string failed_path;
  std::ostringstream err;
  const std::string nsys = testing::SharedTrace("nsys-ai/mfu_2gpu_before.sqlite");
  const std::string kineto =
      std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode/rank1.json.gz";
  auto set = ImportTraces({nsys, kineto}, TraceOptions{}, classifier, &failed_path, err);
  ASSERT_TRUE(set.ok()) << set.status().message();
  ASSERT_EQ(set->traces.size(), 1u);
  EXPECT_EQ(set->traces[0].path, nsys);
  ASSERT_EQ(set->other_jobs.size(), 1u);
  EXPECT_EQ(set->other_jobs[0].inputs, std::vector<std::string>{kineto});
  EXPECT_EQ(set->other_jobs[0].why, "kineto_json, not nsys_sqlite");
  const analyze::Analysis analysis = AnalyzeTraces(*set, TraceOptions{});
  EXPECT_EQ(analysis.ranks.size(), 2u);
  EXPECT_EQ(analysis.job_warning, set->job_warning);
  const std::string text = report::RenderText(analysis);
  EXPECT_NE(text.find("\nwarning: the inputs are 2 separate jobs"), std::string::npos) << text;
  const std::string json = report::RenderJson(analysis);
  const size_t jobs = json.find(R"("jobs": {)");
  ASSERT_NE(jobs, std::string::npos);
  EXPECT_EQ(json.find(R"("count": 2,)", jobs), json.find(R"("count")", jobs));
  EXPECT_NE(json.find(R"("warning": "the inputs are 2 separate jobs)", jobs), std::string::npos);
  EXPECT_NE(json.find(R"("why": "kineto_json, not nsys_sqlite")", jobs), std::string::npos);

  // The export on its own is one job of two ranks.
  set = ImportTraces({nsys}, TraceOptions{}, classifier, &failed_path, err);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->job_warning, "");
  EXPECT_EQ(AnalyzeTraces(*set, TraceOptions{}).ranks.size(), 2u);
}

// Real directories: three Nsight captures of separate runs (one 2 days before the others, two 80
// minutes apart) are three jobs; the two sampled ranks of one Kineto job are one.
TEST(ImportTracesTest, RealDirectoriesOfSeveralRunsAndOfOneJob) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  model::KernelClassifier classifier;
  std::string failed_path;
  std::ostringstream err;
  auto runs = ImportTraces({testing::SharedTrace("nsys-ai")}, TraceOptions{}, classifier,
                           &failed_path, err);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_EQ(runs->traces.size(), 1u);
  EXPECT_EQ(runs->left_out.size(), 2u);
  EXPECT_NE(runs->job_warning.find("the inputs are 3 separate jobs"), std::string::npos)
      << runs->job_warning;

  auto job = ImportTraces({testing::SharedTrace("HolisticTraceAnalysis/trace_filter")},
                          TraceOptions{}, classifier, &failed_path, err);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->traces.size(), 2u);
  EXPECT_EQ(job->job_warning, "");
}

}  // namespace
}  // namespace inferscope::pipeline
