// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/graph_attribution.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace inferscope::inject {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kWindow = 1'000'000'000;

// A decode graph of four kernels on one stream, as CUDA would run each launch: RMSNorm, a GEMM,
// attention, an all-reduce, with small gaps between nodes.
struct Node {
  const char* name;
  int64_t duration_ns;
};
const std::vector<Node> kGraph = {
    {"void vllm::rms_norm_kernel<c10::BFloat16, 8>(...)", 10 * kUs},
    {"nvjet_tst_128x256_64x4_2x1_v_bz_coopB_TNT", 50 * kUs},
    {"void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<"
     "128, 64, 128, 4, false>, true>(Flash_fwd_params)",
     30 * kUs},
    {"void vllm::cross_device_reduce_1stage<c10::BFloat16, 2>(...)", 8 * kUs}};
constexpr int64_t kGap = 2 * kUs;

class GraphAttributionTest : public testing::Test {
 protected:
  GraphAttributionTest() : graphs_(42, kWindow, &names_, &classifier_) {}

  // Node records of one launch starting at `start` (correlation `corr`); returns its end.
  int64_t LaunchNodes(int64_t start, uint32_t corr, uint32_t graph_id = 7) {
    int64_t t = start;
    for (const Node& n : kGraph) {
      model::KernelEvent k;
      k.pid = 42;
      k.device = 0;
      k.stream = 3;
      k.correlation_id = corr;
      k.graph_id = graph_id;
      k.name = names_.Intern(n.name);
      k.start_ns = t;
      k.end_ns = t + n.duration_ns;
      graphs_.OnNodeKernel(k);
      t = k.end_ns + kGap;
    }
    return t - kGap;
  }

  model::KernelEvent Launch(int64_t start, int64_t end, uint32_t corr, uint32_t graph_id = 7) {
    model::KernelEvent e;
    e.pid = 42;
    e.device = 0;
    e.stream = 3;
    e.correlation_id = corr;
    e.graph_id = graph_id;
    e.start_ns = start;
    e.end_ns = end;
    return e;
  }

  model::NameTable names_;
  model::KernelClassifier classifier_;
  GraphAttribution graphs_;
};

TEST_F(GraphAttributionTest, ALaunchIsSplitByTheSharesASampleMeasured) {
  graphs_.BeginSample(0);
  int64_t t = 1'000'000;
  for (uint32_t c = 1; c <= 5; ++c) t = LaunchNodes(t, c) + 100 * kUs;
  graphs_.EndSample(t);
  ASSERT_EQ(graphs_.graphs_known(), 1u);

  // A later launch traced as one record, twice as long (a bigger batch): each kernel gets its
  // share of the span, in order, inside the span.
  const int64_t span = 2 * (98 * kUs + 3 * kGap);
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs_.OnGraphLaunch(Launch(10'000'000, 10'000'000 + span, 99), &est));
  ASSERT_EQ(est.size(), kGraph.size());
  int64_t total = 0;
  for (size_t i = 0; i < est.size(); ++i) {
    EXPECT_EQ(names_.Get(est[i].name), kGraph[i].name);
    EXPECT_EQ(est[i].end_ns - est[i].start_ns, 2 * kGraph[i].duration_ns) << i;
    EXPECT_GE(est[i].start_ns, 10'000'000);
    EXPECT_LE(est[i].end_ns, 10'000'000 + span);
    EXPECT_EQ(est[i].correlation_id, 99u);
    total += est[i].end_ns - est[i].start_ns;
  }
  EXPECT_EQ(total, 2 * 98 * kUs);

  model::ProfileWindow w;
  w.start_ns = 0;
  w.processes.resize(1);
  w.processes[0].pid = 42;
  w.processes[0].devices.resize(1);
  graphs_.FillWindow(&w);
  const model::CudaGraphStats& g = w.processes[0].devices[0].graphs;
  EXPECT_EQ(g.launches, 6u);  // 5 measured + 1 estimated
  EXPECT_EQ(g.estimated_ns, span);
  EXPECT_EQ(g.measured_ns, 5 * (98 * kUs + 3 * kGap));
  EXPECT_EQ(g.launch_ns, g.estimated_ns + g.measured_ns);
  EXPECT_EQ(g.unattributed_ns, 0);
  EXPECT_EQ(g.max_share_age_ns, 10'000'000 - t);
}

