// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Launch configurations in the Aggregator's windows (AggregatorOptions::launch_configs) and their
// merge across windows (model::MergeLaunchConfigs through model::MergeWindow).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/aggregate/device_state.h"
#include "src/model/profile_merge.h"

namespace inferscope::aggregate {
namespace {

constexpr const char* kGemm = "ampere_sgemm_128x64_tn";
constexpr const char* kNorm = "void vllm::rms_norm_kernel<c10::BFloat16, 8, 3>(c10::BFloat16*)";

class LaunchConfigTest : public ::testing::Test {
 protected:
  model::KernelEvent Kernel(const char* name, int64_t start, int64_t end, int32_t grid_x,
                            int32_t block_x = 128) {
    model::KernelEvent k;
    k.pid = 1;
    k.stream = 7;
    k.start_ns = start;
    k.end_ns = end;
    k.name = names_.Intern(name);
    k.grid[0] = grid_x;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = block_x;
    k.block[1] = k.block[2] = 1;
    return k;
  }
  model::KernelResourcesEvent Resources(const char* name, int32_t regs, int32_t static_shared,
                                        int32_t dynamic_shared) {
    model::KernelResourcesEvent r;
    r.pid = 1;
    r.name = names_.Intern(name);
    r.resources = {regs, static_shared, dynamic_shared, static_shared + dynamic_shared};
    return r;
  }
  static AggregatorOptions On() {
    AggregatorOptions o;
    o.launch_configs = true;
    return o;
  }
  model::ProfileWindow Whole(const std::function<void(model::EventSink*)>& feed,
                             AggregatorOptions options) {
    return AggregateWholeTrace(options, &names_, &classifier_, feed);
  }
  static const model::KernelStats& Row(const model::ProfileWindow& w, const std::string& name) {
    for (const model::KernelStats& k : w.processes.at(0).devices.at(0).top_kernels)
      if (k.name == name) return k;
    ADD_FAILURE() << "no row " << name;
    static const model::KernelStats kNone;
    return kNone;
  }

