// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Runs the built `inferscope` binary: help, exit codes for bad input, and a small Kineto trace
// analyzed end to end to JSON.

#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "src/cli/cli_binary_test.h"

namespace {

namespace fs = std::filesystem;

using inferscope::cli::testing::ReadFile;
using inferscope::cli::testing::Result;

void WriteFile(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
}

class CliTest : public inferscope::cli::testing::CliBinaryTest {
 protected:
  static int Lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
  }
};

// Three kernels on one stream of GPU 0, rank 0: two GEMMs of 100 us (10 us apart) and an NCCL
// all-reduce of 50 us 80 us later. span 340 us, busy 250 us, compute 200 us, communication 50 us.
constexpr char kTrace[] = R"js({
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
  "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
     "ts": 1000, "dur": 5, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
     "ts": 1006, "dur": 5, "args": {"correlation": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
     "ts": 1012, "dur": 5, "args": {"correlation": 3}},
    {"ph": "X", "cat": "kernel", "name": "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
     "pid": 0, "tid": 7, "ts": 1010, "dur": 100,
     "args": {"device": 0, "stream": 7, "correlation": 1, "grid": [8, 1, 1], "block": [256, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
     "pid": 0, "tid": 7, "ts": 1120, "dur": 100,
     "args": {"device": 0, "stream": 7, "correlation": 2, "grid": [8, 1, 1], "block": [256, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid": 0, "tid": 7, "ts": 1300, "dur": 50,
     "args": {"device": 0, "stream": 7, "correlation": 3, "grid": [4, 1, 1], "block": [512, 1, 1]}}
  ]
})js";

TEST_F(CliTest, HelpAndVersion) {
  Result r = Run("--help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("analyze"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos);

  r = Run("analyze --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* flag :
       {"--format", "--top", "--bin", "--kernel-wait-threshold", "--rules", "-o"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  EXPECT_NE(r.out.find("Examples"), std::string::npos);

  r = Run("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("inferscope "), std::string::npos);

  r = Run("");
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(CliTest, BadFlagsAreUsageErrors) {
  WriteFile(dir_ / "t.json", kTrace);
  const std::string t = "'" + (dir_ / "t.json").string() + "'";
  for (const std::string& args :
       {std::string("analyze --bogus ") + t, "analyze " + t + " --format html",
        "analyze " + t + " --bin 100", "analyze " + t + " --bin 0ms", "analyze " + t + " --top 0",
        "analyze " + t + " --top many", "analyze " + t + " --kernel-wait-threshold 3h",
        std::string("analyze"), std::string("frobnicate")}) {
    const Result r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("inferscope: error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

// One voice. A usage error names the flag in inferscope's words, suggests the
// closest flag, and points at the subcommand's help; durations take the same units everywhere;
// `help [COMMAND]` and -V work; help shows metavariables, not C++ types.
TEST_F(CliTest, UsageErrorsSpeakOneVoice) {
  WriteFile(dir_ / "t.json", kTrace);
  const std::string t = "'" + (dir_ / "t.json").string() + "'";
  struct Case {
    std::string args, message, help;
  } cases[] = {
      {"report --lats 5m", "unknown flag --lats (did you mean --last?)", "inferscope report"},
      {"analyze " + t + " --kernel-wait 5us",
       "unknown flag --kernel-wait (did you mean --kernel-wait-threshold?)", "inferscope analyze"},
      {"analyse " + t, "unknown command 'analyse' (did you mean analyze?)", "inferscope"},
      {"analyze " + t + " --top", "--top: missing value (N)", "inferscope analyze"},
      {"analyze " + t + " --top 0", "--top: must be between 1 and 100000, got 0",
       "inferscope analyze"},
      {"analyze " + t + " --format html",
       "--format: unknown value 'html' (one of text, markdown, md, json, csv)",
       "inferscope analyze"},
      {"report --pid x", "--pid: 'x' is not a whole number", "inferscope report"},
      {"report --views ops",
       "--views: only 'kernels' is computed from profile windows (ranges show by themselves "
       "after `run --nvtx`; the other views need a trace: analyze)",
       "inferscope report"},
      {"status --bogus", "unknown flag --bogus", "inferscope status"},
      {"agent --http-port 99999", "--http-port: must be between -1 and 65535, got 99999",
       "inferscope agent"},
      {"help nope", "unknown command 'nope'", "inferscope"},
  };
  for (const Case& c : cases) {
    const Result r = Run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err,
              "inferscope: error: " + c.message + "\nRun '" + c.help + " --help' for usage.\n")
        << c.args;
  }
  // Durations parse the same everywhere: minutes for a timeline bin too.
  Result r = Run("analyze --format json --bin 10m " + t);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"bin_ns\": 600000000000"), std::string::npos);

  // ... and for the profile window, which the injection library gets in units it reads.
  r = Run("run --no-agent --state-dir '" + (dir_ / "s").string() +
          "' --window 1m -- sh -c 'echo $INFERSCOPE_WINDOW'");
  if (r.err.find("cannot find libinferscope_inject.so") == std::string::npos) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "60s\n");
  }

  r = Run("help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Subcommands:"), std::string::npos) << r.out;
  r = Run("help analyze");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Usage: inferscope analyze [OPTIONS] PATH..."), std::string::npos) << r.out;
  r = Run("-V");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("inferscope ", 0), 0u) << r.out;
  r = Run("run --help");
  EXPECT_NE(r.out.find("Usage: inferscope run [OPTIONS] -- CMD [ARGS...]"), std::string::npos)
      << r.out;
  r = Run("analyze --help");
  for (const char* shown : {"--top N", "--bin DURATION", "--kernel-wait-threshold DURATION",
                            "--rules FILE", "--output FILE"})
    EXPECT_NE(r.out.find(shown), std::string::npos) << shown << "\n" << r.out;
  // No C++ types or validator wording in any help.
  for (const char* command :
       {"analyze", "classify", "run", "agent", "report", "status", "diff", "top"}) {
    r = Run(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    for (const char* library : {" TEXT", " INT", " UINT", "FLOAT", " in [", ":{"})
      EXPECT_EQ(r.out.find(library), std::string::npos) << command << ": " << library << "\n"
                                                        << r.out;
  }
}

// The timeline is worth looking at. Without --bin the bin comes from the span
// (a 350 us trace had one 100 ms bin: a one-character sparkline); a --bin that would cut the
// timeline short is a usage error naming the smallest that fits (the timeline spans from the
// trace's first event, a launch 10 us before the first kernel).
TEST_F(CliTest, TimelineBinFollowsTheSpan) {
  WriteFile(dir_ / "t.json", kTrace);
  const std::string t = "'" + (dir_ / "t.json").string() + "'";
  Result r = Run("analyze --format json " + t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"bin_ns\": 1000,"), std::string::npos) << r.out.substr(0, 400);
  r = Run("analyze " + t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t line = r.out.find("rank  0 gpu  0 |");
  ASSERT_NE(line, std::string::npos) << r.out;
  const size_t open = r.out.find('|', line), close = r.out.find('|', open + 1);
  EXPECT_GE(close - open - 1, 60u) << r.out.substr(line, 120);  // of 72 cells in 100 columns
  EXPECT_LE(r.out.find('\n', line) - line, 100u);

  r = Run("analyze --bin 1ns " + t);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("--bin 1 ns: too small for the 350 us span of"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use at least --bin 4ns"), std::string::npos) << r.err;
  EXPECT_EQ(Run("analyze --bin 4ns --format json " + t).exit_code, 0);
}

// The ops view (GPU time by CPU operator and module) and Kineto's gpu_user_annotation,
// from kTrace plus operators around its launches: linear [999, 1015) us holds addmm [1005, 1010),
// which launched kernel 2 (100 us); linear itself launched kernels 1 (100 us) and 3 (50 us).
TEST_F(CliTest, OpsViewAndGpuAnnotations) {
  std::string trace = kTrace;
  trace.insert(trace.find("\"traceEvents\": [") + 16, R"js(
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 100, "tid": 100, "ts": 999,
     "dur": 16, "args": {"External id": 1, "Input Dims": [[16, 1024]]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 100, "tid": 100, "ts": 1005,
     "dur": 5},
    {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 100, "tid": 100,
     "ts": 998, "dur": 22},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "## forward ##", "pid": 0, "tid": 7,
     "ts": 1000, "dur": 250},)js");
  WriteFile(dir_ / "ops.json", trace);
  const std::string t = "'" + (dir_ / "ops.json").string() + "'";
  Result r = Run("analyze --format csv --table ops " + t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "rank,name,count,top_level,cpu_total_ns,cpu_self_ns,gpu_self_ns,gpu_self_pct,"
            "gpu_total_ns,gpu_ops,kernels\r\n"
            "0,aten::linear,1,1,16000,11000,150000,60.00,250000,2,2\r\n"
            "0,aten::addmm,1,0,5000,5000,100000,40.00,100000,1,1\r\n");
  r = Run("analyze --format csv --table modules " + t);
  EXPECT_NE(r.out.find("\r\n0,Linear,1,1,22000,22000,250000,100.00,250000,3,3\r\n"),
            std::string::npos)
      << r.out;
  r = Run("analyze --format csv --table gpu_ranges " + t);
  EXPECT_NE(r.out.find("\r\n0,## forward ##,100.00,1,250000,250000,250000,250000,250000,0,2,"
                       "200000\r\n"),
            std::string::npos)
      << r.out;
  r = Run("analyze --views ops,ranges " + t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU time by operator (like torch.profiler key_averages)"),
            std::string::npos);
  EXPECT_NE(r.out.find("GPU time by module"), std::string::npos);
  EXPECT_NE(r.out.find("GPU annotations (Kineto gpu_user_annotation)"), std::string::npos);
  // The windows do not see the operators: the report is the one of the trace without them.
  Result plain = Run("analyze --format json " + t);
  WriteFile(dir_ / "t.json", kTrace);
  Result base = Run("analyze --format json '" + (dir_ / "t.json").string() + "'");
  auto cut = [](const std::string& json) { return json.substr(json.find("\"ranks\"")); };
  EXPECT_EQ(cut(plain.out), cut(base.out));
}

// The views (`--views`) and one table as CSV (`--format csv --table`).
TEST_F(CliTest, ViewsAndCsvTables) {
  WriteFile(dir_ / "t.json", kTrace);
  const std::string t = "'" + (dir_ / "t.json").string() + "'";
  Result r = Run("analyze --views kernels,streams " + t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Kernel statistics (like nsys cuda_gpu_kern_sum)"), std::string::npos);
  EXPECT_NE(r.out.find("Streams (busy, idle and overlap per stream)"), std::string::npos);
  EXPECT_EQ(r.out.find("Steps (ProfilerStep"), std::string::npos);  // not selected

  r = Run("analyze --format json --views all " + t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t views = r.out.find("\"views\": {");
  ASSERT_NE(views, std::string::npos) << r.out;
  size_t at = r.out.find("\"selected\": [", views);
  for (const char* view : {"kernels", "streams", "steps", "ranges", "ops"}) {
    at = r.out.find(std::string("\"") + view + "\"", at);
    EXPECT_NE(at, std::string::npos) << view;
  }

  // CSV needs no --views: the table's view is computed. Two GEMMs of 100 us, grid 8x1x1.
  r = Run("analyze --format csv --table kernel_stats " + t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("\r\n")),
            "rank,name,count,total_ns,mean_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,category");
  EXPECT_NE(r.out.find("0,ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn,2,200000,"
                       "100000,100000,100000,100000,0,100000,matmul\r\n"),
            std::string::npos)
      << r.out;
  r = Run("analyze --format csv --table launch_configs " + t);
  EXPECT_EQ(r.out.substr(0, r.out.find("\r\n")),
            "rank,name,grid,block,registers_per_thread,shared_bytes,static_shared_bytes,"
            "dynamic_shared_bytes,count,total_ns,distinct_configs");
  // This trace's kernels do not record registers or shared memory: empty fields.
  EXPECT_NE(r.out.find(",8x1x1,256x1x1,,,,,2,200000,1\r\n"), std::string::npos) << r.out;
  r = Run("analyze --format csv --table streams " + t);
  EXPECT_NE(r.out.find("0,7,3,0,0,340000,250000,73.53,90000,0,0.00\r\n"), std::string::npos)
      << r.out;
  r = Run("analyze --format csv " + t);  // default table: kernels
  EXPECT_EQ(r.out.rfind("rank,name,category,subcategory,count,total_ns", 0), 0u) << r.out;

  for (const std::string& args : {"analyze --views frames " + t, "analyze --table nope " + t,
                                  "analyze --format csv --table nope " + t}) {
    r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("inferscope: error: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

// `-` reads the trace from stdin (gzip or not; the report names it "-").
TEST_F(CliTest, TraceOnStdin) {
  WriteFile(dir_ / "t.json", kTrace);
  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
  auto run = [&](const std::string& feed, const std::string& args) {
    const std::string cmd = feed + " | '" + INFERSCOPE_CLI_BINARY + "' analyze " + args + " >'" +
                            out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  };
  const std::string t = "'" + (dir_ / "t.json").string() + "'";
  ASSERT_EQ(run("cat " + t, "--format json -"), 0) << ReadFile(err);
  EXPECT_NE(ReadFile(out).find("\"path\": \"-\""), std::string::npos) << ReadFile(out);
  EXPECT_NE(ReadFile(out).find("\"kernel_count\": 3"), std::string::npos);
  ASSERT_EQ(run("gzip -c " + t, "--format csv --table kernels -"), 0) << ReadFile(err);
  EXPECT_NE(ReadFile(out).find("0,ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn,"),
            std::string::npos)
      << ReadFile(out);
  EXPECT_EQ(run("echo not a trace", "-"), 4) << ReadFile(err);
  EXPECT_EQ(ReadFile(err).rfind("inferscope: error: -: ", 0), 0u) << ReadFile(err);
  EXPECT_EQ(ReadFile(err).find("inferscope_stdin_"), std::string::npos) << ReadFile(err);
  EXPECT_EQ(run("cat " + t, "- -"), 2) << ReadFile(err);
}

// --from/--to keep the events that start in the slice: offsets from the trace's first
// event (the launch at 1000 us) or @NS timestamps. Kernels start at 1010, 1120 and 1300 us.
TEST_F(CliTest, TimeSlice) {
  WriteFile(dir_ / "t.json", kTrace);
  const std::string t = "'" + (dir_ / "t.json").string() + "'";
  auto kernels = [&](const std::string& args) {
    const Result r = Run("analyze --format csv --table temporal " + args + " " + t);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    const Result j = Run("analyze --format json " + args + " " + t);
    const size_t at = j.out.find("\"kernel_count\": ");
    return at == std::string::npos ? -1 : std::atoi(j.out.c_str() + at + 16);
  };
  EXPECT_EQ(kernels(""), 3);
  EXPECT_EQ(kernels("--from 100us"), 2);
  EXPECT_EQ(kernels("--to 100us"), 1);
  EXPECT_EQ(kernels("--from 100us --to 200us"), 1);
  EXPECT_EQ(kernels("--from @1200000"), 1);
  EXPECT_EQ(kernels("--from @1000000 --to @1120001"), 2);
  // The report says which slice it covers: the text header and the JSON options.
  Result sliced = Run("analyze --from 100us --to 200us " + t);
  EXPECT_NE(
      sliced.out.find("slice: [100 us, 200 us) of each file (from its first event): operations "
                      "that start in it\n"),
      std::string::npos)
      << sliced.out;
  sliced = Run("analyze --format json --from @1200000 " + t);
  EXPECT_NE(sliced.out.find("\"slice\": \"[@1200000, end) on the trace clock: operations that "
                            "start in it\""),
            std::string::npos)
      << sliced.out;
  sliced = Run("analyze " + t);
  EXPECT_EQ(sliced.out.find("slice: "), std::string::npos) << sliced.out;
  // An empty slice is no GPU activity (exit 3); bad bounds are usage errors.
  EXPECT_EQ(Run("analyze --from 1s " + t).exit_code, 3);
  for (const std::string args :
       {"--from 2ms --to 1ms", "--from @5 --to 1ms", "--from @x", "--to 100", "--from -1ms"}) {
    const Result r = Run("analyze " + args + " " + t);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("inferscope: error: --", 0), 0u) << args << "\n" << r.err;
  }
}

// A result that cannot be written (stdout on a full disk) is an error exit with one line, never
// a silent success: analyze and diff both go through cli::FlushOutput.
TEST_F(CliTest, UnwritableStdoutIsAnError) {
  const fs::path trace = dir_ / "trace.json";
  WriteFile(trace, kTrace);
  const fs::path err = dir_ / "stderr.txt";
  for (const std::string command : {"analyze", "diff"}) {
    const std::string args = command == "analyze"
                                 ? "analyze '" + trace.string() + "'"
                                 : "diff '" + trace.string() + "' '" + trace.string() + "'";
    const std::string cmd = std::string("'") + INFERSCOPE_CLI_BINARY + "' " + args +
                            " >/dev/full 2>'" + err.string() + "' </dev/null";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << command;
    EXPECT_EQ(WEXITSTATUS(status), command == "analyze" ? 1 : 2) << command;
    EXPECT_EQ(ReadFile(err), "inferscope: error: <stdout>: write failed\n") << command;
  }
  for (const std::string args : {"--help", "analyze --help", "help diff", "--version"}) {
    const std::string cmd = std::string("'") + INFERSCOPE_CLI_BINARY + "' " + args +
                            " >/dev/full 2>'" + err.string() + "' </dev/null";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 1) << args;
    EXPECT_EQ(ReadFile(err), "inferscope: error: <stdout>: write failed\n") << args;
  }
}

TEST_F(CliTest, MissingFile) {
  const Result r = Run("analyze '" + (dir_ / "nope.json").string() + "'");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("inferscope: error: " + (dir_ / "nope.json").string() + ": ", 0), 0u)
      << r.err;
}

// A trace without GPU events was reported "healthy" with exit 0. No GPU activity
// matched: exit 3, no report, and a hint on recording CUDA activity.
TEST_F(CliTest, TraceWithoutGpuActivityGivesNoVerdict) {
  WriteFile(dir_ / "cpu.json", R"js({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": 1000, "dur": 5},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
     "ts": 1010, "dur": 5, "args": {"correlation": 1}}]})js");
  for (const std::string format : {"text", "json"}) {
    const Result r = Run("analyze --format " + format + " '" + (dir_ / "cpu.json").string() + "'");
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.rfind("inferscope: no GPU activity matched: " + (dir_ / "cpu.json").string() +
                              " (kineto_json) holds no kernel, memcpy or memset event",
                          0),
              0u)
        << r.err;
    EXPECT_NE(r.err.find("ProfilerActivity.CUDA"), std::string::npos) << r.err;
  }
  // With a kernel it reports as before.
  WriteFile(dir_ / "t.json", kTrace);
  EXPECT_EQ(Run("analyze '" + (dir_ / "t.json").string() + "'").exit_code, 0);
}

