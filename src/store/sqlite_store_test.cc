// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/store/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/import/trace_importer.h"
#include "src/store/rollups.h"
#include "src/wire/test_frames.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"
#include "tests/temp_dir.h"
#include "tests/test_traces.h"

namespace inferscope::store {
namespace {

using wire::testing::MakeHello;

namespace fs = std::filesystem;
using Mode = SqliteStore::Mode;

using ::inferscope::testing::TempDir;

model::ProfileWindow MakeWindow(uint32_t pid, int32_t rank, int64_t start_ns) {
  model::ProfileWindow w = wire::testing::FullWindow();
  w.processes.resize(1);
  w.processes[0].pid = pid;
  w.processes[0].rank = rank;
  const int64_t shift = start_ns - w.start_ns;
  w.start_ns += shift;
  w.end_ns += shift;
  return w;
}

PendingWindow Pending(int64_t process_id, const model::ProfileWindow& w, int64_t received_ns) {
  PendingWindow p;
  p.process_id = process_id;
  p.start_ns = w.start_ns;
  p.end_ns = w.end_ns;
  p.received_ns = received_ns;
  wire::EncodeWindow(w, &p.encoded);
  return p;
}

constexpr int64_t kSec = 1'000'000'000;

TEST(SqliteStoreTest, MigrationsAreIdempotentAndReopenKeepsData) {
  TempDir dir;
  {
    auto store = SqliteStore::Open(dir.path() + "/state", Mode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    EXPECT_EQ((*store)->schema_version(), SqliteStore::LatestSchemaVersion());
    auto id = (*store)->UpsertProcess(MakeHello(7, 0), 5);
    ASSERT_TRUE(id.ok()) << id.status().message();
    ASSERT_TRUE((*store)->AppendWindow(Pending(*id, MakeWindow(7, 0, 100 * kSec), 6)).ok());
  }
  EXPECT_EQ(fs::status(dir.path() + "/state").permissions() & fs::perms::all, fs::perms::owner_all);
  for (int i = 0; i < 2; ++i) {
    auto store = SqliteStore::Open(dir.path() + "/state", Mode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    EXPECT_EQ((*store)->schema_version(), SqliteStore::LatestSchemaVersion());
    auto summary = (*store)->Summary();
    ASSERT_TRUE(summary.ok());
    EXPECT_EQ(summary->windows, 1u);
    EXPECT_EQ(summary->processes, 1u);
    // The same identity maps to the same row.
    auto id = (*store)->UpsertProcess(MakeHello(7, 0), 50);
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(*id, 1);
  }
  auto reader = SqliteStore::Open(dir.path() + "/state", Mode::kReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto all = (*reader)->QueryWindows({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->windows.size(), 1u);
  EXPECT_EQ(all->processes.at(1).last_seen_ns, 50);
}

// A long-lived reader (`top` keeps one open) sees the windows written after it opened: it holds no
// read transaction between calls, so it is never pinned to the snapshot it opened on.
TEST(SqliteStoreTest, ReaderSeesLaterWrites) {
  TempDir dir;
  auto writer = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  auto id = (*writer)->UpsertProcess(MakeHello(7, 0), 5);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE((*writer)->AppendWindow(Pending(*id, MakeWindow(7, 0, 10 * kSec), 1)).ok());
  auto reader = SqliteStore::Open(dir.path(), Mode::kReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto before = (*reader)->Summary();
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->windows, 1u);
  ASSERT_TRUE((*writer)->AppendWindow(Pending(*id, MakeWindow(7, 0, 20 * kSec), 2)).ok());
  auto after = (*reader)->Summary();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->windows, 2u);
  EXPECT_GT(after->last_end_ns, before->last_end_ns);
  auto all = (*reader)->QueryWindows({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->windows.size(), 2u);
}

TEST(SqliteStoreTest, RoundTripAndRangeQueries) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  SqliteStore& s = **store;
  auto a = s.UpsertProcess(MakeHello(10, 0), 1);
  auto b = s.UpsertProcess(MakeHello(11, 1), 1);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  std::vector<model::ProfileWindow> written;
  ASSERT_TRUE(s.Begin().ok());
  for (int i = 0; i < 6; ++i) {
    const bool first = i % 2 == 0;
    written.push_back(MakeWindow(first ? 10 : 11, first ? 0 : 1, (i / 2) * 10 * kSec));
    ASSERT_TRUE(s.AppendWindow(Pending(first ? *a : *b, written.back(), i)).ok());
  }
  ASSERT_TRUE(s.Commit().ok());
  ASSERT_TRUE(s.MarkProcessEnded(*a, 99).ok());

  auto all = s.QueryWindows({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->windows.size(), 6u);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_EQ(wire::testing::FirstDifference(written[i], all->windows[i].window), "") << i;
  EXPECT_EQ(all->processes.at(*a).hello, MakeHello(10, 0));
  EXPECT_EQ(all->processes.at(*a).ended_ns, 99);
  EXPECT_EQ(all->corrupt_windows, 0u);

  // Overlap semantics: [15 s, 25 s) touches the windows starting at 10 s and 20 s.
  WindowQuery q;
  q.from_ns = 15 * kSec;
  q.to_ns = 25 * kSec;
  auto range = s.QueryWindows(q);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->windows.size(), 4u);
  q.rank = 1;
  range = s.QueryWindows(q);
  ASSERT_TRUE(range.ok());
  ASSERT_EQ(range->windows.size(), 2u);
  EXPECT_EQ(range->windows[0].process_id, *b);
  q.rank.reset();
  q.pid = 10;
  range = s.QueryWindows(q);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->windows.size(), 2u);
  q.pid = 12345;
  range = s.QueryWindows(q);
  ASSERT_TRUE(range.ok());
  EXPECT_TRUE(range->windows.empty());
  EXPECT_TRUE(range->processes.empty());
}

TEST(SqliteStoreTest, RetentionByAgeAndSize) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  SqliteStore& s = **store;
  auto a = s.UpsertProcess(MakeHello(10, 0), 0);
  auto b = s.UpsertProcess(MakeHello(11, 1), 0);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(s.AppendWindow(Pending(*a, MakeWindow(10, 0, i * 10 * kSec), i * kSec)).ok());

  // Age: received before 100 s - 93 s = 7 s -> windows 0..6 go.
  auto r = s.ApplyRetention(93 * kSec, 0, 100 * kSec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->deleted_windows, 7u);
  EXPECT_EQ(r->deleted_processes, 1u);  // b: no windows, last seen at 0
  auto summary = s.Summary();
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->windows, 3u);
  EXPECT_EQ(summary->processes, 1u);
  EXPECT_EQ(summary->first_start_ns, 70 * kSec);

  // Size: a cap just under the current total removes exactly the oldest window.
  r = s.ApplyRetention(0, summary->payload_bytes - 1, 100 * kSec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->deleted_windows, 1u);
  summary = s.Summary();
  EXPECT_EQ(summary->windows, 2u);
  EXPECT_EQ(summary->first_start_ns, 80 * kSec);
  // A cap above the total deletes nothing.
  r = s.ApplyRetention(0, summary->payload_bytes, 100 * kSec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->deleted_windows, 0u);
}

TEST(SqliteStoreTest, SummaryCountsHoldThroughRollbackAndDeletes) {
  // Summary reads the count and bytes kept by triggers; they must equal what a scan finds after
  // commits, a rolled-back batch and both kinds of retention.
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  SqliteStore& s = **store;
  auto a = s.UpsertProcess(MakeHello(10, 0), 0);
  ASSERT_TRUE(a.ok());
  auto scanned = [&dir]() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2((dir.path() + "/" + SqliteStore::kFileName).c_str(), &db,
                              SQLITE_OPEN_READONLY, nullptr),
              SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT count(*), coalesce(sum(length(payload)), 0),"
                                 " coalesce(max(end_ns), 0) FROM windows",
                                 -1, &q, nullptr),
              SQLITE_OK);
    EXPECT_EQ(sqlite3_step(q), SQLITE_ROW);
    std::array<int64_t, 3> out = {sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
                                  sqlite3_column_int64(q, 2)};
    sqlite3_finalize(q);
    sqlite3_close(db);
    return out;
  };
  auto expect_summary_matches = [&](const char* when) {
    auto summary = s.Summary();
    ASSERT_TRUE(summary.ok());
    const auto want = scanned();
    EXPECT_EQ(static_cast<int64_t>(summary->windows), want[0]) << when;
    EXPECT_EQ(static_cast<int64_t>(summary->payload_bytes), want[1]) << when;
    EXPECT_EQ(summary->last_end_ns, want[2]) << when;
  };
  ASSERT_TRUE(s.Begin().ok());
  for (int i = 0; i < 6; ++i)
    ASSERT_TRUE(s.AppendWindow(Pending(*a, MakeWindow(10, 0, i * 10 * kSec), i * kSec)).ok());
  ASSERT_TRUE(s.Commit().ok());
  expect_summary_matches("after a commit");
  EXPECT_EQ(s.Summary()->windows, 6u);
  ASSERT_TRUE(s.Begin().ok());
  ASSERT_TRUE(s.AppendWindow(Pending(*a, MakeWindow(10, 0, 60 * kSec), 6 * kSec)).ok());
  ASSERT_TRUE(s.Rollback().ok());
  expect_summary_matches("after a rollback");
  EXPECT_EQ(s.Summary()->windows, 6u);
  // A longer window that is not the last to start still gives the newest end.
  model::ProfileWindow long_window = MakeWindow(10, 0, 5 * kSec);
  long_window.end_ns = 500 * kSec;
  ASSERT_TRUE(s.AppendWindow(Pending(*a, long_window, 7 * kSec)).ok());
  expect_summary_matches("after a long window");
  EXPECT_EQ(s.Summary()->last_end_ns, 500 * kSec);
  ASSERT_TRUE(s.ApplyRetention(97 * kSec, 0, 100 * kSec).ok());  // received before 3 s
  expect_summary_matches("after retention by age");
  auto summary = s.Summary();
  ASSERT_TRUE(summary.ok());
  ASSERT_TRUE(s.ApplyRetention(0, summary->payload_bytes / 2, 100 * kSec).ok());
  expect_summary_matches("after retention by size");
  EXPECT_LT(s.Summary()->windows, summary->windows);
}