  model::NameTable names_;
  model::KernelClassifier classifier_;
};

TEST_F(LaunchConfigTest, CountsPerConfigurationWithTheResourcesAnnouncedBeforeEachKernel) {
  auto feed = [&](model::EventSink* s) {
    s->OnKernelResources(Resources(kGemm, 128, 1024, 0));
    s->OnKernel(Kernel(kGemm, 5'000, 5'100, 108));  // delivered first, runs late
    s->OnKernel(Kernel(kGemm, 1'000, 1'100, 108));
    s->OnKernel(Kernel(kGemm, 2'000, 2'150, 216));
    s->OnKernel(Kernel(kNorm, 2'500, 2'510, 1, 256));  // no resources announced: -1
    // The same grid and block with another dynamic shared-memory size: another configuration.
    // It applies to the kernels delivered after it, even one that started before the others.
    s->OnKernelResources(Resources(kGemm, 128, 1024, 49152));
    s->OnKernel(Kernel(kGemm, 500, 520, 108));
    s->OnKernel(Kernel(kGemm, 3'000, 3'100, 108));
  };
  const model::ProfileWindow w = Whole(feed, On());
  const model::KernelStats& gemm = Row(w, kGemm);
  EXPECT_EQ(gemm.distinct_configs, 3u);
  ASSERT_EQ(gemm.configs.size(), 3u);
  // Most launches first; equal counts: more time first.
  EXPECT_EQ(gemm.configs[0].count, 2u);
  EXPECT_EQ(gemm.configs[0].total_ns, 200);
  EXPECT_EQ(gemm.configs[0].grid, (std::array<int32_t, 3>{108, 1, 1}));
  EXPECT_EQ(gemm.configs[0].block, (std::array<int32_t, 3>{128, 1, 1}));
  EXPECT_EQ(gemm.configs[0].registers_per_thread, 128);
  EXPECT_EQ(gemm.configs[0].static_shared_bytes, 1024);
  EXPECT_EQ(gemm.configs[0].dynamic_shared_bytes, 0);
  EXPECT_EQ(gemm.configs[0].shared_bytes, 1024);
  EXPECT_EQ(gemm.configs[1].count, 2u);
  EXPECT_EQ(gemm.configs[1].total_ns, 120);
  EXPECT_EQ(gemm.configs[1].grid[0], 108);
  EXPECT_EQ(gemm.configs[1].dynamic_shared_bytes, 49152);
  EXPECT_EQ(gemm.configs[1].shared_bytes, 50176);
  EXPECT_EQ(gemm.configs[2].grid[0], 216);
  EXPECT_EQ(gemm.configs[2].count, 1u);
  const model::KernelStats& norm = Row(w, kNorm);
  ASSERT_EQ(norm.configs.size(), 1u);
  EXPECT_EQ(norm.configs[0].block[0], 256);
  EXPECT_EQ(norm.configs[0].registers_per_thread, -1);
  EXPECT_EQ(norm.configs[0].shared_bytes, -1);
  EXPECT_EQ(norm.distinct_configs, 1u);

  // Off (the offline default): no configurations, and nothing else changes.
  model::ProfileWindow off = Whole(feed, AggregatorOptions{});
  EXPECT_TRUE(Row(off, kGemm).configs.empty());
  EXPECT_EQ(Row(off, kGemm).distinct_configs, 0u);
  model::ProfileWindow stripped = w;
  for (model::KernelStats& k : stripped.processes[0].devices[0].top_kernels) {
    k.configs.clear();
    k.distinct_configs = 0;
  }
  EXPECT_EQ(stripped, off);
}

TEST_F(LaunchConfigTest, TopRowsOnlyAndGraphKernelsStillCounted) {
  AggregatorOptions options = On();
  options.top_k = 1;
  auto feed = [&](model::EventSink* s) {
    model::KernelEvent g = Kernel(kGemm, 1'000, 2'000, 64);
    g.graph_id = 0xffffffffu;  // every bit set: the graph flag must survive the queue
    s->OnKernel(g);
    s->OnKernel(Kernel(kNorm, 3'000, 3'010, 1));
    // A graph launch's estimated kernel (no CUPTI record: grid 0) counts no configuration.
    model::KernelEvent estimated = Kernel(kGemm, 4'000, 4'100, 0);
    estimated.graph_id = 9;
    s->OnKernel(estimated);
  };
  const model::ProfileWindow w = Whole(feed, options);
  const model::DeviceProfile& d = w.processes.at(0).devices.at(0);
  ASSERT_EQ(d.top_kernels.size(), 1u);
  ASSERT_EQ(d.top_kernels[0].configs.size(), 1u);
  EXPECT_EQ(d.top_kernels[0].configs[0].count, 1u);
  EXPECT_EQ(d.top_kernels[0].distinct_configs, 1u);
  EXPECT_EQ(d.top_kernels[0].duration.count, 2u);
  EXPECT_TRUE(d.tail.configs.empty());  // the tail row lists none
  EXPECT_EQ(d.tail.distinct_configs, 0u);
  EXPECT_EQ(d.launch.kernels_from_graphs, 2u);
  EXPECT_EQ(Whole(feed, AggregatorOptions{}).processes[0].devices[0].launch.kernels_from_graphs,
            2u);
}

TEST_F(LaunchConfigTest, BoundedSlotsKeepTheFrequentConfigurations) {
  // One configuration run 100 times, interleaved with 40 others run once each (more than the
  // kConfigSlots slots): the frequent one is kept with its exact count, the listed ones are at
  // most kMaxLaunchConfigs, and distinct counts every configuration first seen (exact here: none
  // comes back after its eviction).
  auto feed = [&](model::EventSink* s) {
    int64_t t = 1'000;
    for (int i = 0; i < 100; ++i) {
      s->OnKernel(Kernel(kGemm, t, t + 10, 7));
      t += 100;
      if (i < 40) {
        s->OnKernel(Kernel(kGemm, t, t + 10, 1000 + i));
        t += 100;
      }
    }
  };
  const model::ProfileWindow w = Whole(feed, On());
  const model::KernelStats& k = Row(w, kGemm);
  EXPECT_EQ(k.distinct_configs, 41u);
  ASSERT_EQ(k.configs.size(), model::kMaxLaunchConfigs);
  EXPECT_EQ(k.configs[0].grid[0], 7);
  EXPECT_EQ(k.configs[0].count, 100u);
  EXPECT_EQ(k.configs[0].total_ns, 1000);
  // The others are Space-Saving estimates: each at least its own launch, never more than the
  // launches of the configurations it replaced.
  uint64_t listed = 0;
  for (const model::LaunchConfig& c : k.configs) listed += c.count;
  EXPECT_LE(listed, 140u);

  // A configuration evicted and seen again counts twice: an upper bound.
  auto churn = [&](model::EventSink* s) {
    int64_t t = 1'000;
    for (int round = 0; round < 2; ++round)
      for (int i = 0; i < static_cast<int>(kConfigSlots) + 1; ++i) {
        s->OnKernel(Kernel(kGemm, t, t + 10, 1 + i));
        t += 100;
      }
  };
  const model::ProfileWindow churned = Whole(churn, On());
  const model::KernelStats& c = Row(churned, kGemm);
  EXPECT_GE(c.distinct_configs, kConfigSlots + 1);
  EXPECT_LE(c.distinct_configs, 2 * (kConfigSlots + 1));
}

TEST_F(LaunchConfigTest, WindowsCountTheirOwnAndMergeBack) {
  AggregatorOptions options = On();
  options.window_ns = 1'000'000;
  options.lateness_ns = 0;
  std::vector<model::ProfileWindow> windows;
  Aggregator a(options, &names_, &classifier_,
               [&](model::ProfileWindow&& w) { windows.push_back(std::move(w)); });
  a.OnKernelResources(Resources(kGemm, 96, 0, 0));
  for (int i = 0; i < 6; ++i)  // grids 1, 2, 3 in the first window; 1, 2, 4 in the second
    a.OnKernel(Kernel(kGemm, 100'000 + i * 100'000, 100'000 + i * 100'000 + 50, 1 + i % 3));
  for (int i = 0; i < 6; ++i)
    a.OnKernel(Kernel(kGemm, 1'100'000 + i * 100'000, 1'100'000 + i * 100'000 + 10,
                      i % 3 == 2 ? 4 : 1 + i % 3));
  a.Finish();
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(Row(windows[0], kGemm).distinct_configs, 3u);
  EXPECT_EQ(Row(windows[1], kGemm).distinct_configs, 3u);
  ASSERT_EQ(Row(windows[1], kGemm).configs.size(), 3u);
  EXPECT_EQ(Row(windows[1], kGemm).configs[0].total_ns, 20);  // reset between windows

  // Merged: grids 1 and 2 join (4 launches each), 3 and 4 stay apart; every window listed all
  // its configurations, so distinct is exact.
  model::ProfileWindow merged;
  for (const model::ProfileWindow& w : windows) model::MergeWindow(w, &merged);
  const model::KernelStats& m = Row(merged, kGemm);
  EXPECT_EQ(m.distinct_configs, 4u);
  ASSERT_EQ(m.configs.size(), 4u);
  EXPECT_EQ(m.configs[0].grid[0], 1);
  EXPECT_EQ(m.configs[0].count, 4u);
  EXPECT_EQ(m.configs[0].total_ns, 2 * 50 + 2 * 10);
  EXPECT_EQ(m.configs[1].grid[0], 2);
  EXPECT_EQ(m.configs[2].grid[0], 3);  // 2 launches of 50 ns before 2 of 10
  EXPECT_EQ(m.configs[3].grid[0], 4);
  EXPECT_EQ(m.configs[3].registers_per_thread, 96);
}

TEST(MergeLaunchConfigsTest, UpperBoundWhenAWindowListedFewer) {
  auto config = [](int32_t grid, uint64_t count) {
    model::LaunchConfig c;
    c.grid = {grid, 1, 1};
    c.count = count;
    c.total_ns = static_cast<int64_t>(count) * 10;
    return c;
  };
  std::vector<model::LaunchConfig> into = {config(1, 10), config(2, 5)};
  uint64_t distinct = 2;
  // The other window saw 6 configurations and listed 4: grid 2 joins, the 2 unlisted ones may be
  // any, so distinct is at most 2 + 3 new listed + 2 unlisted.
  model::MergeLaunchConfigs({config(2, 7), config(3, 6), config(4, 4), config(5, 1)}, 6, &into,
                            &distinct, model::kMaxLaunchConfigs);
  EXPECT_EQ(distinct, 7u);
  ASSERT_EQ(into.size(), model::kMaxLaunchConfigs);
  EXPECT_EQ(into[0].grid[0], 2);
  EXPECT_EQ(into[0].count, 12u);
  EXPECT_EQ(into[1].grid[0], 1);
  EXPECT_EQ(into[2].grid[0], 3);
  EXPECT_EQ(into[3].grid[0], 4);
  // Merging nothing changes nothing; a row from a window without configurations (an older
  // library) adds none.
  const auto before = into;
  model::MergeLaunchConfigs({}, 0, &into, &distinct);
  EXPECT_EQ(into, before);
  EXPECT_EQ(distinct, 7u);
}

TEST(MergeLaunchConfigsTest, AMergeKeepsMoreThanARowListsSoRotatingListsStayExact) {
  // Windows of 4 configurations each, rotating through 10 (as a GEMM's grid follows the batch):
  // keeping only 4 across the merge would drop one, meet it again and count it twice.
  std::vector<model::LaunchConfig> into;
  uint64_t distinct = 0;
  for (int w = 0; w < 10; ++w) {
    std::vector<model::LaunchConfig> window;
    for (int i = 0; i < 4; ++i) {
      model::LaunchConfig& c = window.emplace_back();
      c.grid = {1 + (w + i) % 10, 1, 1};
      c.count = 10;
      c.total_ns = 100;
    }
    model::MergeLaunchConfigs(window, 4, &into, &distinct);
  }
  EXPECT_EQ(distinct, 10u);
  ASSERT_EQ(into.size(), 10u);
  for (const model::LaunchConfig& c : into) EXPECT_EQ(c.count, 40u);
}

}  // namespace
}  // namespace inferscope::aggregate