TEST_F(CliTest, TextFileIsNotATrace) {
  WriteFile(dir_ / "notes.txt", "hello, this is not a trace\n");
  const Result r = Run("analyze '" + (dir_ / "notes.txt").string() + "'");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("notes.txt: "), std::string::npos) << r.err;
}

TEST_F(CliTest, TruncatedGzipIsDataLoss) {
  // A gzip of a valid trace with many events, cut in half.
  std::string json = R"({"schemaVersion": 1, "traceEvents": [)";
  for (int i = 0; i < 20000; ++i) {
    if (i) json += ",";
    json += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 97) +
            R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(1000 + i * 10) +
            R"(, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": )" +
            std::to_string(i + 1) + "}}";
  }
  json += "]}";
  const fs::path gz = dir_ / "trace.json.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, json.data(), static_cast<unsigned>(json.size()));
  gzclose(f);
  const std::string bytes = ReadFile(gz);
  WriteFile(gz, bytes.substr(0, bytes.size() / 2));
  const Result r = Run("analyze '" + gz.string() + "'");
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("inferscope: error: " + gz.string() + ": ", 0), 0u) << r.err;
}

TEST_F(CliTest, TruncatedJsonIsDataLoss) {
  const std::string trace = kTrace;
  WriteFile(dir_ / "cut.json", trace.substr(0, trace.size() * 2 / 3));
  const Result r = Run("analyze '" + (dir_ / "cut.json").string() + "'");
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
}

