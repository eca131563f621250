// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/report_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "src/agent/store/sqlite_store.h"
#include "src/base/time_point.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"

namespace inferscope::cli {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kSec = 1'000'000'000;

class ReportCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/inferscope_report_XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Two processes (ranks 0 and 1), `n` consecutive 10 s windows each from `start_ns`.
  void Populate(int64_t start_ns, int n) {
    auto store = agent::SqliteStore::Open(dir_, agent::SqliteStore::Mode::kReadWrite);
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
        agent::PendingWindow p;
        p.process_id = *id;
        p.start_ns = w.start_ns;
        p.end_ns = w.end_ns;
        p.received_ns = w.end_ns;
        wire::EncodeWindow(w, &p.encoded);
        ASSERT_TRUE((*store)->AppendWindow(p).ok());
      }
    }
  }
  std::string dir_;
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
  EXPECT_NE(out.str().find("6 windows"), std::string::npos);

  options.format = report::ReportFormat::kText;
  options.rank = 1;
  options.device = 2;  // FullWindow: process 1 has devices 1 and 2
  out.str("");
  ASSERT_EQ(RunReport(options, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("ranks: 1"), std::string::npos) << out.str();
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
  EXPECT_NE(out.str().find("2 windows"), std::string::npos) << out.str();
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

}  // namespace
}  // namespace inferscope::cli
