// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/diff_command.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "src/cli/analyze_command.h"
#include "src/model/taxonomy.h"
#include "src/store/sqlite_store.h"
#include "src/wire/window_codec.h"
#include "tests/temp_dir.h"
#include "tests/test_traces.h"

namespace inferscope::cli {
namespace {

namespace fs = std::filesystem;

// A serving loop as a Kineto trace: per step an attention and a GEMM kernel, then a host gap.
// Every duration is jittered uniformly by +-`jitter`; `attention_scale` injects a regression.
std::string LoopTrace(uint64_t seed, double attention_scale, double jitter, int steps = 1200) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(1 - jitter, 1 + jitter);
  std::string json = R"({"schemaVersion": 1, "traceEvents": [)";
  double ts = 1000;
  int corr = 0;
  auto kernel = [&](const char* name, double dur) {
    if (corr) json += ",";
    ++corr;
    json += fmt::format(
        R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": 7, "ts": {:.3f}, )"
        R"("dur": {:.3f}, "args": {{"device": 0, "stream": 7, "correlation": {}}}}})",
        name, ts, dur, corr);
    ts += dur + 2;
  };
  for (int i = 0; i < steps; ++i) {
    kernel("flash_fwd_splitkv_kernel", 300 * attention_scale * u(rng));
    kernel("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn", 300 * u(rng));
    ts += 200 * u(rng);  // the host prepares the next step
  }
  json += "]}";
  return json;
}

// The serving loop with NVTX-style ranges (Kineto user_annotation on the launching thread): each
// step is a `forward` range holding the two launches (cudaLaunchKernel, joined to the kernels by
// correlation) and then `extra` (a range with no GPU work) after them.
std::string AnnotatedLoopTrace(double attention_scale, const std::string& extra, int steps = 400) {
  std::string json = R"({"schemaVersion": 1, "traceEvents": [)";
  double ts = 1000;
  int corr = 0;
  bool first = true;
  auto event = [&](const std::string& e) {
    if (!first) json += ",";
    first = false;
    json += e;
  };
  auto annotation = [&](const std::string& name, double start, double dur) {
    event(fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "{}", "pid": 0, "tid": 7, )"
                      R"("ts": {:.3f}, "dur": {:.3f}}})",
                      name, start, dur));
  };
  auto launch = [&](const char* name, double call, double start, double dur) {
    ++corr;
    event(fmt::format(
        R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 0, "tid": 7, )"
        R"("ts": {:.3f}, "dur": 5, "args": {{"correlation": {}}}}})",
        call, corr));
    event(fmt::format(
        R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": 7, "ts": {:.3f}, )"
        R"("dur": {:.3f}, "args": {{"device": 0, "stream": 7, "correlation": {}}}}})",
        name, start, dur, corr));
  };
  for (int i = 0; i < steps; ++i) {
    const double attention = 300 * attention_scale;
    annotation("forward", ts, 20);
    launch("flash_fwd_splitkv_kernel", ts + 2, ts + 10, attention);
    launch("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn", ts + 10,
           ts + 12 + attention, 300);
    if (!extra.empty()) annotation(extra, ts + 25, 10);
    ts += attention + 300 + 200;
  }
  json += "]}";
  return json;
}

class DiffTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& content) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

  struct Result {
    int code;
    std::string out, err;
  };
  Result Diff(DiffOptions options) {
    std::ostringstream out, err;
    const int code = RunDiff(options, out, err);
    return {code, out.str(), err.str()};
  }
  Result Diff(const std::string& a, const std::string& b,
              report::ReportFormat format = report::ReportFormat::kText) {
    DiffOptions options;
    options.baseline_paths = {a};
    options.candidate_paths = {b};
    options.format = format;
    return Diff(options);
  }

  inferscope::testing::TempDir temp_;
  fs::path dir_ = temp_.path();
};

