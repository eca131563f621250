// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Round trips of real windows: every trace in ../shared/traces aggregated whole and in 1 s windows,
// encoded and decoded, compared field by field. Also measures the encoded size per window.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
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

std::vector<model::ProfileWindow> Aggregate(const std::string& path, int64_t window_ns) {
  model::NameTable names;
  model::KernelClassifier classifier;
  aggregate::AggregatorOptions options;
  options.window_ns = window_ns;
  std::vector<model::ProfileWindow> windows;
  aggregate::Aggregator aggregator(options, &names, &classifier,
                                   [&](model::ProfileWindow&& w) { windows.push_back(w); });
  auto stats = import::ImportTrace(path, &names, &aggregator);
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
// GPU busy for all 10 s), which is the worst case for size.
TEST(WindowCodecTraceTest, EncodedSizePerGpu) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  constexpr int64_t kWindowNs = 10'000'000'000;
  constexpr double kWindowsPerDay = 86400.0 / 10.0;
  std::printf("%-70s %8s %10s %10s %12s\n", "trace (10 s windows)", "gpus", "B/window",
              "B/gpu-win", "MB/gpu/day");
  for (const std::string& path : AllTraces()) {
    size_t bytes = 0, devices = 0, windows = 0;
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
    }
    if (devices == 0) continue;
    const double per_gpu_window = static_cast<double>(bytes) / static_cast<double>(devices);
    const std::string name = path.substr(inferscope::testing::SharedTracesDir().size() + 1);
    std::printf("%-70s %8zu %10zu %10.0f %12.1f\n", name.c_str(), devices / windows,
                bytes / windows, per_gpu_window, per_gpu_window * kWindowsPerDay / 1e6);
    // The stored target is 50 MB per GPU per day; the wire form must stay well within reach.
    EXPECT_LT(per_gpu_window * kWindowsPerDay, 100e6) << name;
  }
}

}  // namespace
}  // namespace inferscope::wire
