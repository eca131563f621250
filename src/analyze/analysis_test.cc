// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/analysis.h"

#include <gtest/gtest.h>

#include "src/analyze/test_profiles.h"

namespace inferscope::analyze {
namespace {

using model::Category;

TEST(AnalysisTest, TemporalBreakdownFromExactNanoseconds) {
  const model::DeviceProfile d = testing::MakeDevice(0, /*busy_ns=*/600, /*compute_ns=*/450);
  const RankAnalysis r = AnalyzeDevice(d, AnalysisOptions{});
  EXPECT_EQ(r.temporal.span_ns, 1000);
  EXPECT_EQ(r.temporal.busy_ns, 600);
  EXPECT_EQ(r.temporal.idle_ns, 400);
  EXPECT_EQ(r.temporal.compute_ns, 450);
  EXPECT_EQ(r.temporal.non_compute_ns, 150);
  EXPECT_DOUBLE_EQ(r.temporal.idle_pct, 40.0);
  EXPECT_DOUBLE_EQ(r.temporal.compute_pct, 45.0);
  EXPECT_DOUBLE_EQ(r.temporal.non_compute_pct, 15.0);
  EXPECT_DOUBLE_EQ(r.temporal.busy_pct, 60.0);
}

TEST(AnalysisTest, CategoriesAndTopKernels) {
  const model::DeviceProfile d = testing::MakeDevice(0, 600, 450);
  AnalysisOptions options;
  options.top = 2;
  const RankAnalysis r = AnalyzeDevice(d, options);
  ASSERT_EQ(r.categories.size(), 14u);
  EXPECT_EQ(r.categories[0].name, "attention");
  EXPECT_EQ(r.categories[13].name, "other");
  // attention 300 + matmul 150 + communication 100 + memory 50 = 600.
  EXPECT_EQ(r.kernel_time_ns, 600);
  EXPECT_DOUBLE_EQ(r.categories[0].pct, 50.0);
  EXPECT_EQ(r.categories[static_cast<int>(Category::kCommunication)].count, 2u);
  ASSERT_EQ(r.subcategories.size(), 3u);
  EXPECT_EQ(r.subcategories[0].name, "attention.decode");  // sorted by time
  // Three kernels in the top list, top=2: the third joins the tail (which already had 2 names).
  ASSERT_EQ(r.top_kernels.size(), 2u);
  EXPECT_EQ(r.top_kernels[0].display_name, "flashinfer::BatchDecodeKernel");
  EXPECT_EQ(r.top_kernels[0].category, "attention");
  EXPECT_EQ(r.top_kernels[0].count, 3u);
  EXPECT_EQ(r.top_kernels[0].total_ns, 300);
  EXPECT_EQ(r.top_kernels[0].mean_ns, 100);
  EXPECT_EQ(r.top_kernels[0].min_ns, 90);
  EXPECT_EQ(r.top_kernels[0].max_ns, 110);
  EXPECT_DOUBLE_EQ(r.top_kernels[0].pct, 50.0);
  EXPECT_EQ(r.other_kernels.distinct_names, 3u);
  EXPECT_EQ(r.other_kernels.count, 4u);
  EXPECT_EQ(r.other_kernels.total_ns, 150);
  EXPECT_DOUBLE_EQ(r.other_kernels.pct, 25.0);
}

TEST(AnalysisTest, IdleLaunchSyncTransfersAllocations) {
  const model::DeviceProfile d = testing::MakeDevice(0, 600, 450);
  const RankAnalysis r = AnalyzeDevice(d, AnalysisOptions{});
  ASSERT_EQ(r.idle_gaps.size(), 3u);
  EXPECT_EQ(r.idle_gaps[0].kind, "host_wait");
  EXPECT_EQ(r.idle_gaps[0].total_ns, 300);
  EXPECT_DOUBLE_EQ(r.idle_gaps[0].pct, 75.0);
  EXPECT_DOUBLE_EQ(r.idle_gaps[1].pct, 20.0);
  EXPECT_DOUBLE_EQ(r.idle_gaps[2].pct, 5.0);

  EXPECT_EQ(r.launch.cpu_launch_mean_ns, 5);
  EXPECT_EQ(r.launch.cpu_launch_max_ns, 8);
  EXPECT_EQ(r.launch.short_kernels, 5u);
  EXPECT_DOUBLE_EQ(r.launch.short_kernel_pct, 50.0);

  ASSERT_EQ(r.syncs.size(), 5u);
  const SyncRow& stream = r.syncs[static_cast<int>(model::SyncType::kStream)];
  EXPECT_EQ(stream.type, "stream");
  EXPECT_EQ(stream.count, 2u);
  EXPECT_EQ(stream.total_ns, 70);
  EXPECT_EQ(stream.max_ns, 50);
  ASSERT_EQ(stream.waited_on.size(), 1u);
  EXPECT_EQ(stream.waited_on[0].display_name, "flashinfer::BatchDecodeKernel");

  const TransferRow& htod = r.transfers[static_cast<int>(model::MemcpyKind::kHtoD)];
  EXPECT_EQ(htod.direction, "htod");
  EXPECT_EQ(htod.bytes, 1000u);
  EXPECT_DOUBLE_EQ(htod.bandwidth_gbps, 25.0);  // 1000 bytes in 40 ns
  EXPECT_EQ(r.transfers.back().direction, "memset");
  EXPECT_EQ(r.transfers.back().count, 1u);
  EXPECT_DOUBLE_EQ(r.transfers[static_cast<int>(model::MemcpyKind::kDtoH)].bandwidth_gbps, 0.0);

  EXPECT_EQ(r.allocations.malloc_calls, 2u);
  EXPECT_EQ(r.allocations.slow_calls, 1u);
  EXPECT_EQ(r.communication_ns, 100);
  EXPECT_DOUBLE_EQ(r.comm_compute_overlap_pct, 40.0);

  ASSERT_EQ(r.timeline.bins.size(), 2u);
  EXPECT_EQ(r.timeline.bin_ns, 500);
  EXPECT_EQ(r.timeline.bins[1].start_ns, 500);
  EXPECT_DOUBLE_EQ(r.timeline.bins[0].busy_pct, 80.0);
  EXPECT_EQ(r.timeline.bins[0].category_ns[0], 200);
}

TEST(AnalysisTest, IdleGapSharesAreOfTheStreamIdleNotTheDeviceIdle) {
  // Two streams idle at the same moments: their gaps sum to twice the device's 400 ns idle time.
  // Each kind's share is of that stream idle, so the shares partition it and none passes 100%.
  model::DeviceProfile d = testing::MakeDevice(0, 600, 450);
  d.idle_gaps.host_wait.Add(300);
  d.idle_gaps.kernel_wait.Add(80);
  d.idle_gaps.other.Add(20);
  const RankAnalysis r = AnalyzeDevice(d, AnalysisOptions{});
  ASSERT_EQ(r.temporal.idle_ns, 400);
  EXPECT_EQ(StreamIdleNs(r.idle_gaps), 800);
  EXPECT_DOUBLE_EQ(r.idle_gaps[0].pct, 75.0);  // 600 of 800, not 600 of 400
  EXPECT_DOUBLE_EQ(r.idle_gaps[1].pct, 20.0);
  EXPECT_DOUBLE_EQ(r.idle_gaps[2].pct, 5.0);

  // The job summary sums the ranks' gaps and divides by the summed stream idle.
  model::ProfileWindow w1 = testing::MakeWindow(10, 0, 600, 450);
  w1.processes[0].devices[0] = d;
  const model::ProfileWindow w2 = testing::MakeWindow(20, 1, 600, 450);
  const Analysis a =
      Analyze({{"a.json", "kineto_json", &w1}, {"b.json", "kineto_json", &w2}}, AnalysisOptions{});
  EXPECT_EQ(a.summary.temporal.idle_ns, 800);
  EXPECT_EQ(StreamIdleNs(a.summary.idle_gaps), 1200);
  EXPECT_DOUBLE_EQ(a.summary.idle_gaps[0].pct, 75.0);
}

TEST(AnalysisTest, EmptyDeviceHasNoNaNs) {
  model::DeviceProfile d;
  const RankAnalysis r = AnalyzeDevice(d, AnalysisOptions{});
  EXPECT_EQ(r.temporal.span_ns, 0);
  EXPECT_EQ(r.temporal.idle_pct, 0.0);
  EXPECT_EQ(r.comm_compute_overlap_pct, 0.0);
  EXPECT_EQ(r.other_kernels.count, 0u);
  for (const auto& c : r.categories) EXPECT_EQ(c.pct, 0.0);
}

TEST(AnalysisTest, RanksNumberingSummaryAndComparison) {
  model::ProfileWindow w1 =
      testing::MakeWindow(/*pid=*/10, /*rank=*/-1, /*busy=*/600, /*compute=*/450);
  model::ProfileWindow w2 = testing::MakeWindow(20, 0, 800, 700);
  model::ProfileWindow w3 = testing::MakeWindow(30, -1, 400, 200);
  w3.processes[0].data_quality[static_cast<int>(model::DataQuality::kLateRecord)] = 7;
  const Analysis a = Analyze({{"a.json", "kineto_json", &w1},
                              {"b.json", "kineto_json", &w2},
                              {"c.json", "kineto_json", &w3}},
                             AnalysisOptions{});
  ASSERT_EQ(a.ranks.size(), 3u);
  // Rank 0 is taken by b.json, so a.json (unknown rank) becomes 1 and c.json 2.
  EXPECT_EQ(a.ranks[0].rank, 0);
  EXPECT_EQ(a.ranks[0].pid, 20u);
  EXPECT_TRUE(a.ranks[0].rank_from_trace);
  EXPECT_EQ(a.ranks[1].rank, 1);
  EXPECT_EQ(a.ranks[1].pid, 10u);
  EXPECT_EQ(a.ranks[1].input_index, 0u);
  EXPECT_FALSE(a.ranks[1].rank_from_trace);
  EXPECT_EQ(a.ranks[2].rank, 2);

  EXPECT_EQ(a.summary.rank_count, 3u);
  EXPECT_EQ(a.summary.process_count, 3u);
  EXPECT_EQ(a.summary.temporal.busy_ns, 1800);
  EXPECT_EQ(a.summary.temporal.span_ns, 3000);
  EXPECT_DOUBLE_EQ(a.summary.temporal.busy_pct, 60.0);
  EXPECT_EQ(a.summary.span_ns, 1000);
  EXPECT_EQ(a.summary.data_quality[static_cast<int>(model::DataQuality::kLateRecord)].second, 7u);
  ASSERT_FALSE(a.summary.top_kernels.empty());
  EXPECT_EQ(a.summary.top_kernels[0].count, 9u);  // merged over three ranks
  EXPECT_EQ(a.summary.top_kernels[0].total_ns, 900);

  // busy: 800, 600, 400 -> mean 600, imbalance (800 - 400) / 600.
  EXPECT_EQ(a.comparison.busy.max_ns, 800);
  EXPECT_EQ(a.comparison.busy.min_ns, 400);
  EXPECT_EQ(a.comparison.busy.max_rank, 0);
  EXPECT_EQ(a.comparison.busy.min_rank, 2);
  EXPECT_DOUBLE_EQ(a.comparison.busy.imbalance, 400.0 / 600.0);
  EXPECT_DOUBLE_EQ(a.comparison.communication.imbalance, 0.0);  // all 100
  EXPECT_EQ(a.comparison.straggler_rank, 0);
  EXPECT_EQ(a.comparison.straggler_excess_compute_ns, 700 - 450);
}

TEST(AnalysisTest, BalancedRanksHaveNoStraggler) {
  model::ProfileWindow w1 = testing::MakeWindow(1, 0, 600, 450);
  model::ProfileWindow w2 = testing::MakeWindow(2, 1, 600, 460);  // 2% more compute
  const Analysis a = Analyze({{"a", "kineto_json", &w1}, {"b", "kineto_json", &w2}}, {});
  EXPECT_EQ(a.comparison.straggler_rank, -1);
  EXPECT_EQ(a.comparison.compute.max_rank, 1);
}

TEST(AnalysisTest, SingleRankHasNoStraggler) {
  model::ProfileWindow w = testing::MakeWindow(1, 3, 600, 450);
  const Analysis a = Analyze({{"a.json", "kineto_json", &w}}, AnalysisOptions{});
  ASSERT_EQ(a.ranks.size(), 1u);
  EXPECT_EQ(a.ranks[0].rank, 3);
  EXPECT_EQ(a.comparison.straggler_rank, -1);
}

}  // namespace
}  // namespace inferscope::analyze
