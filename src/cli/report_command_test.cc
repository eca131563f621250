// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/report_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "src/base/json_writer.h"
#include "src/base/time_point.h"
#include "src/cli/agent_command.h"
#include "src/store/sqlite_store.h"
#include "src/telemetry/nvml/gpu_metrics_window.h"
#include "src/telemetry/scrape/engine_window.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"
#include "tests/temp_dir.h"

namespace inferscope::cli {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kSec = 1'000'000'000;

class ReportCommandTest : public ::testing::Test {
 protected:
  // Two processes (ranks 0 and 1), `n` consecutive 10 s windows each from `start_ns`.
  void Populate(int64_t start_ns, int n) {
    auto store = store::SqliteStore::Open(dir_, store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    for (int rank = 0; rank < 2; ++rank) {
      wire::Hello hello;
      hello.pid = 100 + static_cast<uint32_t>(rank);
      hello.rank = rank;
      hello.hostname = "node-a";
      auto id = (*store)->UpsertProcess(hello, start_ns);
      ASSERT_TRUE(id.ok());
      for (int i = 0; i < n; ++i) {
        model::ProfileWindow w = wire::testing::FullWindow();
        w.processes.erase(w.processes.begin() + (1 - rank));
        const int64_t shift = start_ns + i * 10 * kSec - w.start_ns;
        w.start_ns += shift;
        w.end_ns += shift;
        for (auto& d : w.processes[0].devices) {
          d.first_start_ns += shift;
          d.last_end_ns += shift;
          d.timeline.origin_ns += shift;
        }
        store::PendingWindow p;
        p.process_id = *id;
        p.start_ns = w.start_ns;
        p.end_ns = w.end_ns;
        p.received_ns = w.end_ns;
        wire::EncodeWindow(w, &p.encoded);
        ASSERT_TRUE((*store)->AppendWindow(p).ok());
      }
    }
  }
  // GPU metrics of GPUs 0..3 over [start, start + 10 s): what a live agent's store also holds.
  // `uuids`: the NVML UUID of each index (default "GPU-<index>", which no profile device has).
  void AddGpuMetrics(int64_t start_ns, double hw_slowdown_share = 0,
                     std::vector<std::string> uuids = {}) {
    auto store = store::SqliteStore::Open(dir_, store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    telemetry::GpuMetricsWindow g;
    g.start_unix_ns = start_ns;
    g.end_unix_ns = start_ns + 10 * kSec;
    for (int32_t i = 0; i < 4; ++i) {
      telemetry::GpuDeviceWindow& d = g.devices.emplace_back();
      d.index = i;
      d.uuid = uuids.empty() ? "GPU-" + std::to_string(i) : uuids[static_cast<size_t>(i)];
      d.name = "NVIDIA H100 80GB HBM3";
      d.samples = 10;
      if (hw_slowdown_share > 0) {
        d.throttle_samples = 100;
        d.throttle_active["hw_slowdown"] = static_cast<uint64_t>(hw_slowdown_share * 100);
      }
    }
    base::JsonWriter w;
    g.WriteJson(w);
    ASSERT_TRUE(
        (*store)->AppendTelemetry({"gpu", g.start_unix_ns, g.end_unix_ns, start_ns, w.str()}).ok());
  }
  inferscope::testing::TempDir temp_;
  std::string dir_ = temp_.path();
};

TEST_F(ReportCommandTest, RendersMergedWindowsOfTheRange) {
  const int64_t now = 1'800'000'000 * kSec;
  Populate(now - 120 * kSec, 6);  // 2 min ago .. 1 min ago
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = now;
  options.format = report::ReportFormat::kJson;
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"store:" + dir_ + "\""), std::string::npos);
  EXPECT_NE(out.str().find("\"processes\": 2,\n    \"windows\": 12,"), std::string::npos)
      << out.str().substr(out.str().find("\"range\""), 600);

  options.format = report::ReportFormat::kText;
  options.rank = 1;
  options.device = 2;  // FullWindow: process 1 has devices 1 and 2
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("ranks: 1"), std::string::npos) << out.str();
}