TEST_F(DiffTest, InjectedAttentionRegressionIsFound) {
  const std::string a = Write("a.json", LoopTrace(1, 1.0, 0.15));
  const std::string b = Write("b.json", LoopTrace(2, 1.3, 0.15));
  const Result r = Diff(a, b);
  EXPECT_EQ(r.code, kDiffRegression) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSION  attention: mean time per call"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time slices of"), std::string::npos) << r.out;
  // The GEMM did not change: not flagged.
  EXPECT_EQ(r.out.find("REGRESSION  matmul"), std::string::npos) << r.out;

  // The other way round it is an improvement, and no regression.
  const Result back = Diff(b, a);
  EXPECT_EQ(back.code, kDiffNoRegression) << back.out << back.err;
  EXPECT_NE(back.out.find("improved    attention: mean time per call"), std::string::npos)
      << back.out;
}

TEST_F(DiffTest, PureNoiseIsQuietOverSeeds) {
  for (uint64_t seed = 10; seed < 16; ++seed) {
    const std::string a = Write("a.json", LoopTrace(seed * 2, 1.0, 0.3));
    const std::string b = Write("b.json", LoopTrace(seed * 2 + 1, 1.0, 0.3));
    const Result r = Diff(a, b);
    EXPECT_EQ(r.code, kDiffNoRegression) << "seed " << seed << "\n" << r.out << r.err;
  }
}

TEST_F(DiffTest, JsonOutputAndSavedReportSide) {
  const std::string trace_a = Write("a.json", LoopTrace(1, 1.0, 0.1));
  const std::string b = Write("b.json", LoopTrace(2, 1.35, 0.1));
  // Baseline as a saved report (`analyze --format json`): no slices, the fixed threshold applies.
  AnalyzeOptions analyze;
  analyze.paths = {trace_a};
  analyze.format = report::ReportFormat::kJson;
  analyze.output_path = (dir_ / "base_report.json").string();
  std::ostringstream ignored_out, ignored_err;
  ASSERT_EQ(RunAnalyze(analyze, ignored_out, ignored_err), 0) << ignored_err.str();
  const Result r = Diff(analyze.output_path, b, report::ReportFormat::kJson);
  EXPECT_EQ(r.code, kDiffRegression) << r.out << r.err;
  EXPECT_NE(r.out.find("\"regression\": true"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"label\": \"report " + analyze.output_path + "\""), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"method\": \"fixed_threshold\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"key\": \"category.attention.mean\""), std::string::npos) << r.out;

  // The same report on both sides: nothing changed.
  const Result same = Diff(analyze.output_path, analyze.output_path);
  EXPECT_EQ(same.code, kDiffNoRegression) << same.out << same.err;
}