TEST(SqliteStoreTest, CorruptOrMissingDatabaseIsAClearError) {
  TempDir dir;
  auto missing = SqliteStore::Open(dir.path(), Mode::kReadOnly);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), base::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("inferscope agent"), std::string::npos);

  std::ofstream(dir.path() + "/inferscope.db") << std::string(8192, 'x');
  for (Mode mode : {Mode::kReadWrite, Mode::kReadOnly}) {
    auto store = SqliteStore::Open(dir.path(), mode);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), base::StatusCode::kDataLoss) << store.status().message();
    EXPECT_NE(store.status().message().find("not a valid inferscope store"), std::string::npos)
        << store.status().message();
  }
}

TEST(SqliteStoreTest, NewerSchemaIsRefused) {
  TempDir dir;
  { ASSERT_TRUE(SqliteStore::Open(dir.path(), Mode::kReadWrite).ok()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() + "/inferscope.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), base::StatusCode::kUnsupported);
  EXPECT_NE(store.status().message().find("upgrade inferscope"), std::string::npos);
}

TEST(SqliteStoreTest, CorruptPayloadIsSkippedAndCounted) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  auto id = (*store)->UpsertProcess(MakeHello(1, 0), 0);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE((*store)->AppendWindow(Pending(*id, MakeWindow(1, 0, 0), 0)).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() + "/inferscope.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO windows (process_id, start_ns, end_ns, received_ns, payload)"
                         " VALUES (1, 0, 10, 0, x'01ffff0000deadbeef')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto all = (*store)->QueryWindows({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->windows.size(), 1u);
  EXPECT_EQ(all->corrupt_windows, 1u);
  EXPECT_FALSE(SqliteStore::DecompressPayload("").ok());
}

// Launch configurations (window format 1.5) are part of the stored payload: no schema change.
// They come back from a window row and merged in a rollup row; a row written before 1.5 (the
// same payload with the old version and no configurations) still reads, without them.
TEST(SqliteStoreTest, LaunchConfigsRoundTripAndOlderRowsReadWithout) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  SqliteStore& s = **store;
  auto id = s.UpsertProcess(MakeHello(5, 0), 0);
  ASSERT_TRUE(id.ok());
  const model::ProfileWindow a = MakeWindow(5, 0, 0);
  const model::ProfileWindow b = MakeWindow(5, 0, 10 * kSec);
  const model::KernelStats& row = a.processes[0].devices[0].top_kernels[0];
  ASSERT_EQ(row.configs.size(), 4u);
  ASSERT_TRUE(s.AppendWindow(Pending(*id, a, 1)).ok());
  ASSERT_TRUE(s.AppendWindow(Pending(*id, b, 2)).ok());
  // A 1.4 payload: the configurations dropped and the version of then.
  model::ProfileWindow old = MakeWindow(5, 0, 20 * kSec);
  for (model::DeviceProfile& d : old.processes[0].devices)
    for (model::KernelStats& k : d.top_kernels) {
      k.configs.clear();
      k.distinct_configs = 0;
    }
  PendingWindow old_row = Pending(*id, old, 3);
  // (The payload opens with the format's major and minor: rewritten to 1.4 below.)
  ASSERT_EQ(old_row.encoded.substr(0, 2),
            std::string({static_cast<char>(wire::kWindowFormatMajor),
                         static_cast<char>(wire::kWindowFormatMinor)}));
  old_row.encoded[1] = 4;
  ASSERT_TRUE(s.AppendWindow(old_row).ok());
  // A window in the next 10-minute bucket closes the first.
  ASSERT_TRUE(s.AppendWindow(Pending(*id, MakeWindow(5, 0, 700 * kSec), 4)).ok());

  auto all = s.QueryWindows({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->windows.size(), 4u);
  EXPECT_EQ(all->corrupt_windows, 0u);
  EXPECT_EQ(all->windows[0].window.processes[0].devices[0].top_kernels[0].configs, row.configs);
  EXPECT_EQ(all->windows[0].window.processes[0].devices[0].top_kernels[0].distinct_configs, 9u);
  EXPECT_EQ(wire::testing::FirstDifference(old, all->windows[2].window), "");
  EXPECT_TRUE(all->windows[2].window.processes[0].devices[0].top_kernels[0].configs.empty());

  // The 10-minute rollup of the first bucket: the three windows merged, configurations joined
  // (each listed twice with configurations: counts double; distinct an upper bound, 9 + 9 - 4
  // listed on both sides).
  std::vector<model::ProfileWindow> rows;
  ScanStats stats;
  WindowQuery q;
  q.from_ns = 0;
  q.to_ns = 600 * kSec;
  ASSERT_TRUE(
      s.ScanRollups(
           kRollupTierNs[0], q,
           [&](int64_t, uint64_t, model::ProfileWindow& w) { rows.push_back(std::move(w)); },
           &stats)
          .ok());
  ASSERT_EQ(rows.size(), 1u);
  const model::KernelStats* merged = nullptr;
  for (const model::KernelStats& k : rows[0].processes[0].devices[0].top_kernels)
    if (k.name == row.name) merged = &k;
  ASSERT_NE(merged, nullptr);
  ASSERT_EQ(merged->configs.size(), 4u);
  EXPECT_EQ(merged->configs[0].count, 2 * row.configs[0].count);
  EXPECT_EQ(merged->configs[0].total_ns, 2 * row.configs[0].total_ns);
  EXPECT_EQ(merged->distinct_configs, 9u + 9u - 4u);
}

// Stored bytes per window on the real traces' 10 s windows (the steady-state case of the live
// path), against the wire size. Kernel names dominate a window and repeat within it (top kernels,
// sync targets), which is what zlib removes.
TEST(SqliteStoreTest, StoredBytesPerWindowOnRealTraces) {
  INFERSCOPE_REQUIRE_SHARED_TRACES();
  std::vector<std::string> traces;
  for (const auto& e : fs::recursive_directory_iterator(inferscope::testing::SharedTracesDir())) {
    const std::string p = e.path().string();
    if (e.is_regular_file() && (p.ends_with(".json.gz") || p.ends_with(".sqlite")))
      traces.push_back(p);
  }
  std::sort(traces.begin(), traces.end());
  ASSERT_FALSE(traces.empty());
  uint64_t total_wire = 0, total_stored = 0, total_gpu_windows = 0;
  std::printf("%-60s %6s %10s %10s %11s\n", "trace (10 s windows)", "gpus", "wire B/gw",
              "stored B/gw", "MB/gpu/day");
  for (const std::string& path : traces) {
    model::NameTable names;
    model::KernelClassifier classifier;
    aggregate::AggregatorOptions options;
    options.window_ns = 10 * kSec;
    std::vector<model::ProfileWindow> windows;
    aggregate::Aggregator aggregator(options, &names, &classifier,
                                     [&](model::ProfileWindow&& w) { windows.push_back(w); });
    auto stats = import::ImportTrace(path, &names, &aggregator);
    ASSERT_TRUE(stats.ok()) << path << ": " << stats.status().message();
    aggregator.Finish();
    uint64_t wire_bytes = 0, stored_bytes = 0, gpu_windows = 0;
    // The live path sends one window per process: store them that way.
    for (const model::ProfileWindow& w : windows) {
      for (model::ProcessProfile p : w.processes) {
        // A trace is a few seconds long; tile each timeline to the 100 bins of a GPU busy for
        // the whole 10 s (the worst case, as the wire size test does).
        for (model::DeviceProfile& d : p.devices) {
          model::Timeline& t = d.timeline;
          const size_t real = t.busy_ns.size();
          for (size_t i = real; real > 0 && i < 100; ++i) {
            t.busy_ns.push_back(t.busy_ns[i % real]);
            t.category_ns.push_back(t.category_ns[i % real]);
          }
        }
        model::ProfileWindow one;
        one.start_ns = w.start_ns;
        one.end_ns = w.end_ns;
        one.processes.push_back(p);
        std::string encoded;
        wire::EncodeWindow(one, &encoded);
        auto stored = SqliteStore::CompressPayload(encoded);
        ASSERT_TRUE(stored.ok());
        wire_bytes += encoded.size();
        stored_bytes += stored->size();
        gpu_windows += std::max<size_t>(p.devices.size(), 1);
      }
    }
    if (gpu_windows == 0) continue;
    std::printf("%-60s %6llu %10llu %10llu %11.1f\n",
                fs::path(path).filename().string().substr(0, 60).c_str(),
                static_cast<unsigned long long>(gpu_windows),
                static_cast<unsigned long long>(wire_bytes / gpu_windows),
                static_cast<unsigned long long>(stored_bytes / gpu_windows),
                static_cast<double>(stored_bytes) / gpu_windows * 8640 / 1e6);
    total_wire += wire_bytes;
    total_stored += stored_bytes;
    total_gpu_windows += gpu_windows;
  }
  ASSERT_GT(total_gpu_windows, 0u);
  std::printf("all: wire %.0f B, stored %.0f B per GPU-window (%.0f%%); %.1f MB/GPU/day stored\n",
              static_cast<double>(total_wire) / total_gpu_windows,
              static_cast<double>(total_stored) / total_gpu_windows,
              100.0 * total_stored / total_wire,
              static_cast<double>(total_stored) / total_gpu_windows * 8640 / 1e6);
  EXPECT_LT(total_stored, total_wire);
  // The store's budget: 50 MB per GPU per day at one 10 s window per GPU.
  EXPECT_LT(static_cast<double>(total_stored) / total_gpu_windows * 8640, 50e6);
}

TEST(SqliteStoreTest, TelemetryRoundTripRangeAndRetention) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  for (int i = 0; i < 3; ++i) {
    TelemetryRecord r;
    r.kind = i == 2 ? "spans" : "gpu";
    r.start_ns = i * 10;
    r.end_ns = i * 10 + 10;
    r.received_ns = 100 + i;
    r.json = "{\"i\": " + std::to_string(i) + "}";
    ASSERT_TRUE((*store)->AppendTelemetry(r).ok());
  }
  auto gpu = (*store)->QueryTelemetry("gpu", 0, 100);
  ASSERT_TRUE(gpu.ok());
  ASSERT_EQ(gpu->size(), 2u);
  EXPECT_EQ((*gpu)[1].json, "{\"i\": 1}");
  EXPECT_EQ((*gpu)[1].start_ns, 10);
  EXPECT_EQ((*store)->QueryTelemetry("gpu", 10, 20)->size(), 1u);  // overlap, not touch
  EXPECT_EQ((*store)->QueryTelemetry("spans", 0, 100)->size(), 1u);
  EXPECT_EQ((*store)->QueryTelemetry("engine", 0, 100)->size(), 0u);
  // Retention by age: received before 102 goes.
  auto r = (*store)->ApplyRetention(/*max_age_ns=*/10, 0, /*now_ns=*/112);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->deleted_telemetry, 2u);
  EXPECT_EQ((*store)->QueryTelemetry("gpu", 0, 100)->size(), 0u);
  EXPECT_EQ((*store)->QueryTelemetry("spans", 0, 100)->size(), 1u);
}

TEST(SqliteStoreTest, NewStoreIsOwnerOnly) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), SqliteStore::Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() + "/inferscope.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir.path() + "/inferscope.db-wal").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u);
}

}  // namespace
}  // namespace inferscope::store