TEST_F(GraphAttributionTest, AGraphNeverSampledIsUnattributed) {
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs_.OnGraphLaunch(Launch(1000, 5000, 1), &est));
  EXPECT_TRUE(est.empty());  // the caller emits the pseudo-kernel
  model::ProfileWindow w;
  w.processes.resize(1);
  w.processes[0].pid = 42;
  w.processes[0].devices.resize(1);
  graphs_.FillWindow(&w);
  EXPECT_EQ(w.processes[0].devices[0].graphs.unattributed_ns, 4000);
}

TEST_F(GraphAttributionTest, ALaunchSeenNodeByNodeIsNotCountedAgain) {
  graphs_.BeginSample(0);
  const int64_t end = LaunchNodes(1'000'000, 5);
  graphs_.EndSample(end);
  std::vector<model::KernelEvent> est;
  EXPECT_FALSE(graphs_.OnGraphLaunch(Launch(1'000'000, end, 5), &est));
}

// Each sample checks the shares the previous one left: a graph whose GEMM doubled in length
// shows the error in percentage points of graph time.
TEST_F(GraphAttributionTest, EachSampleChecksTheEarlierEstimate) {
  graphs_.BeginSample(0);
  int64_t t = 0;
  for (uint32_t c = 1; c <= 4; ++c) t = LaunchNodes(t, c) + kUs;
  graphs_.EndSample(t);
  // Same graph, same kernels: the check finds no error.
  graphs_.BeginSample(t);
  for (uint32_t c = 5; c <= 8; ++c) t = LaunchNodes(t, c) + kUs;
  graphs_.EndSample(t);
  model::ProfileWindow w;
  w.start_ns = t;
  w.processes.resize(1);
  w.processes[0].pid = 42;
  w.processes[0].devices.resize(1);
  graphs_.FillWindow(&w);
  const model::CudaGraphStats& g = w.processes[0].devices[0].graphs;
  EXPECT_EQ(g.checks, 1u);
  EXPECT_EQ(g.max_error_bp, 0u);
}

TEST_F(GraphAttributionTest, ParallelBranchesStayInsideTheLaunch) {
  // Two branches of 60 us each in a 70 us launch: shares add up to more than 1.
  graphs_.BeginSample(0);
  for (uint32_t c = 1; c <= 2; ++c) {
    for (const char* name : {"branch_a_kernel", "branch_b_kernel"}) {
      model::KernelEvent k;
      k.pid = 42;
      k.correlation_id = c;
      k.graph_id = 9;
      k.name = names_.Intern(name);
      k.start_ns = c * 1'000'000 + (name[7] == 'a' ? 0 : 10 * kUs);
      k.end_ns = k.start_ns + 60 * kUs;
      graphs_.OnNodeKernel(k);
    }
  }
  graphs_.EndSample(3'000'000);
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs_.OnGraphLaunch(Launch(5'000'000, 5'000'000 + 70 * kUs, 3, 9), &est));
  ASSERT_EQ(est.size(), 2u);
  for (const model::KernelEvent& k : est) {
    EXPECT_EQ(k.end_ns - k.start_ns, 60 * kUs);
    EXPECT_GE(k.start_ns, 5'000'000);
    EXPECT_LE(k.end_ns, 5'000'000 + 70 * kUs);
  }
}

}  // namespace
}  // namespace inferscope::inject

