// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Range queries over rollup tiers: the plan (coarsest whole buckets inside, raw at the edges), the
// resolution ladder, and the answer, which must equal the merge of the raw windows.
#include "src/query/range_query.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/base/time_point.h"
#include "src/import/trace_importer.h"
#include "src/store/rollups.h"
#include "src/store/test_rollup_windows.h"
#include "src/wire/test_frames.h"
#include "src/wire/window_codec.h"
#include "tests/temp_dir.h"

namespace inferscope::query {
namespace {

using ::inferscope::store::testing::kSec;
using ::inferscope::store::testing::PendingOf;
using ::inferscope::store::testing::RollupTestWindow;
using ::inferscope::testing::TempDir;
using ::inferscope::wire::testing::MakeHello;

constexpr int64_t kMin = 60 * store::testing::kSec;
constexpr int64_t kHour = 60 * kMin;
const int64_t kT0 = store::FloorTo(1'700'000'000 * store::testing::kSec, kHour);

TEST(RangeQueryTest, ResolutionLadder) {
  EXPECT_EQ(RangeBinNs(5 * kMin), 100'000'000);
  EXPECT_EQ(RangeBinNs(kHour), 10 * store::testing::kSec);
  EXPECT_EQ(RangeBinNs(24 * kHour), 60 * store::testing::kSec);
  EXPECT_EQ(RangeBinNs(7 * 24 * kHour), 600 * store::testing::kSec);
  EXPECT_EQ(RangeBinNs(0), 1'000'000);
  // Never more than kMaxRangeBins bins.
  for (int64_t span : {store::testing::kSec, 7 * kMin, 5 * kHour, 90 * 24 * kHour})
    EXPECT_LE(span / RangeBinNs(span), kMaxRangeBins) << span;
}

TEST(RangeQueryTest, PlanTakesCoarsestWholeBucketsAndLeavesRaggedEdgesRaw) {
  const store::RollupCoverage all{0, kT0 + 10 * kHour};
  const int64_t from = kT0 + 17 * kMin + 30 * store::testing::kSec,
                to = kT0 + 3 * kHour + 41 * kMin + 10 * store::testing::kSec;
  RollupPlan plan = PlanRollups(from, to, all, 60 * store::testing::kSec);
  std::vector<std::tuple<int64_t, int64_t, int64_t>> got;
  for (const auto& s : plan.segments) got.emplace_back(s.tier_ns, s.from_ns - kT0, s.to_ns - kT0);
  std::sort(got.begin(), got.end());
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> want = {
      {10 * kMin, 20 * kMin, kHour},
      {10 * kMin, 3 * kHour, 3 * kHour + 40 * kMin},
      {kHour, kHour, 3 * kHour}};
  EXPECT_EQ(got, want);
  // The edges (17:30-20:00, 3:40:00-3:41:10) are read from raw windows.
  EXPECT_EQ(plan.covered_from_ns, kT0 + 20 * kMin);
  EXPECT_EQ(plan.covered_to_ns, kT0 + 3 * kHour + 40 * kMin);

  // A 10 s resolution cannot use hour rows (60 s bins); 1 s and 100 ms use no tier at all.
  plan = PlanRollups(from, to, all, 10 * store::testing::kSec);
  EXPECT_FALSE(plan.segments.empty());
  for (const auto& s : plan.segments) EXPECT_NE(s.tier_ns, kHour);
  EXPECT_TRUE(PlanRollups(from, to, all, store::testing::kSec).segments.empty());
  EXPECT_TRUE(PlanRollups(from, to, all, 100'000'000).segments.empty());
  // Only what the tiers cover: nothing before from_ns, nothing after the sealed point.
  plan =
      PlanRollups(from, to, {kT0 + kHour + 5 * kMin, kT0 + 2 * kHour + 30 * store::testing::kSec},
                  60 * store::testing::kSec);
  EXPECT_EQ(plan.covered_from_ns, kT0 + kHour + 10 * kMin);  // the first whole bucket after it
  EXPECT_EQ(plan.covered_to_ns, kT0 + 2 * kHour);
}

TEST(RangeQueryTest, RollupBackedAnswerEqualsTheRawMerge) {
  TempDir dir;
  auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  std::vector<int64_t> ids;
  for (uint32_t p = 0; p < 2; ++p)
    ids.push_back(*(*store)->UpsertProcess(MakeHello(100 + p, static_cast<int32_t>(p)), kT0));
  // 10 h of one 10 s window a minute per process (an idle gap between windows), so the whole
  // range needs 60 s bins and hour rows.
  const int64_t end = kT0 + 10 * kHour;
  ASSERT_TRUE((*store)->Begin().ok());
  int index = 0;
  for (int64_t t = kT0 + 20 * store::testing::kSec; t < end; t += kMin) {
    for (size_t p = 0; p < ids.size(); ++p) {
      model::ProfileWindow w = store::testing::RollupTestWindow(
          100 + static_cast<uint32_t>(p), static_cast<int32_t>(p), t, index++);
      ASSERT_TRUE((*store)
                      ->AppendWindow(
                          store::testing::PendingOf(ids[p], w, t + 11 * store::testing::kSec), &w)
                      .ok());
    }
  }
  ASSERT_TRUE((*store)->Commit().ok());

  struct Case {
    const char* name;
    int64_t from, to;
    std::optional<uint32_t> pid;
    std::optional<uint32_t> device;
  };
  const int64_t open = std::numeric_limits<int64_t>::max();
  const std::vector<Case> cases = {
      {"ragged 9 h",
       kT0 + 17 * kMin + 30 * store::testing::kSec,
       kT0 + 9 * kHour + 41 * kMin + 10 * store::testing::kSec,
       {},
       {}},
      {"everything", 0, open, {}, {}},
      {"open-ended last 4 h", end - 4 * kHour, open, {}, {}},
      {"2 h, pid filter", kT0 + 3 * kHour + 5 * kMin, kT0 + 5 * kHour + 7 * kMin, 101, {}},
      {"9 h, device filter",
       kT0 + 30 * store::testing::kSec,
       kT0 + 9 * kHour + 30 * store::testing::kSec,
       {},
       1},
      {"5 min", kT0 + 2 * kHour, kT0 + 2 * kHour + 5 * kMin, {}, {}},
  };
  for (const Case& c : cases) {
    RangeQuery q;
    q.from_ns = c.from;
    q.to_ns = c.to;
    q.pid = c.pid;
    q.device = c.device;
    q.now_ns = end + kMin;
    q.use_rollups = true;
    auto tiered = QueryRangeProfile(**store, q, "store:test");
    q.use_rollups = false;
    auto raw = QueryRangeProfile(**store, q, "store:test");
    ASSERT_TRUE(tiered.ok() && raw.ok()) << c.name;
    EXPECT_GT(raw->windows, 0u) << c.name;
    EXPECT_EQ(tiered->windows, raw->windows) << c.name;
    EXPECT_EQ(tiered->timeline_bin_ns, raw->timeline_bin_ns) << c.name;
    EXPECT_EQ(RenderRangeReport(*tiered, report::ReportFormat::kJson),
              RenderRangeReport(*raw, report::ReportFormat::kJson))
        << c.name;
    if (c.to - c.from >= 2 * kHour) {  // long ranges read a fraction of the rows
      EXPECT_LT(tiered->rows_read * 4, raw->rows_read) << c.name;
    }
  }
}

// A range across a restart: rank 0 ran as pid 101, then (restarted) as pid 201. The two are runs
// of one rank, not two ranks: the latest is reported, the earlier named, and nothing compares them.
TEST(RangeQueryTest, ARestartInsideTheRangeReportsTheLatestRunAndNamesTheOther) {
  TempDir dir;
  auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  wire::Hello first = MakeHello(101, 0), second = MakeHello(201, 0);
  first.process_start_unix_ns = kT0;
  second.process_start_unix_ns = kT0 + 30 * kMin;
  const int64_t id1 = *(*store)->UpsertProcess(first, kT0);
  const int64_t id2 = *(*store)->UpsertProcess(second, kT0 + 30 * kMin);
  ASSERT_TRUE((*store)->Begin().ok());
  int index = 0;
  // The first run busy 10x longer than its restart: mixed as ranks, a straggler and imbalance.
  for (int64_t t = kT0 + kMin; t < kT0 + 20 * kMin; t += kMin) {
    model::ProfileWindow w = store::testing::RollupTestWindow(101, 0, t, index++);
    for (model::DeviceProfile& d : w.processes[0].devices) d.busy_ns *= 10;
    ASSERT_TRUE((*store)->AppendWindow(PendingOf(id1, w, t + 11 * kSec), &w).ok());
  }
  for (int64_t t = kT0 + 31 * kMin; t < kT0 + 50 * kMin; t += kMin) {
    model::ProfileWindow w = store::testing::RollupTestWindow(201, 0, t, index++);
    ASSERT_TRUE((*store)->AppendWindow(PendingOf(id2, w, t + 11 * kSec), &w).ok());
  }
  ASSERT_TRUE((*store)->Commit().ok());

  RangeQuery q;
  q.from_ns = kT0;
  q.to_ns = kT0 + kHour;
  auto profile = QueryRangeProfile(**store, q, "store:test");
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  const analyze::Analysis& a = profile->analysis;
  ASSERT_FALSE(a.ranks.empty());
  for (const analyze::RankAnalysis& r : a.ranks) EXPECT_EQ(r.pid, 201u);
  EXPECT_EQ(profile->processes, 1u);
  EXPECT_EQ(profile->windows, 19u);
  // Only the restart's devices are compared (mixed in, pid 101's two would be rows too).
  EXPECT_EQ(a.ranks.size(), 2u);
  EXPECT_EQ(a.comparison.ranks.size(), 2u);
  ASSERT_EQ(a.other_jobs.size(), 1u);
  EXPECT_EQ(a.other_jobs[0].inputs, std::vector<std::string>{"pid 101, rank 0 on node-a, started " +
                                                             base::FormatUtcTime(kT0) + " UTC"});
  EXPECT_EQ(a.other_jobs[0].why, "an earlier run: rank 0 on node-a again");
  EXPECT_EQ(a.job_warning.rfind("the range spans 2 runs", 0), 0u) << a.job_warning;
  const std::string text = RenderRangeReport(*profile, report::ReportFormat::kText);
  EXPECT_NE(text.find("\nwarning: the range spans 2 runs"), std::string::npos) << text;
  const std::string json = RenderRangeReport(*profile, report::ReportFormat::kJson);
  const size_t jobs = json.find(R"("jobs": {)");
  ASSERT_NE(jobs, std::string::npos);
  EXPECT_EQ(json.find(R"("count": 2,)", jobs), json.find(R"("count")", jobs));
  EXPECT_NE(json.find(R"("warning": "the range spans 2 runs)", jobs), std::string::npos);

  // Each run's own range is one job, without a warning.
  q.to_ns = kT0 + 25 * kMin;
  profile = QueryRangeProfile(**store, q, "store:test");
  ASSERT_TRUE(profile.ok());
  EXPECT_TRUE(profile->analysis.other_jobs.empty());
  EXPECT_EQ(profile->analysis.job_warning, "");
  for (const analyze::RankAnalysis& r : profile->analysis.ranks) EXPECT_EQ(r.pid, 101u);
}

// Replicas of a one-GPU model on one host each say rank 0: side by side, they are one run and
// every one is reported (a restart is the same rank started after the first stopped).
TEST(RangeQueryTest, ConcurrentProcessesOfOneRankAreOneRun) {
  TempDir dir;
  auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  int index = 0;
  ASSERT_TRUE((*store)->Begin().ok());
  for (uint32_t pid : {401u, 402u, 403u}) {
    wire::Hello hello = MakeHello(pid, 0);
    hello.process_start_unix_ns = kT0 + (pid - 400) * kSec;  // started a second apart
    const int64_t id = *(*store)->UpsertProcess(hello, hello.process_start_unix_ns);
    for (int64_t m = 1; m < 10; ++m) {
      model::ProfileWindow w = store::testing::RollupTestWindow(pid, 0, kT0 + m * kMin, index++);
      ASSERT_TRUE((*store)->AppendWindow(PendingOf(id, w, kT0 + m * kMin + 11 * kSec), &w).ok());
    }
  }
  ASSERT_TRUE((*store)->Commit().ok());
  RangeQuery q;
  q.from_ns = kT0;
  q.to_ns = kT0 + kHour;
  auto profile = QueryRangeProfile(**store, q, "store:test");
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  EXPECT_EQ(profile->processes, 3u);
  EXPECT_TRUE(profile->analysis.other_jobs.empty());
  EXPECT_EQ(profile->analysis.job_warning, "");
  std::set<uint32_t> pids;
  for (const analyze::RankAnalysis& r : profile->analysis.ranks) pids.insert(r.pid);
  EXPECT_EQ(pids, (std::set<uint32_t>{401, 402, 403}));
}

// Without rank numbers a restart is told by time: a process started after the run's last window
// is a later run; two processes that ran side by side are one.
TEST(RangeQueryTest, UnrankedProcessesAreRunsByTime) {
  TempDir dir;
  auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  int index = 0;
  // (pid, process start, first window, last window) in minutes from kT0.
  const std::vector<std::tuple<uint32_t, int64_t, int64_t, int64_t>> processes = {
      {301, 0, 1, 10}, {302, 0, 1, 10}, {303, 20, 21, 30}};
  ASSERT_TRUE((*store)->Begin().ok());
  for (const auto& [pid, start, first, last] : processes) {
    wire::Hello hello = MakeHello(pid, -1);
    hello.world_size = -1;
    hello.process_start_unix_ns = kT0 + start * kMin;
    const int64_t id = *(*store)->UpsertProcess(hello, kT0 + start * kMin);
    for (int64_t m = first; m < last; ++m) {
      model::ProfileWindow w = store::testing::RollupTestWindow(pid, -1, kT0 + m * kMin, index++);
      ASSERT_TRUE((*store)->AppendWindow(PendingOf(id, w, kT0 + m * kMin + 11 * kSec), &w).ok());
    }
  }
  ASSERT_TRUE((*store)->Commit().ok());
  RangeQuery q;
  q.from_ns = kT0;
  q.to_ns = kT0 + kHour;
  auto profile = QueryRangeProfile(**store, q, "store:test");
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  for (const analyze::RankAnalysis& r : profile->analysis.ranks) EXPECT_EQ(r.pid, 303u);
  ASSERT_EQ(profile->analysis.other_jobs.size(), 1u);
  EXPECT_EQ(profile->analysis.other_jobs[0].inputs.size(), 2u);  // 301 and 302, one run
  EXPECT_EQ(profile->analysis.other_jobs[0].why, "an earlier run: started after it ended");
}

// Real windows: the Aggregator's 10 s windows of the bundled vLLM TP=2 decode trace (real kernel
// names, categories, syncs, timelines), re-stamped over 9 h for 2 processes. The tier-backed answer
// must equal the raw merge here too.
TEST(RangeQueryTest, RollupBackedAnswerEqualsTheRawMergeOnRealWindows) {
  std::vector<model::ProcessProfile> templates;
  for (const char* rank : {"rank0", "rank1"}) {
    model::NameTable names;
    model::KernelClassifier classifier;
    aggregate::AggregatorOptions options;
    options.window_ns = 10 * store::testing::kSec;
    std::vector<model::ProfileWindow> windows;
    aggregate::Aggregator aggregator(options, &names, &classifier,
                                     [&](model::ProfileWindow&& w) { windows.push_back(w); });
    const std::string path =
        std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode/" + rank + ".json.gz";
    ASSERT_TRUE(import::ImportTrace(path, &names, &aggregator).ok()) << path;
    aggregator.Finish();
    for (const model::ProfileWindow& w : windows)
      for (model::ProcessProfile p : w.processes) {
        for (model::DeviceProfile& d : p.devices) {
          d.first_start_ns -= w.start_ns;
          d.last_end_ns -= w.start_ns;
          d.timeline.origin_ns -= w.start_ns;
        }
        templates.push_back(std::move(p));
      }
  }
  ASSERT_FALSE(templates.empty());

  TempDir dir;
  auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  std::vector<int64_t> ids;
  for (uint32_t p = 0; p < 2; ++p)
    ids.push_back(*(*store)->UpsertProcess(MakeHello(100 + p, static_cast<int32_t>(p)), kT0));
  const int64_t end = kT0 + 9 * kHour;
  ASSERT_TRUE((*store)->Begin().ok());
  size_t n = 0;
  for (int64_t t = kT0 + 40 * store::testing::kSec; t < end; t += kMin) {
    for (uint32_t p = 0; p < 2; ++p, ++n) {
      model::ProfileWindow w;
      w.start_ns = t;
      w.end_ns = t + 10 * store::testing::kSec;
      model::ProcessProfile& proc = w.processes.emplace_back(templates[n % templates.size()]);
      proc.pid = 100 + p;
      proc.rank = static_cast<int32_t>(p);
      proc.hostname = "node-a";
      for (model::DeviceProfile& d : proc.devices) {
        d.first_start_ns += t;
        d.last_end_ns += t;
        d.timeline.origin_ns += t;
      }
      ASSERT_TRUE(
          (*store)
              ->AppendWindow(store::testing::PendingOf(ids[p], w, t + 11 * store::testing::kSec))
              .ok());
    }
  }
  ASSERT_TRUE((*store)->Commit().ok());
  RangeQuery q;
  q.from_ns = kT0 + 23 * kMin + 10 * store::testing::kSec;
  q.to_ns = kT0 + 8 * kHour + 47 * kMin;
  q.now_ns = end;
  auto tiered = QueryRangeProfile(**store, q, "store:test");
  q.use_rollups = false;
  auto raw = QueryRangeProfile(**store, q, "store:test");
  ASSERT_TRUE(tiered.ok() && raw.ok());
  EXPECT_LT(tiered->rows_read * 4, raw->rows_read);
  EXPECT_EQ(tiered->windows, raw->windows);
  EXPECT_EQ(RenderRangeReport(*tiered, report::ReportFormat::kJson),
            RenderRangeReport(*raw, report::ReportFormat::kJson));
}

}  // namespace
}  // namespace inferscope::query
