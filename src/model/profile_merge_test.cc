// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/profile_merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/import/trace_importer.h"
#include "tests/test_traces.h"

namespace inferscope::model {
namespace {

KernelStats Kernel(const std::string& name, int64_t each_ns, uint64_t count) {
  KernelStats k;
  k.name = name;
  k.category = Category::kMatmul;
  k.subcategory = "matmul.cublas";
  for (uint64_t i = 0; i < count; ++i) {
    k.duration.Add(each_ns);
    k.histogram.Add(each_ns);
  }
  return k;
}

ProfileWindow OneDevice(int64_t start, int64_t end, std::vector<KernelStats> kernels) {
  ProfileWindow w;
  w.start_ns = start;
  w.end_ns = end;
  ProcessProfile& p = w.processes.emplace_back();
  p.pid = 10;
  p.rank = 0;
  DeviceProfile& d = p.devices.emplace_back();
  d.first_start_ns = start + 1;
  d.last_end_ns = end - 1;
  d.busy_ns = 100;
  d.compute_ns = 60;
  d.kernel_count = 0;
  for (const KernelStats& k : kernels) d.kernel_count += k.duration.count;
  d.top_kernels = std::move(kernels);
  d.tail.name = "other";
  d.tail.subcategory = "other";
  d.tail.distinct_names = 0;
  d.categories[1] = {d.kernel_count, 50};
  d.subcategories["matmul.cublas"] = {d.kernel_count, 50};
  d.syncs[2].wait.Add(40);
  d.syncs[2].waited_on = {{"a", 1, 40}};
  d.memcpy[1] = {2, 1024, 30, 1};
  d.timeline.bin_ns = 10;
  d.timeline.origin_ns = start;
  d.timeline.busy_ns = {5, 0, 7};
  d.timeline.category_ns.resize(3);
  d.timeline.category_ns[0][1] = 5;
  d.timeline.category_ns[2][1] = 7;
  p.data_quality[1] = 1;
  return w;
}

TEST(ProfileMergeTest, SumsStatsAndKeepsTopKByTotal) {
  ProfileWindow merged;
  MergeWindow(OneDevice(1000, 1030, {Kernel("a", 10, 3), Kernel("b", 5, 1)}), &merged);
  MergeWindow(OneDevice(1030, 1060, {Kernel("c", 100, 1), Kernel("a", 10, 1)}), &merged,
              MergeOptions{.top_k = 2});
  ASSERT_EQ(merged.processes.size(), 1u);
  const DeviceProfile& d = merged.processes[0].devices.at(0);
  EXPECT_EQ(merged.start_ns, 1000);
  EXPECT_EQ(merged.end_ns, 1060);
  EXPECT_EQ(d.first_start_ns, 1001);
  EXPECT_EQ(d.last_end_ns, 1059);
  EXPECT_EQ(d.busy_ns, 200);
  EXPECT_EQ(d.idle_ns(), 58 - 200);  // hand-built numbers: busy is larger than the span here
  EXPECT_EQ(d.kernel_count, 6u);
  ASSERT_EQ(d.top_kernels.size(), 2u);
  EXPECT_EQ(d.top_kernels[0].name, "c");
  EXPECT_EQ(d.top_kernels[1].name, "a");
  EXPECT_EQ(d.top_kernels[1].duration.count, 4u);
  EXPECT_EQ(d.top_kernels[1].histogram.counts[3], 4u);
  EXPECT_EQ(d.tail.duration.count, 1u);  // "b" folded into the tail
  EXPECT_EQ(d.tail.distinct_names, 1u);
  EXPECT_EQ(d.categories[1].count, 6u);
  EXPECT_EQ(d.subcategories.at("matmul.cublas").time_ns, 100);
  EXPECT_EQ(d.syncs[2].wait.count, 2u);
  ASSERT_EQ(d.syncs[2].waited_on.size(), 1u);
  EXPECT_EQ(d.syncs[2].waited_on[0].count, 2u);
  EXPECT_EQ(d.syncs[2].waited_on[0].wait_ns, 80);
  EXPECT_EQ(d.memcpy[1].bytes, 2048u);
  EXPECT_EQ(merged.processes[0].data_quality[1], 2u);
  // Timelines on one grid: window 2 starts 3 bins after window 1.
  ASSERT_EQ(d.timeline.busy_ns.size(), 6u);
  EXPECT_EQ(d.timeline.busy_ns, (std::vector<int64_t>{5, 0, 7, 5, 0, 7}));
  EXPECT_EQ(d.timeline.category_ns[5][1], 7);
}

TEST(ProfileMergeTest, MatchesProcessesAndDevicesAndKeepsOrder) {
  ProfileWindow a = OneDevice(0, 30, {Kernel("a", 1, 1)});
  ProfileWindow b = OneDevice(30, 60, {Kernel("a", 1, 1)});
  b.processes[0].devices[0].device = 3;
  ProcessProfile other = b.processes[0];
  other.pid = 5;
  other.rank = -1;
  b.processes.insert(b.processes.begin(), other);
  ProfileWindow merged;
  MergeWindow(a, &merged);
  MergeWindow(b, &merged);
  ASSERT_EQ(merged.processes.size(), 2u);
  EXPECT_EQ(merged.processes[0].pid, 10u);  // rank 0 before the unknown rank
  ASSERT_EQ(merged.processes[0].devices.size(), 2u);
  EXPECT_EQ(merged.processes[0].devices[0].device, 0u);
  EXPECT_EQ(merged.processes[0].devices[1].device, 3u);
  EXPECT_EQ(merged.processes[1].pid, 5u);
}

TEST(ProfileMergeTest, RebinsProportionallyAndPreservesSums) {
  Timeline into;
  into.bin_ns = 100;
  into.origin_ns = 1000;
  into.busy_ns = {10};
  into.category_ns.resize(1);
  Timeline in;
  in.bin_ns = 30;  // finer and unaligned: bin [1090,1120) splits 10/20 across two target bins
  in.origin_ns = 1090;
  in.busy_ns = {30, 7};
  in.category_ns.resize(2);
  in.category_ns[0][4] = 30;
  in.category_ns[1][4] = 7;
  MergeTimeline(in, &into, 1000);
  ASSERT_EQ(into.busy_ns.size(), 2u);
  EXPECT_EQ(into.busy_ns[0], 20);  // 10 + 30 * 10/30
  EXPECT_EQ(into.busy_ns[1], 27);  // 30 * 20/30 + 7
  EXPECT_EQ(into.category_ns[0][4] + into.category_ns[1][4], 37);

  // An earlier, coarser input extends the grid backwards; sums are exact despite rounding.
  Timeline early;
  early.bin_ns = 300;
  early.origin_ns = 700;
  early.busy_ns = {301};
  early.category_ns.resize(1);
  MergeTimeline(early, &into, 1000);
  EXPECT_EQ(into.origin_ns, 700);
  EXPECT_EQ(std::accumulate(into.busy_ns.begin(), into.busy_ns.end(), int64_t{0}), 301 + 47);
  EXPECT_FALSE(into.truncated);

  // Beyond the bin limit: dropped and flagged.
  Timeline far = in;
  far.origin_ns = 1'000'000'000;
  MergeTimeline(far, &into, 1000);
  EXPECT_TRUE(into.truncated);
  EXPECT_LE(into.busy_ns.size(), 1000u);
}

TEST(ProfileMergeTest, TopKernelsMergeByNameWhateverTheirNumber) {
  // Small tables are matched by a scan, large ones (a big --top) through an index: both must add
  // the same names' stats and keep every other row.
  for (int n : {8, 60}) {
    std::vector<KernelStats> a, b;
    for (int i = 0; i < n; ++i) {
      a.push_back(Kernel("k" + std::to_string(i), 10, 1));
      b.push_back(Kernel("k" + std::to_string(i + n / 2), 10, 2));  // half the names shared
    }
    ProfileWindow into = OneDevice(0, 100, a);
    MergeOptions options;
    options.top_k = 1000;
    MergeWindow(OneDevice(100, 200, b), &into, options);
    const DeviceProfile& d = into.processes[0].devices[0];
    ASSERT_EQ(d.top_kernels.size(), static_cast<size_t>(n + n / 2)) << n;
    uint64_t calls = 0;
    for (const KernelStats& k : d.top_kernels) {
      calls += k.duration.count;
      const int i = std::stoi(k.name.substr(1));
      const uint64_t want = (i < n / 2 ? 1 : 0) + (i >= n / 2 && i < n ? 3 : 0) + (i >= n ? 2 : 0);
      EXPECT_EQ(k.duration.count, want) << k.name;
    }
    EXPECT_EQ(calls, static_cast<uint64_t>(3 * n)) << n;
  }
}

TEST(ProfileMergeTest, NestedBinsAddWholeAsTheProportionalSplitWould) {
  // Fine bins that nest in the grid take MergeTimeline's direct path; a fine bin is never split,
  // so each must land whole in bin floor((its start - origin) / width), by an independent count.
  for (int64_t offset : {-70, 0, 30, 990}) {  // in units of the fine bin (10)
    Timeline into;
    into.bin_ns = 100;
    into.origin_ns = 1000;
    into.busy_ns = {1, 0, 2};
    into.category_ns.resize(3);
    Timeline in;
    in.bin_ns = 10;
    in.origin_ns = 1000 + offset * 10;
    for (int i = 0; i < 37; ++i) {
      in.busy_ns.push_back(i % 5 == 0 ? 0 : 1000 + i);
      in.category_ns.push_back({});
      in.category_ns.back()[static_cast<size_t>(i % kCategoryCount)] = in.busy_ns.back() / 2;
    }
    Timeline got = into;
    MergeTimeline(in, &got, 50);
    // The reference: the grid extended backwards by whole bins, then each fine bin added whole.
    const int64_t back = in.origin_ns < 1000 ? (1000 - in.origin_ns + 99) / 100 : 0;
    std::vector<int64_t> busy(3 + static_cast<size_t>(back), 0);
    busy[static_cast<size_t>(back)] = 1;
    busy[static_cast<size_t>(back) + 2] = 2;
    bool truncated = false;
    for (size_t i = 0; i < in.busy_ns.size(); ++i) {
      if (in.busy_ns[i] == 0) continue;
      const int64_t bin = (in.origin_ns + static_cast<int64_t>(i) * 10 - (1000 - back * 100)) / 100;
      if (bin >= 50) {
        truncated = true;
        continue;
      }
      if (static_cast<size_t>(bin) >= busy.size()) busy.resize(static_cast<size_t>(bin) + 1, 0);
      busy[static_cast<size_t>(bin)] += in.busy_ns[i];
    }
    EXPECT_EQ(got.origin_ns, 1000 - back * 100) << offset;
    EXPECT_EQ(got.busy_ns, busy) << offset;
    EXPECT_EQ(got.truncated, truncated) << offset;
    int64_t categories = 0, want_categories = 0;
    for (const auto& bin : got.category_ns)
      categories = std::accumulate(bin.begin(), bin.end(), categories);
    for (size_t i = 0; i < in.busy_ns.size(); ++i)
      if (!truncated || (in.origin_ns + static_cast<int64_t>(i) * 10 - got.origin_ns) / 100 < 50)
        want_categories += in.busy_ns[i] / 2;
    EXPECT_EQ(categories, want_categories) << offset;
  }
}

// ---- Real traces: merging 1 s windows reproduces the whole-trace profile ----

std::vector<ProfileWindow> Aggregate(const std::string& path, int64_t window_ns) {
  NameTable names;
  KernelClassifier classifier;
  aggregate::AggregatorOptions options;
  options.window_ns = window_ns;
  std::vector<ProfileWindow> windows;
  aggregate::Aggregator aggregator(options, &names, &classifier,
                                   [&](ProfileWindow&& w) { windows.push_back(std::move(w)); });
  auto stats = import::ImportTrace(path, &names, &aggregator);
  EXPECT_TRUE(stats.ok()) << path << ": " << stats.status().message();
  aggregator.Finish();
  return windows;
}

struct Totals {
  uint64_t count = 0;
  int64_t time_ns = 0;
};
Totals KernelTotals(const DeviceProfile& d) {
  Totals t{d.tail.duration.count, d.tail.duration.total_ns};
  for (const KernelStats& k : d.top_kernels) {
    t.count += k.duration.count;
    t.time_ns += k.duration.total_ns;
  }
  return t;
}

TEST(ProfileMergeTraceTest, MergedOneSecondWindowsMatchWholeTrace) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  std::vector<std::string> traces;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(inferscope::testing::SharedTracesDir())) {
    const std::string p = e.path().string();
    if (p.ends_with(".json.gz") || p.ends_with(".sqlite")) traces.push_back(p);
  }
  std::sort(traces.begin(), traces.end());
  ASSERT_FALSE(traces.empty());
  for (const std::string& path : traces) {
    SCOPED_TRACE(path);
    const std::vector<ProfileWindow> whole_windows = Aggregate(path, 0);
    ASSERT_EQ(whole_windows.size(), 1u);
    const ProfileWindow& whole = whole_windows[0];
    // 1 s windows as asked; 100 ms windows too, since the traces are only a few seconds long,
    // and 37 ms ones, whose edges fall elsewhere in each step (live edges fall anywhere).
    for (const int64_t window_ns :
         {int64_t{1'000'000'000}, int64_t{100'000'000}, int64_t{37'000'000}}) {
      const std::vector<ProfileWindow> windows = Aggregate(path, window_ns);
      ProfileWindow merged;
      for (const ProfileWindow& w : windows) MergeWindow(w, &merged);

      for (const ProcessProfile& wp : whole.processes) {
        auto mp = std::find_if(merged.processes.begin(), merged.processes.end(),
                               [&](const ProcessProfile& p) { return p.pid == wp.pid; });
        ASSERT_NE(mp, merged.processes.end()) << "pid " << wp.pid;
        for (size_t q = 0; q < wp.data_quality.size(); ++q) {
          if (q == static_cast<size_t>(DataQuality::kLateRecord)) continue;  // windowed mode only
          EXPECT_EQ(mp->data_quality[q], wp.data_quality[q]) << kDataQualityNames[q];
        }
        for (const DeviceProfile& wd : wp.devices) {
          SCOPED_TRACE("pid " + std::to_string(wp.pid) + " device " + std::to_string(wd.device));
          auto md = std::find_if(mp->devices.begin(), mp->devices.end(),
                                 [&](const DeviceProfile& d) { return d.device == wd.device; });
          ASSERT_NE(md, mp->devices.end());
          EXPECT_EQ(md->kernel_count, wd.kernel_count);
          EXPECT_EQ(md->categories, wd.categories);
          EXPECT_EQ(md->subcategories, wd.subcategories);
          EXPECT_EQ(KernelTotals(*md).count, KernelTotals(wd).count);
          EXPECT_EQ(KernelTotals(*md).time_ns, KernelTotals(wd).time_ns);
          EXPECT_EQ(md->memcpy, wd.memcpy);
          EXPECT_EQ(md->memset, wd.memset);
          EXPECT_EQ(md->allocations, wd.allocations);
          EXPECT_EQ(md->launch, wd.launch);
          EXPECT_EQ(md->idle_gaps, wd.idle_gaps);
          // In one window every idle nanosecond between first and last activity has one cause.
          EXPECT_EQ(wd.idle_causes.total_ns(), wd.idle_ns());
          for (size_t s = 0; s < wd.syncs.size(); ++s)
            EXPECT_EQ(md->syncs[s].wait, wd.syncs[s].wait) << kSyncTypeNames[s];
          EXPECT_EQ(md->first_start_ns, wd.first_start_ns);
          EXPECT_EQ(md->last_end_ns, wd.last_end_ns);
          // Steps between host turns and their phase split are exact however edges cut them: a
          // step open at an edge is carried (also through idle windows) and the host-turn test
          // sees the device's latest end, also of an operation begun in an earlier window.
          EXPECT_EQ(md->steps, wd.steps);
          EXPECT_EQ(md->phases, wd.phases);

          // The boundary effect: an operation is counted in the window where it starts, so union
          // time past a window's end can be counted again by the next window.
          int64_t bound = 0;
          for (const ProfileWindow& w : windows) {
            for (const ProcessProfile& p : w.processes) {
              if (p.pid != wp.pid) continue;
              for (const DeviceProfile& d : p.devices)
                if (d.device == wd.device) bound += std::max<int64_t>(0, d.last_end_ns - w.end_ns);
            }
          }
          std::printf("%-60s %3zu windows  busy whole %12lld merged +%lld (bound %lld)\n",
                      path.substr(path.size() > 60 ? path.size() - 60 : 0).c_str(), windows.size(),
                      static_cast<long long>(wd.busy_ns),
                      static_cast<long long>(md->busy_ns - wd.busy_ns),
                      static_cast<long long>(bound));
          EXPECT_GE(md->busy_ns, wd.busy_ns);
          EXPECT_LE(md->busy_ns, wd.busy_ns + bound);
          EXPECT_GE(md->compute_ns, wd.compute_ns);
          EXPECT_LE(md->compute_ns, wd.compute_ns + bound);
          EXPECT_GE(md->communication_ns, wd.communication_ns);
          EXPECT_LE(md->communication_ns, wd.communication_ns + bound);
          EXPECT_LE(std::abs(md->communication_overlap_ns - wd.communication_overlap_ns),
                    2 * bound);

          // Timeline: per-category kernel time is exact on any grid; busy bins sum to busy.
          if (!md->timeline.truncated && !wd.timeline.truncated) {
            for (int c = 0; c < kCategoryCount; ++c) {
              int64_t a = 0, b = 0;
              for (const auto& bin : md->timeline.category_ns) a += bin[c];
              for (const auto& bin : wd.timeline.category_ns) b += bin[c];
              EXPECT_EQ(a, b) << kCategoryNames[c];
            }
            const auto& busy = md->timeline.busy_ns;
            EXPECT_EQ(std::accumulate(busy.begin(), busy.end(), int64_t{0}), md->busy_ns);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace inferscope::model