// Launch configurations (window format 1.5): per top kernel in the JSON; the text shows them on
// request (--views kernels), and the CSV table prints from the windows.
TEST_F(ReportCommandTest, LaunchConfigsInJsonAndOnRequestInText) {
  const int64_t now = 1'800'000'000 * kSec;
  Populate(now - 120 * kSec, 2);
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = now;
  options.format = report::ReportFormat::kJson;
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"launch_configs\": ["), std::string::npos);
  EXPECT_NE(out.str().find("\"distinct_launch_configs\": "), std::string::npos);
  options.format = report::ReportFormat::kText;
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_EQ(out.str().find("Launch configurations"), std::string::npos);
  options.kernels_view = true;
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("Launch configurations"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("108x2x1"), std::string::npos);  // FullWindow's first configuration
  options.kernels_view = false;
  options.csv_table = "launch_configs";
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_EQ(out.str().rfind("rank,name,grid,block,", 0), 0u) << out.str();
  EXPECT_NE(out.str().find(",108x2x1,128x1x1,168,50176,1024,49152,"), std::string::npos)
      << out.str();
}

// A window stamped slightly after "now" (a GPU or host clock ahead of this one, or a replay whose
// timestamps run ahead) still belongs to --last: the range is open-ended unless --to is given.
TEST_F(ReportCommandTest, LastIncludesWindowsStampedAfterNow) {
  const int64_t now = 1'800'000'000 * kSec;
  Populate(now - 5 * kSec, 2);  // [now-5s, now+5s) and [now+5s, now+15s)
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = now;
  options.format = report::ReportFormat::kJson;
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"windows\": 4,"), std::string::npos) << out.str();
}

