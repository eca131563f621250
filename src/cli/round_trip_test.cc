// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// `analyze` and `diff` read what inferscope itself writes: an `export` (and a live `capture`,
// written by the same exporter) as Chrome JSON is read back as a Kineto trace with the same GPU
// work; a Perfetto protobuf trace is refused with a message naming the format and what to do.

#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "src/cli/cli_binary_test.h"

namespace {

namespace fs = std::filesystem;

using inferscope::cli::testing::ReadFile;
using inferscope::cli::testing::Result;

class RoundTripTest : public inferscope::cli::testing::CliBinaryTest {
 protected:
  static std::string Example(const std::string& name) {
    return std::string(INFERSCOPE_SOURCE_DIR) + "/examples/vllm_tp2_decode/" + name;
  }
};

// The figures a report's ranks hold that the round trip must keep, by (rank, device).
struct RankFigures {
  int64_t device = -1;
  int64_t kernels = -1;
  int64_t kernel_time_ns = -1;
  int64_t busy_ns = -1;
  int64_t span_ns = -1;
  std::map<std::string, int64_t> categories;  // name -> time_ns
  std::string device_name;
};

int64_t Int(simdjson::simdjson_result<simdjson::dom::element> v) {
  int64_t out = -1;
  if (v.get_int64().get(out) != simdjson::SUCCESS) return -1;
  return out;
}

std::map<std::pair<int64_t, int64_t>, RankFigures> Figures(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::map<std::pair<int64_t, int64_t>, RankFigures> out;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) return out;
  simdjson::dom::array ranks;
  if (doc["ranks"].get_array().get(ranks) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element r : ranks) {
    RankFigures f;
    const int64_t rank = Int(r["rank"]);
    f.device = Int(r["device"]);
    f.kernels = Int(r["kernel_count"]);
    f.kernel_time_ns = Int(r["kernel_time_ns"]);
    f.busy_ns = Int(r["temporal_breakdown"]["busy_ns"]);
    f.span_ns = Int(r["temporal_breakdown"]["span_ns"]);
    std::string_view name;
    if (r["device_name"].get_string().get(name) == simdjson::SUCCESS) f.device_name = name;
    simdjson::dom::object categories;
    if (r["categories"].get_object().get(categories) == simdjson::SUCCESS)
      for (auto [key, value] : categories) {
        f.categories[std::string(key)] = Int(value["time_ns"]);
      }
    out[{rank, f.device}] = f;
  }
  return out;
}

// An export to Chrome JSON reads back with every rank's kernels, GPU time, busy time, span and
// categories as the original's (the example has no overlapping operations on a stream, so the
// exporter clips nothing).
TEST_F(RoundTripTest, ExportedChromeJsonAnalyzesLikeTheOriginal) {
  for (const std::string rank : {"rank0.json.gz", "rank1.json.gz"}) {
    const std::string original = Example(rank);
    const std::string exported = (dir_ / ("x_" + rank)).string();
    Result e = Run("export '" + original + "' -o '" + exported + "'");
    ASSERT_EQ(e.exit_code, 0) << e.err;
    Result a = Run("analyze --format json '" + original + "'");
    Result b = Run("analyze --format json '" + exported + "'");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const auto want = Figures(a.out);
    const auto got = Figures(b.out);
    ASSERT_FALSE(want.empty()) << a.out.substr(0, 300);
    ASSERT_EQ(got.size(), want.size()) << b.out.substr(0, 300);
    for (const auto& [r, w] : want) {
      ASSERT_TRUE(got.count(r)) << "rank " << r.first << " missing from the export's report";
      const RankFigures& g = got.at(r);
      EXPECT_EQ(g.device, w.device) << rank;
      EXPECT_EQ(g.kernels, w.kernels) << rank;
      EXPECT_GT(g.kernels, 0) << rank;
      EXPECT_EQ(g.kernel_time_ns, w.kernel_time_ns) << rank;
      EXPECT_EQ(g.busy_ns, w.busy_ns) << rank;
      EXPECT_EQ(g.span_ns, w.span_ns) << rank;
      EXPECT_EQ(g.categories, w.categories) << rank;
      EXPECT_EQ(g.device_name, w.device_name) << rank;
    }
  }
}

// Two ranks exported into one file read back as one process (a Kineto file is one process)
// holding both GPUs' work: every kernel is kept.
TEST_F(RoundTripTest, ExportOfTwoRanksKeepsEveryKernel) {
  const std::string exported = (dir_ / "job.json").string();
  ASSERT_EQ(Run("export '" + Example("rank0.json.gz") + "' '" + Example("rank1.json.gz") +
                "' -o '" + exported + "'")
                .exit_code,
            0);
  int64_t want = 0, got = 0;
  for (const auto& [r, f] : Figures(Run("analyze --format json '" + Example("") + "'").out))
    want += f.kernels;
  const Result b = Run("analyze --format json '" + exported + "'");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  for (const auto& [r, f] : Figures(b.out)) got += f.kernels;
  EXPECT_GT(want, 0);
  EXPECT_EQ(got, want);
}

// `diff` of an export against its original: the same work, no regression (exit 0).
TEST_F(RoundTripTest, DiffOfAnExportAgainstItsOriginalFindsNoRegression) {
  const std::string exported = (dir_ / "x.json.gz").string();
  ASSERT_EQ(Run("export '" + Example("rank0.json.gz") + "' -o '" + exported + "'").exit_code, 0);
  const Result d = Run("diff '" + Example("rank0.json.gz") + "' '" + exported + "'");
  EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
  const Result self = Run("diff '" + exported + "' '" + exported + "'");
  EXPECT_EQ(self.exit_code, 0) << self.out << self.err;
}

// A Perfetto protobuf trace (plain, gzipped, or under a name that does not say so) is refused
// with exit 4 and a message naming the format and the way to a file analyze reads.
TEST_F(RoundTripTest, PerfettoProtobufIsNamedNotCalledNotATrace) {
  const std::string pftrace = (dir_ / "x.pftrace").string();
  const std::string gz = (dir_ / "x.pftrace.gz").string();
  ASSERT_EQ(Run("export '" + Example("rank0.json.gz") + "' -o '" + pftrace + "'").exit_code, 0);
  ASSERT_EQ(Run("export '" + Example("rank0.json.gz") + "' -o '" + gz + "'").exit_code, 0);
  const std::string renamed = (dir_ / "trace.bin").string();
  const std::string renamed_gz = (dir_ / "trace.bin.gz").string();
  fs::copy_file(pftrace, renamed);
  fs::copy_file(gz, renamed_gz);
  for (const std::string& path : {pftrace, gz, renamed, renamed_gz}) {
    for (const std::string command : {"analyze", "diff"}) {
      const Result r = Run(command + " '" + path + "'" +
                           (command == "diff" ? " '" + Example("rank0.json.gz") + "'" : ""));
      EXPECT_EQ(r.exit_code, command == "diff" ? 2 : 4) << command << " " << path << ": " << r.err;
      EXPECT_NE(r.err.find(path + ": a Perfetto protobuf trace"), std::string::npos)
          << command << ": " << r.err;
      EXPECT_NE(r.err.find("-o NAME.json.gz"), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("not a trace"), std::string::npos) << r.err;
    }
  }
}

}  // namespace