namespace inferscope::inject {
namespace {

// A kernel that runs several times in a launch (a norm per layer) becomes one estimated kernel
// holding all its time: the category split is the measured one, never counted twice.
TEST(GraphAttributionRecurringTest, RecurringNamesAreOneEstimatedKernelWithAllTheirTime) {
  model::NameTable names;
  model::KernelClassifier classifier;
  GraphAttribution graphs(1, 1'000'000'000, &names, &classifier);
  const model::NameId norm = names.Intern("void vllm::rms_norm_kernel<c10::BFloat16, 8>(...)");
  const model::NameId gemm = names.Intern("nvjet_tst_128x256_64x4_2x1_v_bz_coopB_TNT");
  graphs.BeginSample(0);
  int64_t t = 1000;
  for (model::NameId n : {norm, gemm, norm, gemm, norm}) {
    model::KernelEvent k;
    k.pid = 1;
    k.correlation_id = 5;
    k.graph_id = 3;
    k.name = n;
    k.start_ns = t;
    k.end_ns = t + (n == norm ? 10 : 40);
    graphs.OnNodeKernel(k);
    t = k.end_ns;
  }
  graphs.EndSample(t);
  model::KernelEvent launch;
  launch.pid = 1;
  launch.graph_id = 3;
  launch.correlation_id = 6;
  launch.start_ns = 10'000;
  launch.end_ns = 10'000 + (t - 1000);
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs.OnGraphLaunch(launch, &est));
  ASSERT_EQ(est.size(), 2u);
  EXPECT_EQ(est[0].name, norm);
  EXPECT_EQ(est[0].end_ns - est[0].start_ns, 30);
  EXPECT_EQ(est[1].name, gemm);
  EXPECT_EQ(est[1].end_ns - est[1].start_ns, 80);
}

}  // namespace
}  // namespace inferscope::inject

namespace inferscope::inject {
namespace {

// A graph with conditional nodes runs different bodies per launch: neither an old sample's shares
// nor its capture may be used; only samples measure it.
TEST(GraphAttributionUnstableTest, ConditionalGraphsAreNotEstimated) {
  model::NameTable names;
  model::KernelClassifier classifier;
  GraphAttribution graphs(1, 1'000'000'000, &names, &classifier);
  graphs.SetComposition(4, {names.Intern("nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT")},
                        /*unstable=*/true);
  graphs.BeginSample(0);
  model::KernelEvent k;
  k.pid = 1;
  k.correlation_id = 1;
  k.graph_id = 4;
  k.name = names.Intern("nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT");
  k.start_ns = 100;
  k.end_ns = 900;
  graphs.OnNodeKernel(k);
  graphs.EndSample(1000);
  model::KernelEvent launch = k;
  launch.correlation_id = 2;
  launch.start_ns = 5000;
  launch.end_ns = 6000;
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs.OnGraphLaunch(launch, &est));
  EXPECT_TRUE(est.empty());  // the pseudo-kernel: unattributed
  model::ProfileWindow w;
  w.processes.resize(1);
  w.processes[0].pid = 1;
  w.processes[0].devices.resize(1);
  graphs.FillWindow(&w);
  EXPECT_EQ(w.processes[0].devices[0].graphs.unattributed_ns, 1000);
  EXPECT_EQ(w.processes[0].devices[0].graphs.measured_ns, 800);
}

}  // namespace
}  // namespace inferscope::inject