TEST_F(ReportCommandTest, EmptyRangeAndMissingStoreAreClear) {
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = 1'800'000'000 * kSec;
  std::ostringstream out, err;
  EXPECT_EQ(RunReport(options, out, err), 3);
  EXPECT_NE(err.str().find("no inferscope store"), std::string::npos) << err.str();

  Populate(options.now_unix_ns - 3600 * kSec, 2);  // an hour ago
  err.str("");
  EXPECT_EQ(RunReport(options, out, err), 3);
  EXPECT_NE(err.str().find("no profile windows in the last 5 min"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("the store holds 4 windows"), std::string::npos) << err.str();
  EXPECT_TRUE(out.str().empty());
  options.last_ns = 2 * 3600 * kSec;
  EXPECT_EQ(RunReport(options, out, err), 0) << err.str();
}

// `report --rank 7` / `--device 5` / `--pid 1` matching nothing gave "healthy" with
// exit 0 (the store's GPU metrics made the range non-empty). No GPU activity matched: exit 3, no
// report, and the message says what the range does hold.
TEST_F(ReportCommandTest, NoGpuActivityMatchedIsExit3AndSaysWhatTheRangeHolds) {
  const int64_t now = 1'800'000'000 * kSec;
  Populate(now - 120 * kSec, 6);
  AddGpuMetrics(now - 120 * kSec);
  struct Case {
    std::optional<uint32_t> pid;
    std::optional<int32_t> rank;
    std::optional<uint32_t> device;
    std::string matched;
  };
  for (const Case& c : {Case{std::nullopt, 7, std::nullopt, "rank 7"},
                        Case{std::nullopt, std::nullopt, 5, "device 5"},
                        Case{1, std::nullopt, std::nullopt, "pid 1"},
                        Case{std::nullopt, 0, 2, "rank 0, device 2"}}) {
    for (auto format : {report::ReportFormat::kText, report::ReportFormat::kJson}) {
      ReportOptions options;
      options.state_dir = dir_;
      options.now_unix_ns = now;
      options.format = format;
      options.pid = c.pid;
      options.rank = c.rank;
      options.device = c.device;
      std::ostringstream out, err;
      EXPECT_EQ(RunReport(options, out, err), 3) << c.matched << "\n" << out.str();
      EXPECT_TRUE(out.str().empty()) << out.str().substr(0, 400);
      EXPECT_NE(err.str().find("inferscope: no GPU activity matched " + c.matched +
                               " in the last 5 min in "),
                std::string::npos)
          << err.str();
      EXPECT_NE(err.str().find("    pid 100, rank 0 on node-a: GPU 0, 1; 6 windows, "),
                std::string::npos)
          << err.str();
      EXPECT_NE(err.str().find("    pid 101, rank 1 on node-a: GPU 1, 2, 7; 6 windows, "),
                std::string::npos)
          << err.str();
      EXPECT_NE(err.str().find("    host telemetry: GPU metrics of GPU 0, 1, 2, 3\n"),
                std::string::npos)
          << err.str();
    }
  }
}

// Windows whose processes never touched a GPU hold no evidence either: no verdict.
TEST_F(ReportCommandTest, WindowsWithoutGpuActivityGiveNoVerdict) {
  const int64_t now = 1'800'000'000 * kSec;
  auto store = store::SqliteStore::Open(dir_, store::SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  wire::Hello hello;
  hello.pid = 300;
  hello.rank = 0;
  hello.hostname = "node-b";
  auto id = (*store)->UpsertProcess(hello, now - 60 * kSec);
  ASSERT_TRUE(id.ok());
  model::ProfileWindow w;
  w.start_ns = now - 60 * kSec;
  w.end_ns = now - 50 * kSec;
  w.processes.emplace_back().pid = 300;  // connected, loading the model: no GPU yet
  store::PendingWindow p{*id, w.start_ns, w.end_ns, w.end_ns, ""};
  wire::EncodeWindow(w, &p.encoded);
  ASSERT_TRUE((*store)->AppendWindow(p).ok());
  store->reset();
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = now;
  std::ostringstream out, err;
  EXPECT_EQ(RunReport(options, out, err), 3) << out.str();
  EXPECT_TRUE(out.str().empty()) << out.str();
  EXPECT_NE(err.str().find("inferscope: no GPU activity matched in the last 5 min in "),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("    pid 300, rank 0 on node-b: no GPU; 1 windows, 0 kernels\n"),
            std::string::npos)
      << err.str();
}

// Filters apply to the GPU metrics: --device 2 shows GPU 2's metrics only, --rank 0 those of the
// GPUs rank 0 ran on (0 and 1).
TEST_F(ReportCommandTest, FiltersApplyToGpuMetrics) {
  const int64_t now = 1'800'000'000 * kSec;
  Populate(now - 120 * kSec, 6);
  AddGpuMetrics(now - 120 * kSec);
  auto gpus = [&](std::optional<int32_t> rank, std::optional<uint32_t> device) {
    ReportOptions options;
    options.state_dir = dir_;
    options.now_unix_ns = now;
    options.format = report::ReportFormat::kJson;
    options.rank = rank;
    options.device = device;
    std::ostringstream out, err;
    EXPECT_EQ(RunReport(options, out, err), 0) << err.str();
    std::string uuids;
    const std::string needle = "\"uuid\": \"GPU-";
    for (size_t pos = 0; (pos = out.str().find(needle, pos)) != std::string::npos;) {
      pos += needle.size();
      uuids += out.str()[pos];
    }
    return uuids;
  };
  EXPECT_EQ(gpus(std::nullopt, std::nullopt), "0123");
  EXPECT_EQ(gpus(std::nullopt, 2), "2");
  EXPECT_EQ(gpus(0, std::nullopt), "01");
  EXPECT_EQ(gpus(1, 2), "2");
}

// CUDA_VISIBLE_DEVICES order differs from NVML's: rank 0's CUDA 0 and 1 are NVML 3 and 2, rank 1's
// CUDA 1 and 2 are NVML 1 and 0. Filters find a profile's GPU metrics by the device UUID the
// injection library reported, not by the number.
TEST_F(ReportCommandTest, FiltersMatchGpuMetricsByUuidWhenOrdersDiffer) {
  const int64_t now = 1'800'000'000 * kSec;
  Populate(now - 120 * kSec, 6);
  // wire::testing::FullWindow: process p's CUDA device p + d has UUID ...-00000000000<d> of p.
  auto uuid = [](int p, int d) {
    return "GPU-0000000" + std::to_string(p) + "-0000-4000-8000-00000000000" + std::to_string(d);
  };
  AddGpuMetrics(now - 120 * kSec, 0, {uuid(1, 1), uuid(1, 0), uuid(0, 1), uuid(0, 0)});
  auto indices = [&](std::optional<int32_t> rank, std::optional<uint32_t> device) {
    ReportOptions options;
    options.state_dir = dir_;
    options.now_unix_ns = now;
    options.format = report::ReportFormat::kJson;
    options.rank = rank;
    options.device = device;
    std::ostringstream out, err;
    EXPECT_EQ(RunReport(options, out, err), 0) << err.str();
    std::string found;
    const std::string needle = "\"index\": ";
    for (size_t pos = 0; (pos = out.str().find(needle, pos)) != std::string::npos;) {
      pos += needle.size();
      found += out.str()[pos];
    }
    return found;
  };
  EXPECT_EQ(indices(std::nullopt, std::nullopt), "0123");
  EXPECT_EQ(indices(0, std::nullopt), "23");
  EXPECT_EQ(indices(1, std::nullopt), "01");
  EXPECT_EQ(indices(0, 0), "3");              // rank 0's CUDA 0
  EXPECT_EQ(indices(1, 2), "0");              // rank 1's CUDA 2
  EXPECT_EQ(indices(std::nullopt, 1), "12");  // CUDA 1 of both ranks
  // The JSON says which UUID each rank's CUDA ordinal is: the key to gpu_metrics' indices.
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = now;
  options.format = report::ReportFormat::kJson;
  options.rank = 0;
  options.device = 0;
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"device_uuid\": \"" + uuid(0, 0) + "\""), std::string::npos)
      << out.str().substr(0, 1500);
}

