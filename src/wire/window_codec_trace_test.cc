// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Round trips of real windows: every trace in ../shared/traces aggregated whole and in 1 s windows,
// encoded and decoded, compared field by field. Also measures the encoded size per window.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/import/trace_importer.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"
#include "tests/test_traces.h"

namespace inferscope::wire {
namespace {

std::vector<std::string> AllTraces() {
  std::vector<std::string> out;
  const std::string dir = inferscope::testing::SharedTracesDir();
  if (dir.empty()) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (e.is_regular_file() && (p.ends_with(".json.gz") || p.ends_with(".sqlite")))
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<model::ProfileWindow> Aggregate(const std::string& path, int64_t window_ns,
                                            bool ranges = false, bool launch_configs = false) {
  model::NameTable names;
  model::KernelClassifier classifier;
  aggregate::AggregatorOptions options;
  options.window_ns = window_ns;
  options.ranges = ranges;
  options.launch_configs = launch_configs;
  import::ImportOptions import_options;
  import_options.kernel_resources = launch_configs;
  std::vector<model::ProfileWindow> windows;
  aggregate::Aggregator aggregator(options, &names, &classifier,
                                   [&](model::ProfileWindow&& w) { windows.push_back(w); });
  auto stats = import::ImportTrace(path, &names, &aggregator, import_options);
  EXPECT_TRUE(stats.ok()) << path << ": " << stats.status().message();
  aggregator.Finish();
  return windows;
}

void ExpectRoundTrip(const model::ProfileWindow& w, const std::string& what) {
  std::string bytes;
  EncodeWindow(w, &bytes);
  auto decoded = DecodeWindow(bytes);
  ASSERT_TRUE(decoded.ok()) << what << ": " << decoded.status().message();
  EXPECT_EQ(testing::FirstDifference(w, *decoded), "") << what;
}

TEST(WindowCodecTraceTest, RealWindowsRoundTrip) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  const std::vector<std::string> traces = AllTraces();
  ASSERT_FALSE(traces.empty());
  for (const std::string& path : traces) {
    for (const model::ProfileWindow& w : Aggregate(path, 0)) ExpectRoundTrip(w, path + " whole");
    size_t n = 0;
    for (const model::ProfileWindow& w : Aggregate(path, 1'000'000'000)) {
      ExpectRoundTrip(w, path + " window " + std::to_string(n++));
    }
  }
}

// Encoded size of 10 s windows. A trace is a few seconds long, so a 10 s window of it has fewer
// than 100 timeline bins; the steady-state estimate tiles each device's bins to a full 100 (a
// GPU busy for all 10 s), which is the worst case for size. Kernel names are most of a window;
// the second figure leaves them out, which is what a store that interns names keeps per window.
TEST(WindowCodecTraceTest, EncodedSizePerGpu) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  constexpr int64_t kWindowNs = 10'000'000'000;
  constexpr double kWindowsPerDay = 86400.0 / 10.0;
  std::printf("%-66s %4s %9s %9s %9s %11s %11s\n", "trace (10 s windows, 100 bins)", "gpus",
              "B/window", "B/gpu-win", "timeline", "MB/gpu/day", "w/o names");
  for (const std::string& path : AllTraces()) {
    size_t bytes = 0, bytes_without_names = 0, timeline_bytes = 0, devices = 0, windows = 0;
    for (model::ProfileWindow w : Aggregate(path, kWindowNs)) {
      for (auto& p : w.processes) {
        for (auto& d : p.devices) {
          ++devices;
          model::Timeline& t = d.timeline;
          const size_t real = t.busy_ns.size();
          for (size_t i = real; real > 0 && i < 100; ++i) {
            t.busy_ns.push_back(t.busy_ns[i % real]);
            t.category_ns.push_back(t.category_ns[i % real]);
          }
        }
      }
      std::string out;
      EncodeWindow(w, &out);
      bytes += out.size();
      ++windows;
      model::ProfileWindow no_names = w, no_timeline = w;
      for (auto& p : no_names.processes) {
        for (auto& d : p.devices) {
          for (auto& k : d.top_kernels) k.name.clear();
          for (auto& s : d.syncs)
            for (auto& t : s.waited_on) t.kernel_name.clear();
        }
      }
      for (auto& p : no_timeline.processes)
        for (auto& d : p.devices) d.timeline = {};
      std::string a, b;
      EncodeWindow(no_names, &a);
      EncodeWindow(no_timeline, &b);
      bytes_without_names += a.size();
      timeline_bytes += out.size() - b.size();
    }
    if (devices == 0) continue;
    const auto per_gpu = [&](size_t n) {
      return static_cast<double>(n) / static_cast<double>(devices);
    };
    const std::string name = path.substr(inferscope::testing::SharedTracesDir().size() + 1);
    std::printf("%-66s %4zu %9zu %9.0f %9.0f %11.1f %11.1f\n", name.c_str(), devices / windows,
                bytes / windows, per_gpu(bytes), per_gpu(timeline_bytes),
                per_gpu(bytes) * kWindowsPerDay / 1e6,
                per_gpu(bytes_without_names) * kWindowsPerDay / 1e6);
    // Guards against a size regression: self-contained windows stay under ~150 MB per GPU per day
    // on the wire (2 KB/s), and under the 50 MB stored target once names are interned.
    EXPECT_LT(per_gpu(bytes) * kWindowsPerDay, 150e6) << name;
    EXPECT_LT(per_gpu(bytes_without_names) * kWindowsPerDay, 50e6) << name;
  }
}

// One trace's windows encoded with and without a section: the bytes of the windows that carry it.
struct SectionBytes {
  size_t with = 0, without = 0, windows = 0;
  double growth_pct() const {
    return 100.0 * (static_cast<double>(with) / static_cast<double>(without) - 1);
  }
};

// What a section adds, over every shared trace in 10 s windows (the injection library's default)
// and 1 s windows. `strip` removes the section from a window and says whether it had any. Prints
// one row per trace and window length and the total; `per_trace_limit_pct` > 0 also bounds each
// row. Returns the totals over every row and the traces whose 10 s windows carried the section.
std::pair<SectionBytes, size_t> SectionGrowth(
    const char* label, bool aggregate_ranges,
    const std::function<bool(model::ProfileWindow*)>& strip, double per_trace_limit_pct,
    bool launch_configs = false, const std::vector<std::string>& extra = {}) {
  std::printf("%-66s %6s %7s %9s %9s %7s\n", "trace", "window", label, "B with", "B without",
              "growth");
  SectionBytes all;
  size_t traces = 0;
  std::vector<std::string> paths = AllTraces();
  paths.insert(paths.end(), extra.begin(), extra.end());
  for (const std::string& path : paths) {
    for (const int64_t window_ns : {int64_t{10'000'000'000}, int64_t{1'000'000'000}}) {
      SectionBytes one;
      for (const model::ProfileWindow& w :
           Aggregate(path, window_ns, aggregate_ranges, launch_configs)) {
        model::ProfileWindow stripped = w;
        if (!strip(&stripped)) continue;
        if (aggregate_ranges || launch_configs) ExpectRoundTrip(w, path);
        std::string a, b;
        EncodeWindow(w, &a);
        EncodeWindow(stripped, &b);
        EXPECT_GT(a.size(), b.size()) << path;
        one.with += a.size();
        one.without += b.size();
        ++one.windows;
      }
      if (one.windows == 0) continue;
      if (window_ns == 10'000'000'000) ++traces;
      all.with += one.with;
      all.without += one.without;
      all.windows += one.windows;
      const std::string& shared = inferscope::testing::SharedTracesDir();
      const std::string name =
          path.starts_with(shared) ? path.substr(shared.size() + 1) : "(extra) " + path;
      std::printf("%-66s %5llds %7zu %9zu %9zu %6.1f%%\n", name.c_str(),
                  static_cast<long long>(window_ns / 1'000'000'000), one.windows, one.with,
                  one.without, one.growth_pct());
      if (per_trace_limit_pct > 0) {
        EXPECT_LE(one.growth_pct(), per_trace_limit_pct) << name;
      }
    }
  }
  std::printf("all windows (%s): %zu B with, %zu B without, growth %.1f%%\n", label, all.with,
              all.without, all.growth_pct());
  return {all, traces};
}

// What the forward-phase split (DeviceProfile::phases, format 1.3) adds to a window, over the
// windows that carry it (<= 20 %, on every trace). The figure in docs/benchmarks.md
// comes from this table.
TEST(WindowCodecTraceTest, PhaseDataGrowth) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  auto strip_phases = [](model::ProfileWindow* w) {
    bool had = false;
    for (auto& p : w->processes)
      for (auto& d : p.devices) {
        had = had || !d.phases.empty();
        d.phases = {};
      }
    return had;
  };
  const auto [all, traces] = SectionGrowth("w/phase", /*aggregate_ranges=*/false, strip_phases,
                                           /*per_trace_limit_pct=*/20.0);
  ASSERT_GT(traces, 0u) << "no trace gave a window with whole steps";
}

// What the NVTX range table (ProcessProfile::ranges, format 1.4, `run --nvtx`) adds to a window,
// aggregated with the table on, over the windows that carry one (<= 20 % overall; a
// 5-kernel toy trace exceeds it alone). The figure in docs/benchmarks.md comes from this table.
TEST(WindowCodecTraceTest, RangeTableGrowth) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  auto strip_ranges = [](model::ProfileWindow* w) {
    bool had = false;
    for (auto& p : w->processes) {
      had = had || !p.ranges.empty();
      p.ranges = {};
    }
    return had;
  };
  const auto [all, traces] = SectionGrowth("w/range", /*aggregate_ranges=*/true, strip_ranges,
                                           /*per_trace_limit_pct=*/0);
  ASSERT_GT(traces, 0u) << "no trace has NVTX / user_annotation ranges";
  EXPECT_LE(all.growth_pct(), 20.0);
}

// What the launch configurations of the top kernels (KernelStats::configs, format 1.5) add to a
// window, aggregated as the injection library does (launch_configs on, the traces' registers and
// shared memory delivered), over every window with a kernel (the step/phase data may add
// 20 %; the configurations take about half of that over all traces). A trace whose kernels each
// ran with many configurations (HTA df_index_resolver: 5-39 per kernel, four listed for most
// rows) grows more (~26 %): the bound per trace is looser. The figure in docs/benchmarks.md
// comes from this table.
TEST(WindowCodecTraceTest, LaunchConfigGrowth) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  auto strip_configs = [](model::ProfileWindow* w) {
    bool had = false;
    for (auto& p : w->processes)
      for (auto& d : p.devices)
        for (auto& k : d.top_kernels) {
          had = had || !k.configs.empty();
          k.configs.clear();
          k.distinct_configs = 0;
        }
    return had;
  };
  // $INFERSCOPE_GROWTH_TRACES: a directory of more traces to measure (the generated scenario
  // traces: tools/make_scenario_traces.py --out DIR), counted in the total too.
  std::vector<std::string> extra;
  if (const char* dir = std::getenv("INFERSCOPE_GROWTH_TRACES"); dir != nullptr && *dir != 0) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
      if (e.is_regular_file() && e.path().string().ends_with(".json.gz"))
        extra.push_back(e.path().string());
    std::sort(extra.begin(), extra.end());
  }
  const auto [all, traces] =
      SectionGrowth("w/config", /*aggregate_ranges=*/false, strip_configs,
                    /*per_trace_limit_pct=*/30.0, /*launch_configs=*/true, extra);
  ASSERT_GT(traces, 0u) << "no trace gave a window with kernels";
  EXPECT_LE(all.growth_pct(), 12.0);
}

}  // namespace
}  // namespace inferscope::wire