namespace inferscope::inject {
namespace {

// A graph not sampled yet, split by what its captured kernels are known to take.
class CaptureSplitTest : public testing::Test {
 protected:
  CaptureSplitTest() : graphs_(1, 1'000'000'000, &names_, &classifier_) {}

  model::KernelEvent Kernel(model::NameId name, int64_t start, int64_t duration, int32_t grid = 0) {
    model::KernelEvent k;
    k.pid = 1;
    k.name = name;
    k.start_ns = start;
    k.end_ns = start + duration;
    k.grid[0] = grid;
    k.block[0] = grid > 0 ? 128 : 0;
    return k;
  }
  model::KernelEvent Launch(uint32_t graph_id, int64_t start, int64_t end) {
    model::KernelEvent e;
    e.pid = 1;
    e.graph_id = graph_id;
    e.correlation_id = 100 + graph_id;
    e.start_ns = start;
    e.end_ns = end;
    return e;
  }
  model::CudaGraphStats Stats() {
    model::ProfileWindow w;
    w.processes.resize(1);
    w.processes[0].pid = 1;
    w.processes[0].devices.resize(1);
    graphs_.FillWindow(&w);
    return w.processes[0].devices[0].graphs;
  }

  model::NameTable names_;
  model::KernelClassifier classifier_;
  GraphAttribution graphs_;
  const model::NameId gemm_ = names_.Intern("nvjet_tst_128x256_64x4_2x1_v_bz_coopB_TNT");
  const model::NameId norm_ = names_.Intern("void vllm::rms_norm_kernel<c10::BFloat16, 8>(...)");
  const model::NameId attn_ = names_.Intern("void flash::flash_fwd_splitkv_kernel<>(...)");
};

TEST_F(CaptureSplitTest, EagerDurationsWeighTheCapturedKernels) {
  // Captured at start-up, then the same kernels seen eagerly (a prefill): the GEMM takes 90 us,
  // the norm 10 us.
  graphs_.SetComposition(5, std::vector<model::NameId>{gemm_, norm_});
  for (int i = 0; i < 3; ++i) {
    graphs_.OnEagerKernel(Kernel(gemm_, 1000 * i, 90 * kUs));
    graphs_.OnEagerKernel(Kernel(norm_, 1000 * i + 500, 10 * kUs));
  }
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs_.OnGraphLaunch(Launch(5, 1'000'000, 1'000'000 + 100 * kUs), &est));
  ASSERT_EQ(est.size(), 2u);
  EXPECT_EQ(est[0].name, gemm_);
  EXPECT_EQ(est[0].start_ns, 1'000'000);
  EXPECT_EQ(est[0].end_ns - est[0].start_ns, 90 * kUs);
  EXPECT_EQ(est[1].name, norm_);
  EXPECT_EQ(est[1].start_ns, est[0].end_ns);
  EXPECT_EQ(est[1].end_ns, 1'000'000 + 100 * kUs);
  const model::CudaGraphStats g = Stats();
  EXPECT_EQ(g.composition_ns, 100 * kUs);
  EXPECT_EQ(g.composition_timed_ns, 100 * kUs);  // all of it by duration, none by count
}

TEST_F(CaptureSplitTest, NothingKnownIsSplitByCount) {
  graphs_.SetComposition(5, std::vector<model::NameId>{gemm_, norm_});
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs_.OnGraphLaunch(Launch(5, 0, 100 * kUs), &est));
  ASSERT_EQ(est.size(), 2u);
  EXPECT_EQ(est[0].end_ns - est[0].start_ns, 50 * kUs);
  EXPECT_EQ(est[1].end_ns - est[1].start_ns, 50 * kUs);
  const model::CudaGraphStats g = Stats();
  EXPECT_EQ(g.composition_ns, 100 * kUs);
  EXPECT_EQ(g.composition_timed_ns, 0);
}

TEST_F(CaptureSplitTest, AnotherGraphsSampleWeighsTheNodesAndUnknownOnesTakeTheMean) {
  // Graph 8's sample measured the GEMM at 60 us and the norm at 20 us.
  graphs_.BeginSample(0);
  model::KernelEvent k = Kernel(gemm_, 1000, 60 * kUs);
  k.graph_id = 8;
  k.correlation_id = 1;
  graphs_.OnNodeKernel(k);
  k = Kernel(norm_, 1000 + 60 * kUs, 20 * kUs);
  k.graph_id = 8;
  k.correlation_id = 1;
  graphs_.OnNodeKernel(k);
  graphs_.EndSample(200 * kUs);
  // Graph 9, never sampled: GEMM, norm and an attention kernel nothing measured (weighs 40 us).
  graphs_.SetComposition(9, std::vector<model::NameId>{gemm_, norm_, attn_});
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs_.OnGraphLaunch(Launch(9, 1'000'000, 1'000'000 + 240 * kUs), &est));
  ASSERT_EQ(est.size(), 3u);
  EXPECT_EQ(est[0].end_ns - est[0].start_ns, 120 * kUs);
  EXPECT_EQ(est[1].end_ns - est[1].start_ns, 40 * kUs);
  EXPECT_EQ(est[2].name, attn_);
  EXPECT_EQ(est[2].end_ns - est[2].start_ns, 80 * kUs);
  const model::CudaGraphStats g = Stats();
  EXPECT_EQ(g.composition_ns, 240 * kUs);
  EXPECT_EQ(g.composition_timed_ns, 160 * kUs);  // the GEMM and norm; the attention by count
}