// A report says what it covers. One input line for the store (not one per
// process) with its process and window counts, and the range in UTC and local time; JSON "range".
TEST_F(ReportCommandTest, SaysWhatItCovers) {
  const int64_t now = 1'800'000'000 * kSec;  // 2027-01-15 08:00:00 UTC
  Populate(now - 120 * kSec, 6);
  const char* old_tz = std::getenv("TZ");
  const std::string saved = old_tz ? old_tz : "";
  ::setenv("TZ", "EST5", 1);  // POSIX form, UTC-05:00 without tzdata
  ::tzset();
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = now;
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  const std::string text = out.str();
  const std::string header = text.substr(0, text.find("ranks: "));
  EXPECT_NE(header.find("input: store:" + dir_ + " (inferscope_store, 2 processes, 12 windows)\n"),
            std::string::npos)
      << header;
  EXPECT_EQ(header.find("input: "), header.rfind("input: ")) << header;  // one input line
  EXPECT_NE(header.find("range: 2027-01-15 07:55:00 to 08:00:00 UTC (now; open-ended)\n"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("range (local, UTC-05:00): 2027-01-15 02:55:00 to 03:00:00\n"),
            std::string::npos)
      << header;

  options.format = report::ReportFormat::kJson;
  options.from = "1799999000";
  options.to = "1800090000";  // the next day in UTC
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  const std::string json = out.str();
  for (const std::string want :
       {"\"range\": {\n    \"from_unix_ns\": 1799999000000000000,\n    \"to_unix_ns\": "
        "1800090000000000000,\n    \"open_ended\": false,",
        "\"from_utc\": \"2027-01-15T07:43:20Z\"", "\"to_utc\": \"2027-01-16T09:00:00Z\"",
        "\"from_local\": \"2027-01-15T02:43:20-05:00\"",
        "\"to_local\": \"2027-01-16T04:00:00-05:00\"", "\"processes\": 2,"})
    EXPECT_NE(json.find(want), std::string::npos) << want << "\n"
                                                  << json.substr(json.find("\"range\""), 500);
  options.format = report::ReportFormat::kText;
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("range: 2027-01-15 07:43:20 to 2027-01-16 09:00:00 UTC\n"),
            std::string::npos)
      << out.str().substr(0, 600);
  if (old_tz)
    ::setenv("TZ", saved.c_str(), 1);
  else
    ::unsetenv("TZ");
  ::tzset();
}