// NVTX ranges between two traces: per name the instances, host time and GPU time launched inside,
// the largest GPU-time change first; a range on one side only is new / gone. From a saved report
// (`analyze --views ranges`) the same table.
TEST_F(DiffTest, RangesAreComparedAcrossTraces) {
  // The JSON row of range `name` has `status`.
  auto has_row = [](const std::string& json, const std::string& name, const std::string& status) {
    const size_t at = json.find("\"name\": \"" + name + "\"");
    return at != std::string::npos &&
           json.find("\"status\": \"" + status + "\"", at) < json.find('}', at);
  };
  const std::string a = Write("a.json", AnnotatedLoopTrace(1.0, "sample"));
  const std::string b = Write("b.json", AnnotatedLoopTrace(2.0, "spec_decode"));
  Result r = Diff(a, b);
  ASSERT_EQ(r.code, kDiffRegression) << r.out << r.err;
  const size_t table = r.out.find("NVTX ranges, largest change");
  ASSERT_NE(table, std::string::npos) << r.out;
  // forward: 400 instances each side, GPU time 400 x 600 us -> 400 x 900 us (+50%).
  const size_t forward = r.out.find("  forward ", table);
  ASSERT_NE(forward, std::string::npos) << r.out;
  const std::string line = r.out.substr(forward, r.out.find('\n', forward) - forward);
  EXPECT_NE(line.find("400     400"), std::string::npos) << line;
  EXPECT_NE(line.find("240 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("360 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("+120 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("+50%"), std::string::npos) << line;
  EXPECT_LT(forward, r.out.find("  sample ", table)) << r.out;  // the largest change first
  EXPECT_NE(r.out.find("gone", r.out.find("  sample ", table)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("new", r.out.find("  spec_decode ", table)), std::string::npos) << r.out;

  r = Diff(a, b, report::ReportFormat::kJson);
  EXPECT_TRUE(has_row(r.out, "forward", "changed")) << r.out;
  EXPECT_TRUE(has_row(r.out, "spec_decode", "new")) << r.out;
  EXPECT_TRUE(has_row(r.out, "sample", "gone")) << r.out;
  EXPECT_NE(r.out.find(R"("gpu_time_ns": 120000000)"), std::string::npos) << r.out;  // delta

  // Top-K + tail: one name listed, the other two in the other row.
  DiffOptions one;
  one.baseline_paths = {a};
  one.candidate_paths = {b};
  one.compare.top_ranges = 1;
  r = Diff(one);
  EXPECT_NE(r.out.find("other (2 names)"), std::string::npos) << r.out;

  // A saved report with the ranges view against the candidate trace.
  AnalyzeOptions analyze;
  analyze.paths = {a};
  analyze.views.ranges = true;
  analyze.format = report::ReportFormat::kJson;
  analyze.output_path = (dir_ / "base_report.json").string();
  std::ostringstream ignored_out, ignored_err;
  ASSERT_EQ(RunAnalyze(analyze, ignored_out, ignored_err), 0) << ignored_err.str();
  r = Diff(analyze.output_path, b, report::ReportFormat::kJson);
  EXPECT_TRUE(has_row(r.out, "forward", "changed")) << r.out;
  EXPECT_TRUE(has_row(r.out, "sample", "gone")) << r.out;
  EXPECT_NE(r.out.find(R"("gpu_time_ns": 120000000)"), std::string::npos) << r.out;

  // Ranges on one side only: not compared, and a note says why.
  r = Diff(Write("plain.json", LoopTrace(1, 1.0, 0.1, 400)), b);
  EXPECT_EQ(r.out.find("NVTX ranges, largest"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVTX ranges are not compared: only the candidate"), std::string::npos)
      << r.out;
}

TEST_F(DiffTest, BadInputIsOneLineAndExitTwo) {
  const std::string a = Write("a.json", LoopTrace(1, 1.0, 0.1, 50));
  Result r = Diff(a, (dir_ / "missing.json").string());
  EXPECT_EQ(r.code, kDiffError);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;

  const std::string junk = Write("junk.json", "{\"traceEvents\": [ {\"ph\": ");
  r = Diff(a, junk);
  EXPECT_EQ(r.code, kDiffError) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  DiffOptions range;
  range.baseline_range = "yesterday";
  range.candidate_paths = {a};
  range.state_dir = dir_.string();
  r = Diff(range);
  EXPECT_EQ(r.code, kDiffError);
  EXPECT_NE(r.err.find("FROM..TO"), std::string::npos) << r.err;

  range.baseline_range = "-2h..-1h";
  r = Diff(range);  // no store in dir_
  EXPECT_EQ(r.code, kDiffError);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// --source: the sides' selections are checked before any server is asked (the comparison
// itself against a real ClickHouse: tests/live/fleet_clickhouse.py).
TEST_F(DiffTest, FleetSidesMustDifferAndNameTheirFlags) {
  DiffOptions o;
  o.source = "clickhouse://127.0.0.1:1/fleet";
  Result r = Diff(o);  // both sides: the last hour of every host
  EXPECT_EQ(r.code, kDiffError);
  EXPECT_NE(r.err.find("both sides select the same windows"), std::string::npos) << r.err;
  o.hosts = {"a"};  // the baseline's selection defaults to the candidate's
  r = Diff(o);
  EXPECT_NE(r.err.find("both sides select the same windows"), std::string::npos) << r.err;
  o.baseline_labels = {"bad label"};
  r = Diff(o);
  EXPECT_EQ(r.code, kDiffError);
  EXPECT_EQ(r.err.rfind("inferscope: error: --baseline-label: ", 0), 0u) << r.err;
  o.baseline_labels = {"replica=b"};
  o.candidate_range = "-1h";
  r = Diff(o);
  EXPECT_NE(r.err.find("--candidate-range: expected FROM..TO"), std::string::npos) << r.err;
  o.candidate_range = "-1h..now";
  o.baseline_paths = {"x.json"};
  r = Diff(o);
  EXPECT_NE(r.err.find("not files"), std::string::npos) << r.err;
  o.baseline_paths.clear();
  r = Diff(o);  // the selections differ: now the server is asked, and nobody listens on port 1
  EXPECT_EQ(r.code, kDiffError);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
}

// Store ranges: a trace's 50 ms windows stored as live windows, baseline and candidate an hour
// apart; each stored window is a slice.
TEST_F(DiffTest, StoreRangesUseStoredWindowsAsSlices) {
  constexpr int64_t kSec = 1'000'000'000;
  const int64_t now = 1'800'000'000 * kSec;
  auto store = store::SqliteStore::Open(dir_.string(), store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  wire::Hello hello;
  hello.pid = 100;
  hello.hostname = "node-a";
  auto id = (*store)->UpsertProcess(hello, now - 3 * 3600 * kSec);
  ASSERT_TRUE(id.ok());
  model::KernelClassifier classifier;
  auto put = [&](const std::string& trace, int64_t base_ns) {
    AnalyzeOptions import;
    std::string format;
    std::vector<model::ProfileWindow> windows;
    ASSERT_TRUE(ImportTraceFile(
                    trace, import, classifier, 50'000'000,
                    [&](model::ProfileWindow&& w) { windows.push_back(std::move(w)); }, &format,
                    std::cerr)
                    .ok());
    ASSERT_GT(windows.size(), 10u);
    for (model::ProfileWindow& w : windows) {
      w.start_ns += base_ns;
      w.end_ns += base_ns;
      for (auto& p : w.processes) {
        p.pid = 100;
        for (auto& d : p.devices) {
          d.first_start_ns += base_ns;
          d.last_end_ns += base_ns;
          d.timeline.origin_ns += base_ns;
        }
      }
      store::PendingWindow pending;
      pending.process_id = *id;
      pending.start_ns = w.start_ns;
      pending.end_ns = w.end_ns;
      pending.received_ns = w.end_ns;
      wire::EncodeWindow(w, &pending.encoded);
      ASSERT_TRUE((*store)->AppendWindow(pending).ok());
    }
  };
  put(Write("a.json", LoopTrace(1, 1.0, 0.15)), now - 2 * 3600 * kSec);
  put(Write("b.json", LoopTrace(2, 1.3, 0.15)), now - 3600 * kSec);
  put(Write("c.json", LoopTrace(3, 1.0, 0.15)), now - 1800 * kSec);
  store->reset();

  DiffOptions options;
  options.state_dir = dir_.string();
  options.now_unix_ns = now;
  options.baseline_range = "-2h..-90m";
  options.candidate_range = "-1h..-45m";
  Result r = Diff(options);
  EXPECT_EQ(r.code, kDiffRegression) << r.out << r.err;
  EXPECT_NE(r.out.find("stored windows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("REGRESSION  attention: mean time per call"), std::string::npos) << r.out;

  options.candidate_range = "-30m..now";  // the same load as the baseline
  r = Diff(options);
  EXPECT_EQ(r.code, kDiffNoRegression) << r.out << r.err;

  options.candidate_range = "-10m..now";  // nothing stored there
  r = Diff(options);
  EXPECT_EQ(r.code, kDiffError);
  EXPECT_NE(r.err.find("no profile windows"), std::string::npos) << r.err;
}

// Store ranges whose windows carry NVTX range tables (`run --nvtx`): the diff lists them from the
// range side (query::LoadRangeSide) as from traces.
TEST_F(DiffTest, StoreRangesCompareTheirRangeTables) {
  constexpr int64_t kSec = 1'000'000'000;
  const int64_t now = 1'800'000'000 * kSec;
  auto store = store::SqliteStore::Open(dir_.string(), store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  wire::Hello hello;
  hello.pid = 100;
  hello.hostname = "node-a";
  auto id = (*store)->UpsertProcess(hello, now - 3 * 3600 * kSec);
  ASSERT_TRUE(id.ok());
  model::KernelClassifier classifier;
  // Every stored window gets a range table: `forward` with `gpu_ns` of GPU work, and `name`.
  auto put = [&](const std::string& trace, int64_t base_ns, int64_t gpu_ns, const char* name) {
    AnalyzeOptions import;
    std::string format;
    std::vector<model::ProfileWindow> windows;
    ASSERT_TRUE(ImportTraceFile(
                    trace, import, classifier, 50'000'000,
                    [&](model::ProfileWindow&& w) { windows.push_back(std::move(w)); }, &format,
                    std::cerr)
                    .ok());
    for (model::ProfileWindow& w : windows) {
      w.start_ns += base_ns;
      w.end_ns += base_ns;
      for (auto& p : w.processes) {
        p.pid = 100;
        for (auto& d : p.devices) {
          d.first_start_ns += base_ns;
          d.last_end_ns += base_ns;
          d.timeline.origin_ns += base_ns;
        }
        for (const auto& [range, gpu] : {std::pair<std::string, int64_t>{"forward", gpu_ns},
                                         std::pair<std::string, int64_t>{name, 0}}) {
          model::RangeStats& r = p.ranges.rows.emplace_back();
          r.name = range;
          r.duration.Add(1'000'000);
          r.gpu_ops = 2;
          r.gpu_time_ns = gpu;
        }
      }
      store::PendingWindow pending;
      pending.process_id = *id;
      pending.start_ns = w.start_ns;
      pending.end_ns = w.end_ns;
      pending.received_ns = w.end_ns;
      wire::EncodeWindow(w, &pending.encoded);
      ASSERT_TRUE((*store)->AppendWindow(pending).ok());
    }
  };
  put(Write("a.json", LoopTrace(1, 1.0, 0.15, 300)), now - 2 * 3600 * kSec, 1'000'000, "sample");
  put(Write("b.json", LoopTrace(2, 1.0, 0.15, 300)), now - 3600 * kSec, 3'000'000, "verify");
  store->reset();

  DiffOptions options;
  options.state_dir = dir_.string();
  options.now_unix_ns = now;
  options.baseline_range = "-2h..-90m";
  options.candidate_range = "-1h..-45m";
  options.format = report::ReportFormat::kJson;
  const Result r = Diff(options);
  ASSERT_NE(r.code, kDiffError) << r.err;
  const size_t forward = r.out.find("\"name\": \"forward\"");
  ASSERT_NE(forward, std::string::npos) << r.out;
  EXPECT_LT(r.out.find("\"status\": \"changed\"", forward), r.out.find('}', forward)) << r.out;
  EXPECT_LT(forward, r.out.find("\"name\": \"verify\"")) << r.out;  // the larger change first
  EXPECT_NE(r.out.find("\"name\": \"sample\",\n        \"status\": \"gone\""), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"name\": \"verify\",\n        \"status\": \"new\""), std::string::npos)
      << r.out;
}

// The before/after Nsight pair of ../shared/traces (2x H100, 300 ms each, "after optimisation").
TEST_F(DiffTest, RealNsightBeforeAfterPair) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  const fs::path dir = fs::path(::inferscope::testing::SharedTracesDir()) / "nsys-ai";
  const std::string before = (dir / "mfu_2gpu_before.sqlite").string();
  const std::string after = (dir / "mfu_2gpu_after.sqlite").string();
  if (!fs::exists(before) || !fs::exists(after)) GTEST_SKIP() << "mfu_2gpu pair not found";
  DiffOptions options;
  options.baseline_paths = {before};
  options.candidate_paths = {after};
  options.all = true;
  const Result r = Diff(options);
  std::cout << r.out;
  ASSERT_NE(r.code, kDiffError) << r.err;
  EXPECT_NE(r.out.find("time slices of"), std::string::npos) << r.out;
  // Comparing a profile with itself finds nothing.
  options.candidate_paths = {before};
  const Result self = Diff(options);
  EXPECT_EQ(self.code, kDiffNoRegression) << self.out << self.err;
  EXPECT_EQ(self.out.find("improved"), std::string::npos) << self.out;
}

}  // namespace
}  // namespace inferscope::cli
