// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// `inferscope top`'s layout at several widths (the live loop is tested end to end by
// tests/live/top_live.py) and its error when no agent runs.

#include "src/cli/top_command.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "src/base/human_format.h"
#include "src/cli/exit_codes.h"
#include "src/telemetry/otlp/span_window.h"
#include "src/telemetry/telemetry_kind.h"
#include "tests/temp_dir.h"

namespace inferscope::cli {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TopFrame SampleFrame() {
  TopFrame f;
  f.from_ns = 1'800'000'000 * kSec;
  f.to_ns = f.from_ns + 10 * kSec;
  f.processes = 2;
  f.gpus.push_back({0, 4242, 0, 87.5, {{"attention", 60.0}, {"matmul", 30.0}, {"other", 10.0}}});
  f.gpus.push_back({1, 4243, 1, 12.25, {{"communication", 100.0}}});
  f.kernels.push_back(
      {"void flash::flash_fwd_splitkv_kernel_with_a_rather_long_name_that_must_"
       "be_shortened_in_the_middle_to_fit",
       123'456, 4'560'000'000, 45.0});
  f.kernels.push_back({"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 9, 12'300'000, 0.1});
  f.syncs.push_back({"stream", 1'234, 45'600'000, 9'990'000});
  f.requests_per_s = 12.34;
  f.latency_source = "spans";
  f.latencies.push_back({"e2e", {120'000'000, 300'000'000, 912'000'000}});
  f.latencies.push_back({"ttft", {15'000'000, 40'000'000, 99'000'000}});
  return f;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

bool HasLineWith(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& line : Lines(text)) {
    bool all = true;
    for (const std::string& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return true;
  }
  return false;
}

TEST(TopLayoutTest, FitsEveryWidthAndKeepsEveryNumber) {
  const TopFrame f = SampleFrame();
  for (size_t width : {60u, 80u, 100u, 132u, 200u}) {
    const std::string text = RenderTopFrame(f, width);
    for (const std::string& line : Lines(text)) EXPECT_LE(line.size(), width) << line;
    // Values are never cut, whatever the width: busy shares, kernel time/share/calls, syncs,
    // requests and every latency percentile.
    EXPECT_TRUE(HasLineWith(text, {" 0 ", "4242", "87.5%"})) << width << "\n" << text;
    EXPECT_TRUE(HasLineWith(text, {" 1 ", "4243", "12.2%"})) << width << "\n" << text;
    EXPECT_TRUE(HasLineWith(text, {"4.56 s", "45.0%", "123,456"})) << width << "\n" << text;
    EXPECT_TRUE(HasLineWith(text, {"stream", "1,234", "45.6 ms", "9.99 ms"})) << text;
    EXPECT_NE(text.find("requests 12.3/s"), std::string::npos) << text;
    for (const char* p : {"120 ms", "300 ms", "912 ms", "15.0 ms", "40.0 ms", "99.0 ms"})
      EXPECT_NE(text.find(p), std::string::npos) << p << " at " << width << "\n" << text;
    // The long kernel name is shortened in its middle (its start and end stay) when it must be.
    const std::string& name = f.kernels[0].name;
    if (name.size() + 29 > width)
      EXPECT_TRUE(HasLineWith(text, {"void flash::", "...", "fit "})) << text;
    else
      EXPECT_TRUE(HasLineWith(text, {name})) << text;
    EXPECT_NE(text.find("2027-01-15 08:00:00 to 08:00:10 UTC (10.0 s)"), std::string::npos) << text;
  }
}

TEST(TopLayoutTest, BarShowsBusyShareSplitByCategory) {
  const TopFrame f = SampleFrame();
  const std::string text = RenderTopFrame(f, 100);
  // 100 columns: a bar of (100 - 29) / 2 = 35 cells. GPU 0 87.5% busy -> 31 filled cells split
  // 60/30/10 (18.6, 9.3, 3.1) -> 19 A, 9 M, 3 O (largest remainders); GPU 1: 4 C of 12.25%.
  EXPECT_TRUE(HasLineWith(
      text, {" " + std::string(19, 'A') + std::string(9, 'M') + "OOO" + std::string(4, '.') + " "}))
      << text;
  EXPECT_TRUE(HasLineWith(text, {" CCCC" + std::string(31, '.')})) << text;
  EXPECT_TRUE(HasLineWith(text, {"A=attention", "C=communication", "M=matmul", "O=other"})) << text;
  // Narrow: fewer names follow the bars, the legend still names every letter in them.
  const std::string narrow = RenderTopFrame(f, 60);
  EXPECT_EQ(narrow.find("other 10%"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("O=other"), std::string::npos) << narrow;
  // Wide: the bar stops at 50 cells and category names follow it.
  const std::string wide = RenderTopFrame(f, 200);
  EXPECT_TRUE(HasLineWith(wide, {"attention 60%", "matmul 30%", "other 10%"})) << wide;
}

TEST(TopLayoutTest, NoteReplacesTheTables) {
  TopFrame f;
  f.from_ns = 1'800'000'000 * kSec;
  f.to_ns = f.from_ns + 10 * kSec;
  f.note = "waiting for the first window (window 10.0 s)";
  const std::string text = RenderTopFrame(f, 80);
  EXPECT_NE(text.find("waiting for the first window"), std::string::npos) << text;
  EXPECT_NE(text.find("requests -  latency -"), std::string::npos) << text;
  EXPECT_EQ(text.find("TOP KERNELS"), std::string::npos) << text;
}

// Requests and latency come from the request spans of the range: requests / range seconds and the
// span histograms' percentiles (what the API's "requests" holds).
TEST(TopFrameTest, RequestsAndLatencyFromSpans) {
  query::RangeProfile profile;
  profile.from_ns = 1'800'000'000 * kSec;
  profile.to_ns = profile.from_ns + 10 * kSec;
  telemetry::otlp::SpanWindow spans;
  spans.start_unix_ns = static_cast<uint64_t>(profile.from_ns);
  spans.end_unix_ns = static_cast<uint64_t>(profile.to_ns);
  spans.requests = 25;
  for (int i = 1; i <= 25; ++i) {
    spans.stages[static_cast<size_t>(telemetry::otlp::Stage::kE2e)].Add(i * 40'000'000);
    spans.stages[static_cast<size_t>(telemetry::otlp::Stage::kTtft)].Add(i * 2'000'000);
  }
  const telemetry::otlp::LatencyHistogram e2e = spans.stage(telemetry::otlp::Stage::kE2e);
  profile.telemetry.Merge(std::make_unique<telemetry::WindowData<telemetry::otlp::SpanWindow>>(
      telemetry::otlp::SpanKind(), spans));
  const TopFrame f = BuildTopFrame(profile, 5);
  ASSERT_TRUE(f.requests_per_s.has_value());
  EXPECT_DOUBLE_EQ(*f.requests_per_s, 2.5);
  EXPECT_EQ(f.latency_source, "spans");
  ASSERT_EQ(f.latencies.size(), 2u);
  EXPECT_EQ(f.latencies[0].first, "e2e");
  EXPECT_EQ(f.latencies[0].second[0], e2e.PercentileNs(0.5));
  EXPECT_EQ(f.latencies[0].second[2], e2e.PercentileNs(0.99));
  EXPECT_EQ(f.latencies[1].first, "ttft");
  EXPECT_EQ(f.note, "no GPU activity in this range");
  const std::string text = RenderTopFrame(f, 100);
  EXPECT_NE(text.find("requests 2.5/s  latency (spans) e2e p50 " +
                      base::FormatDuration(e2e.PercentileNs(0.5))),
            std::string::npos)
      << text;
}

TEST(TopCommandTest, NoAgentIsAClearError) {
  inferscope::testing::TempDir dir;
  TopOptions options;
  options.state_dir = dir.path();
  options.frames = 1;
  std::ostringstream out, err;
  EXPECT_EQ(RunTop(options, out, err), kExitNotFound);
  EXPECT_EQ(out.str(), "");
  EXPECT_NE(err.str().find("inferscope: error: no agent runs for " + dir.path()), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("start one with 'inferscope agent'"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace inferscope::cli