// Before the first window, `report` said "the store is empty: run the application
// under 'inferscope run'" while the processes were connected. It says it is waiting, for how long.
TEST_F(ReportCommandTest, BeforeTheFirstWindowSaysItIsWaiting) {
  const int64_t now = 1'800'000'000 * kSec;
  {
    auto store = store::SqliteStore::Open(dir_, store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    for (uint32_t pid : {500u, 501u}) {
      wire::Hello hello;
      hello.pid = pid;
      hello.hostname = "node-c";
      ASSERT_TRUE((*store)->UpsertProcess(hello, now - 3 * kSec).ok());
    }
    // One that finished long ago, and one that said goodbye: neither is waiting.
    wire::Hello old;
    old.pid = 400;
    ASSERT_TRUE((*store)->UpsertProcess(old, now - 3600 * kSec).ok());
    wire::Hello gone;
    gone.pid = 502;
    auto id = (*store)->UpsertProcess(gone, now - 4 * kSec);
    ASSERT_TRUE(id.ok());
    ASSERT_TRUE((*store)->MarkProcessEnded(*id, now - 2 * kSec).ok());
  }
  {
    std::ofstream f(dir_ + "/agent.json");
    f << R"({"pid": 1, "socket": "x", "window_ns": 10000000000, "endpoints": {}})"
      << "\n";
  }
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = now;
  std::ostringstream out, err;
  EXPECT_EQ(RunReport(options, out, err), 3);
  EXPECT_TRUE(out.str().empty()) << out.str();
  EXPECT_EQ(err.str().rfind("inferscope: waiting for the first window (window 10s, 2 processes "
                            "connected) in ",
                            0),
            0u)
      << err.str();
  EXPECT_EQ(err.str().find("the store is empty"), std::string::npos) << err.str();

  // Without agent.json (no agent, or no HTTP API) the window is not known: the rest still holds.
  fs::remove(dir_ + "/agent.json");
  err.str("");
  EXPECT_EQ(RunReport(options, out, err), 3);
  EXPECT_EQ(err.str().rfind("inferscope: waiting for the first window (2 processes connected)", 0),
            0u)
      << err.str();
}

TEST(ParseTimePointTest, AcceptedForms) {
  const int64_t now = 1'800'000'000 * kSec;
  EXPECT_EQ(*base::ParseTimePoint("now", now), now);
  EXPECT_EQ(*base::ParseTimePoint("-5m", now), now - 300 * kSec);
  EXPECT_EQ(*base::ParseTimePoint("-2d", now), now - 2 * 86400 * kSec);
  EXPECT_EQ(*base::ParseTimePoint("1767225600", now), 1767225600 * kSec);
  EXPECT_EQ(*base::ParseTimePoint("2026-01-01T00:00:00Z", now), 1767225600 * kSec);
  EXPECT_EQ(*base::ParseTimePoint("2026-01-01T00:01Z", now), 1767225660 * kSec);
  EXPECT_TRUE(base::ParseTimePoint("2026-01-01 00:00", now).ok());  // local time
  for (const char* bad :
       {"", "-5", "yesterday", "2026-13-01T00:00Z", "2026-01-01T00:00:00Zx", "2026-01-01", "-5x"})
    EXPECT_FALSE(base::ParseTimePoint(bad, now).ok()) << bad;
}

// The report of a range carries the host telemetry stored for it, the diagnosis uses it, and a
// GPU price turns it into cost per request; a range with telemetry but no profile still reports.
TEST_F(ReportCommandTest, TelemetryDiagnosisAndCostOfTheRange) {
  const int64_t now = 1'800'000'000 * kSec;
  Populate(now - 120 * kSec, 6);
  {
    auto store = store::SqliteStore::Open(dir_, store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    // An engine window: 100 requests and 5000 generated tokens over 10 s, queue 1 s of 2 s e2e.
    telemetry::scrape::EngineMetricsWindow e;
    e.start_unix_ns = now - 120 * kSec;
    e.end_unix_ns = now - 110 * kSec;
    e.engine = "vllm";
    e.scrapes = 10;
    e.covered_ns = 10 * kSec;
    using telemetry::scrape::CounterSignal;
    using telemetry::scrape::Stage;
    for (CounterSignal c : {CounterSignal::kRequestsFinished, CounterSignal::kGenerationTokens}) {
      e.counters_present |= 1u << static_cast<int>(c);
      e.counters[static_cast<size_t>(c)] = c == CounterSignal::kRequestsFinished ? 100 : 5000;
    }
    for (Stage st : {Stage::kQueue, Stage::kE2e}) {
      e.stages_present |= 1u << static_cast<int>(st);
      auto& h = e.stages[static_cast<size_t>(st)];
      h.count = 100;
      h.sum = st == Stage::kQueue ? 100 : 200;
    }
    base::JsonWriter w;
    e.WriteJson(w);
    store::TelemetryRecord r{"engine", e.start_unix_ns, e.end_unix_ns, now, w.str()};
    ASSERT_TRUE((*store)->AppendTelemetry(r).ok());
  }
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = now;
  options.format = report::ReportFormat::kJson;
  options.gpu_hourly_usd = 3.6;  // $0.001 per GPU-second
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  const std::string json = out.str();
  EXPECT_NE(json.find("\"engine\": \"vllm\""), std::string::npos);
  EXPECT_NE(json.find("\"cost\": {"), std::string::npos) << json.substr(json.size() - 600);
  // Queue is half of e2e (over the batching threshold): the diagnosis finds batching, from the
  // engine's stage latencies (FullWindow's odd numbers make another finding primary).
  EXPECT_NE(json.find("\"id\": \"batching\""), std::string::npos) << json.substr(0, 3000);
  EXPECT_NE(json.find("\"name\": \"queue_share_pct\""), std::string::npos) << json.substr(0, 3000);

  // Without a price there is no cost, and the key is null.
  options.gpu_hourly_usd.reset();
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0);
  EXPECT_NE(out.str().find("\"cost\": null"), std::string::npos);
  options.gpu_prices_path = dir_ + "/prices.txt";
  {
    std::ofstream f(options.gpu_prices_path);
    f << "H100 = \n";
  }
  out.str("");
  err.str("");
  EXPECT_EQ(RunReport(options, out, err), 2);
  EXPECT_NE(err.str().find("prices.txt: line 1"), std::string::npos) << err.str();
}

// A 25% hardware slowdown NVML reported for the range is a `throttling` finding, and
// the GPU metrics show the reason in full (it was cut to "sw..." in a 100-column table).
TEST_F(ReportCommandTest, HardwareSlowdownIsAThrottlingFinding) {
  const int64_t now = 1'800'000'000 * kSec;
  Populate(now - 120 * kSec, 6);
  AddGpuMetrics(now - 120 * kSec, 0.25);
  ReportOptions options;
  options.state_dir = dir_;
  options.now_unix_ns = now;
  options.format = report::ReportFormat::kJson;
  std::ostringstream out, err;
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"id\": \"throttling\""), std::string::npos)
      << out.str().substr(0, 3000);
  EXPECT_NE(out.str().find("\"name\": \"hw_slowdown_pct\""), std::string::npos);
  options.format = report::ReportFormat::kText;
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("throttling (warning"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("hardware slowdown 25%"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("hw_slowdown 25%"), std::string::npos) << out.str();
  // Without a slowdown there is no such finding.
  for (const auto& entry : std::filesystem::directory_iterator(dir_))
    std::filesystem::remove_all(entry.path());
  Populate(now - 120 * kSec, 6);
  AddGpuMetrics(now - 120 * kSec);
  options.format = report::ReportFormat::kJson;
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_EQ(out.str().find("\"id\": \"throttling\""), std::string::npos);
}

// Exit 6 for a state dir another agent holds: chosen by the error's code (kAlreadyExists), not by
// searching its message.
TEST(RunAgentTest, AnotherAgentOnTheStateDirIsExit6) {
  inferscope::testing::TempDir dir;
  agentd::AgentOptions options;
  options.state_dir = dir.path();
  options.http_port = -1;
  options.telemetry_enabled = false;
  options.log = [](std::string_view) {};
  agentd::Agent first(options);
  ASSERT_TRUE(first.Start().ok());
  EXPECT_EQ(RunAgent(options), kExitAgentAlreadyRunning);
  first.Stop();
  EXPECT_TRUE(first.Wait().ok());
}

}  // namespace
}  // namespace inferscope::cli