TEST_F(CaptureSplitTest, TheCapturedConfigurationIsPreferredToTheName) {
  // One GEMM name at two grids: 80 us on 64 blocks, 10 us on 4.
  GraphAttribution::CapturedKernel small, norm;
  small.name = gemm_;
  small.grid[0] = 4;
  small.block[0] = 128;
  norm.name = norm_;
  norm.grid[0] = 4;
  norm.block[0] = 128;
  graphs_.SetCapturedKernels(5, {small, norm});
  graphs_.OnEagerKernel(Kernel(gemm_, 0, 80 * kUs, 64));
  graphs_.OnEagerKernel(Kernel(gemm_, 1000, 10 * kUs, 4));
  graphs_.OnEagerKernel(Kernel(norm_, 2000, 10 * kUs, 4));
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs_.OnGraphLaunch(Launch(5, 0, 20 * kUs), &est));
  ASSERT_EQ(est.size(), 2u);
  EXPECT_EQ(est[0].end_ns - est[0].start_ns, 10 * kUs);  // not the name's mean of 45 us
  EXPECT_EQ(est[1].end_ns - est[1].start_ns, 10 * kUs);
}

TEST_F(CaptureSplitTest, TheDurationTableIsBoundedAndCountsWhatItDrops) {
  graphs_.SetComposition(9, std::vector<model::NameId>{attn_});  // not sampled: eager is learned
  const size_t before = names_.size();                           // the fixture's names
  for (size_t i = before; i < GraphAttribution::kMaxDurations + 10; ++i)
    graphs_.OnEagerKernel(Kernel(names_.Intern("kernel_" + std::to_string(i)), 0, 1000));
  EXPECT_EQ(graphs_.durations_known(), GraphAttribution::kMaxDurations - before);
  EXPECT_EQ(graphs_.durations_dropped(), 10u);
  // A kernel already known is still learned when the table is full.
  graphs_.OnEagerKernel(Kernel(names_.Intern("kernel_100"), 0, 1000));
  EXPECT_EQ(graphs_.durations_dropped(), 10u);
  // Configurations per name are bounded too: the one seen least makes room for a new one. Grid g
  // takes g us and is seen g times: grids 1 and 2 are evicted by 5 and 6.
  for (int32_t grid = 1; grid <= 6; ++grid)
    for (int32_t n = 0; n < grid; ++n) graphs_.OnEagerKernel(Kernel(gemm_, 0, grid * kUs, grid));
  GraphAttribution::CapturedKernel six, one;
  six.name = one.name = gemm_;
  six.grid[0] = 6;
  one.grid[0] = 1;
  six.block[0] = one.block[0] = 128;
  graphs_.SetCapturedKernels(5, {six, one});  // the table is the same across graphs
  std::vector<model::KernelEvent> est;
  ASSERT_TRUE(graphs_.OnGraphLaunch(Launch(5, 0, 31 * kUs), &est));
  ASSERT_EQ(est.size(), 2u);
  // 6 us, and for grid 1 (forgotten) the name's mean, 91/21 us: 31 us split 18/13.
  EXPECT_EQ(est[0].end_ns - est[0].start_ns, 18 * kUs);
  EXPECT_EQ(est[1].end_ns - est[1].start_ns, 13 * kUs);
}

// Eager kernels cost nothing once every captured graph has shares: nothing would use them.
TEST_F(CaptureSplitTest, EagerKernelsAreLearnedOnlyWhileACapturedGraphIsNotSampled) {
  graphs_.OnEagerKernel(Kernel(gemm_, 0, 90 * kUs));  // no graph captured yet
  EXPECT_EQ(graphs_.durations_known(), 0u);
  graphs_.SetComposition(5, std::vector<model::NameId>{gemm_, norm_});
  graphs_.OnEagerKernel(Kernel(gemm_, 0, 90 * kUs));
  EXPECT_EQ(graphs_.durations_known(), 1u);
  graphs_.BeginSample(0);
  model::KernelEvent k = Kernel(norm_, 1000, 10 * kUs);
  k.graph_id = 5;
  k.correlation_id = 1;
  graphs_.OnNodeKernel(k);  // samples always teach
  graphs_.EndSample(100 * kUs);
  EXPECT_EQ(graphs_.durations_known(), 2u);
  graphs_.OnEagerKernel(Kernel(attn_, 0, 30 * kUs));  // graph 5 has shares now
  EXPECT_EQ(graphs_.durations_known(), 2u);
  graphs_.Forget(5);  // re-instantiated: its capture comes again, not sampled
  graphs_.SetComposition(5, std::vector<model::NameId>{gemm_, norm_, attn_});
  graphs_.OnEagerKernel(Kernel(attn_, 0, 30 * kUs));
  EXPECT_EQ(graphs_.durations_known(), 3u);
}

}  // namespace
}  // namespace inferscope::inject