TEST_F(CliTest, AnalyzesKinetoTraceToJson) {
  WriteFile(dir_ / "t.json", kTrace);
  const Result r =
      Run("analyze --format json --top 5 --bin 100us '" + (dir_ / "t.json").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(int64_t(doc["schema_version"]), 1);
  EXPECT_EQ(std::string_view(doc["inputs"].at(0)["format"]), "kineto_json");
  EXPECT_EQ(int64_t(doc["options"]["top"]), 5);
  EXPECT_EQ(int64_t(doc["options"]["bin_ns"]), 100'000);
  ASSERT_EQ(simdjson::dom::array(doc["ranks"]).size(), 1u);
  simdjson::dom::element rank = doc["ranks"].at(0);
  EXPECT_EQ(int64_t(rank["rank"]), 0);
  EXPECT_EQ(uint64_t(rank["device"]), 0u);
  EXPECT_EQ(std::string_view(rank["device_name"]), "NVIDIA H100 80GB HBM3");
  simdjson::dom::element t = rank["temporal_breakdown"];
  EXPECT_EQ(int64_t(t["span_ns"]), 340'000);
  EXPECT_EQ(int64_t(t["busy_ns"]), 250'000);
  EXPECT_EQ(int64_t(t["idle_ns"]), 90'000);
  EXPECT_EQ(int64_t(t["compute_ns"]), 200'000);
  EXPECT_EQ(int64_t(t["non_compute_ns"]), 50'000);
  EXPECT_NEAR(double(t["idle_pct"]), 26.4706, 1e-3);
  EXPECT_EQ(uint64_t(rank["kernel_count"]), 3u);
  EXPECT_EQ(int64_t(rank["categories"]["matmul"]["time_ns"]), 200'000);
  EXPECT_EQ(uint64_t(rank["categories"]["matmul"]["count"]), 2u);
  EXPECT_DOUBLE_EQ(double(rank["categories"]["matmul"]["pct"]), 80.0);
  EXPECT_EQ(int64_t(rank["categories"]["communication"]["time_ns"]), 50'000);
  EXPECT_EQ(int64_t(rank["communication_ns"]), 50'000);
  EXPECT_DOUBLE_EQ(double(rank["comm_compute_overlap_pct"]), 0.0);
  simdjson::dom::element top = rank["top_kernels"].at(0);
  EXPECT_EQ(uint64_t(top["count"]), 2u);
  EXPECT_EQ(int64_t(top["total_ns"]), 200'000);
  EXPECT_EQ(int64_t(top["max_ns"]), 100'000);
  EXPECT_EQ(std::string_view(top["category"]), "matmul");
  // Idle gaps account for the whole idle time.
  simdjson::dom::element gaps = rank["idle_gaps"];
  EXPECT_EQ(int64_t(gaps["host_wait"]["total_ns"]) + int64_t(gaps["kernel_wait"]["total_ns"]) +
                int64_t(gaps["other"]["total_ns"]),
            90'000);
  EXPECT_EQ(int64_t(rank["timeline"]["bin_ns"]), 100'000);
  EXPECT_EQ(uint64_t(doc["summary"]["rank_count"]), 1u);
}

TEST_F(CliTest, DirectoryInputTextAndOutputFile) {
  fs::create_directories(dir_ / "traces");
  WriteFile(dir_ / "traces" / "a.json", kTrace);
  WriteFile(dir_ / "traces" / "README", "not a trace\n");
  const fs::path report = dir_ / "report.md";
  Result r = Run("analyze '" + (dir_ / "traces").string() + "' --format markdown -o '" +
                 report.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("skipping"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("README"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  const std::string md = ReadFile(report);
  EXPECT_NE(md.find("## Temporal breakdown"), std::string::npos);

  r = Run("analyze '" + (dir_ / "traces" / "a.json").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Temporal breakdown"), std::string::npos);
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;

  // An empty directory is "no traces".
  fs::create_directories(dir_ / "empty");
  r = Run("analyze '" + (dir_ / "empty").string() + "'");
  EXPECT_EQ(r.exit_code, 4) << r.err;
}

// Unrelated runs in one directory are not one job: the largest is analyzed, with a warning that
// names every group (not 4 ranks and an imbalance across two runs).
TEST_F(CliTest, UnrelatedRunsInADirectoryAreNotOneJob) {
  fs::create_directories(dir_ / "runs");
  const std::string one_rank = "\"rank\": 0, \"world_size\": 1";
  ASSERT_NE(std::string(kTrace).find(one_rank), std::string::npos);
  for (const std::string run : {"a", "b"}) {
    for (int rank = 0; rank < 2; ++rank) {
      std::string trace = kTrace;
      trace.replace(trace.find(one_rank), one_rank.size(),
                    "\"rank\": " + std::to_string(rank) + ", \"world_size\": 2");
      WriteFile(dir_ / "runs" / (run + "_rank" + std::to_string(rank) + ".json"), trace);
    }
  }
  Result r = Run("analyze --format json '" + (dir_ / "runs").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("inferscope: warning: the inputs are 2 separate jobs, not one"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("job 1 = a_rank0.json, a_rank1.json (analyzed); job 2 = b_rank0.json, "
                       "b_rank1.json (rank 0 again)"),
            std::string::npos)
      << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(uint64_t(doc["summary"]["rank_count"]), 2u);

  // One run on its own: no warning.
  r = Run("analyze '" + (dir_ / "runs" / "b_rank0.json").string() + "' '" +
          (dir_ / "runs" / "b_rank1.json").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

// ---- inferscope run ----

TEST_F(CliTest, RunReplacesItselfWithTheCommandKeepingPidAndExitCode) {
  const std::string state = (dir_ / "state").string();
  Result r = Run("run --no-agent --state-dir '" + state + "' -- sh -c 'exit 7'");
  EXPECT_EQ(r.exit_code, 7) << r.err;
  // The outer shell execs inferscope, which execs the inner shell: one pid throughout.
  const std::string cmd = std::string("sh -c 'echo $$; exec \"") + INFERSCOPE_CLI_BINARY +
                          "\" run --no-agent --state-dir " + state + " -- sh -c \"echo \\$\\$\"'";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char a[64] = {}, b[64] = {};
  ASSERT_NE(std::fgets(a, sizeof(a), pipe), nullptr);
  ASSERT_NE(std::fgets(b, sizeof(b), pipe), nullptr);
  ::pclose(pipe);
  EXPECT_STREQ(a, b);
}

TEST_F(CliTest, RunSetsTheInjectionEnvironmentAndPassesTheCommandsOwnFlags) {
  const std::string state = (dir_ / "state").string();
  Result r = Run("run --no-agent --state-dir '" + state + "' --window 5s -- sh -c " +
                 "'echo \"$INFERSCOPE_STATE_DIR|$INFERSCOPE_WINDOW|$CUDA_INJECTION64_PATH|$*\"' " +
                 "x --window 1 -- y");
  if (r.exit_code != 0 && r.err.find("cannot find libinferscope_inject.so") != std::string::npos)
    GTEST_SKIP() << "the injection library is not built here (no CUDA toolkit)";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(state + "|5s|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libinferscope_inject.so|--window 1 -- y"), std::string::npos) << r.out;
}

TEST_F(CliTest, RunKeepsAUsersInjectionLibraryAndSaysSo) {
  const std::string cmd = std::string("CUDA_INJECTION64_PATH=/opt/other.so '") +
                          INFERSCOPE_CLI_BINARY + "' run --no-agent --state-dir '" +
                          (dir_ / "s").string() + "' -- sh -c 'echo $CUDA_INJECTION64_PATH' 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), pipe)) out += buf;
  EXPECT_EQ(::pclose(pipe), 0);
  EXPECT_NE(out.find("already set (/opt/other.so); keeping it"), std::string::npos) << out;
  EXPECT_NE(out.find("\n/opt/other.so\n"), std::string::npos) << out;
}

TEST_F(CliTest, RunEnableOtelPointsAKnownEngineAtTheAgent) {
  const fs::path state = dir_ / "state";
  fs::create_directories(state);
  {
    std::ofstream f(state / "agent.json");
    f << R"({"pid": 1, "socket": "s", "endpoints": {"api": "http://127.0.0.1:1/api/v1",)"
      << R"( "metrics": "http://127.0.0.1:1/metrics", "otlp_http": "http://127.0.0.1:1/v1/traces"}})";
  }
  const fs::path vllm = dir_ / "vllm";  // stands in for the engine: shows what it was given
  {
    std::ofstream f(vllm);
    f << "#!/bin/sh\necho "
         "\"$*|$OTEL_EXPORTER_OTLP_TRACES_PROTOCOL|$OTEL_EXPORTER_OTLP_TRACES_HEADERS\"\n";
  }
  fs::permissions(vllm, fs::perms::owner_all);
  Result r = Run("run --no-agent --enable-otel --state-dir '" + state.string() + "' -- '" +
                 vllm.string() + "' serve my-model");
  if (r.exit_code != 0 && r.err.find("cannot find libinferscope_inject.so") != std::string::npos)
    GTEST_SKIP() << "the injection library is not built here (no CUDA toolkit)";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "serve my-model --otlp-traces-endpoint http://127.0.0.1:1/v1/traces|http/protobuf|\n");
  EXPECT_NE(r.err.find("vllm request spans go to http://127.0.0.1:1/v1/traces"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the agent will refuse the spans"), std::string::npos) << r.err;
  // With the agent's token, the exporter sends it (docs/agent.md, "Access").
  WriteFile(state / "agent.token", "0123abcd\n");
  fs::permissions(state / "agent.token", fs::perms::owner_read | fs::perms::owner_write);
  r = Run("run --no-agent --enable-otel --state-dir '" + state.string() + "' -- '" + vllm.string() +
          "' serve my-model");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "serve my-model --otlp-traces-endpoint http://127.0.0.1:1/v1/traces|http/protobuf|"
            "authorization=Bearer%200123abcd\n");
  // Without agent endpoints it warns and runs the command unchanged.
  fs::remove(state / "agent.json");
  r = Run("run --no-agent --enable-otel --state-dir '" + state.string() + "' -- '" + vllm.string() +
          "' serve my-model");
  EXPECT_EQ(r.out, "serve my-model||\n");
  EXPECT_NE(r.err.find("request spans will not be collected"), std::string::npos) << r.err;
}

// A state dir others can write could hold their socket; `run` refuses it
// before the command runs (the command's kernels would go to whoever controls it).
TEST_F(CliTest, RunRefusesAStateDirOthersCanWrite) {
  const fs::path state = dir_ / "open";
  fs::create_directories(state);
  fs::permissions(state, fs::perms::all);
  Result r = Run("run --no-agent --state-dir '" + state.string() + "' -- sh -c 'echo ran'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("writable by every user"), std::string::npos) << r.err;
}

// An agent that cannot start (here: its lock file is a directory) is reported, with its log, as
// soon as it has exited; the command still runs.
TEST_F(CliTest, RunSaysWhenItsAgentExitsAtStart) {
  const fs::path state = dir_ / "state";
  fs::create_directories(state / "agent.lock");
  fs::permissions(state, fs::perms::owner_all, fs::perm_options::replace);
  Result r = Run("run --state-dir '" + state.string() + "' -- sh -c 'echo ran'");
  if (r.exit_code != 0 && r.err.find("cannot find libinferscope_inject.so") != std::string::npos)
    GTEST_SKIP() << "the injection library is not built here (no CUDA toolkit)";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_NE(r.err.find("the agent exited at start (see " + (state / "agent.log").string() + ")"),
            std::string::npos)
      << r.err;
  const std::string text = ReadFile(state / "agent.log");
  EXPECT_NE(text.find("lock file"), std::string::npos) << text;
}

TEST_F(CliTest, RunReportsAMissingCommandLikeAShell) {
  EXPECT_EQ(Run("run --no-agent").exit_code, 2);
  Result r = Run("run --no-agent -- /nonexistent/tool --flag");
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("cannot run /nonexistent/tool"), std::string::npos) << r.err;
  EXPECT_EQ(Run("run --window 10 -- true").exit_code, 2);  // a bare number is ambiguous
}

}  // namespace
