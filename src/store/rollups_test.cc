// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Rollup tiers in the store: each row equals the merge of its windows (through batches,
// rollbacks, restarts and late windows), the v4 -> v5 migration, and retention that shrinks the
// file.
#include "src/store/rollups.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "src/store/sqlite_store.h"
#include "src/store/test_rollup_windows.h"
#include "src/wire/test_frames.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"
#include "tests/temp_dir.h"

namespace inferscope::store {
namespace {

namespace fs = std::filesystem;
using Mode = SqliteStore::Mode;
using ::inferscope::store::testing::kSec;
using ::inferscope::store::testing::PendingOf;
using ::inferscope::store::testing::RollupTestWindow;
using ::inferscope::testing::TempDir;
using ::inferscope::wire::testing::MakeHello;

constexpr int64_t kHour = 3600 * kSec;
// A ragged start: 37 min 20 s into an hour.
const int64_t kT0 = FloorTo(1'700'000'000 * kSec, kHour) + 37 * 60 * kSec + 20 * kSec;

struct Appended {
  int64_t process_id;
  model::ProfileWindow window;
};

// Appends windows of every process every `step_ns` in [from, to), `batch` per transaction.
void Fill(SqliteStore& store, const std::vector<int64_t>& process_ids, int64_t from_ns,
          int64_t to_ns, int64_t step_ns, std::vector<Appended>* appended, int batch = 37) {
  int in_batch = 0;
  ASSERT_TRUE(store.Begin().ok());
  int index = static_cast<int>(appended->size());
  for (int64_t t = from_ns; t < to_ns; t += step_ns) {
    for (size_t p = 0; p < process_ids.size(); ++p) {
      model::ProfileWindow w =
          RollupTestWindow(100 + static_cast<uint32_t>(p), static_cast<int32_t>(p), t, index++);
      ASSERT_TRUE(store.AppendWindow(PendingOf(process_ids[p], w, t + 11 * kSec), &w).ok());
      appended->push_back({process_ids[p], std::move(w)});
      if (++in_batch == batch) {
        ASSERT_TRUE(store.Commit().ok());
        ASSERT_TRUE(store.Begin().ok());
        in_batch = 0;
      }
    }
  }
  ASSERT_TRUE(store.Commit().ok());
}

// Every stored rollup row equals the fold (FoldWindow, in append order) of the appended windows
// starting in its bucket; every sealed bucket with windows has its row. Returns the rows checked.
int ExpectRowsEqualMerges(SqliteStore& store, const std::vector<Appended>& appended) {
  auto coverage = store.Coverage();
  EXPECT_TRUE(coverage.ok());
  int rows = 0;
  for (int64_t tier : kRollupTierNs) {
    std::map<std::pair<int64_t, int64_t>, std::pair<model::ProfileWindow, uint64_t>> expected;
    for (const Appended& a : appended) {
      if (a.window.start_ns < coverage->from_ns) continue;
      auto& [merged, count] = expected[{FloorTo(a.window.start_ns, tier), a.process_id}];
      FoldWindow(a.window, RollupBinNs(tier), RollupMergeOptions(), &merged);
      ++count;
    }
    std::set<std::pair<int64_t, int64_t>> seen;
    ScanStats stats;
    WindowQuery all;
    // Rows are keyed by bucket start; recover it from the merged window's first start.
    EXPECT_TRUE(
        store
            .ScanRollups(
                tier, all,
                [&](int64_t process_id, uint64_t windows, model::ProfileWindow& row) {
                  const std::pair<int64_t, int64_t> key{FloorTo(row.start_ns, tier), process_id};
                  auto it = expected.find(key);
                  ASSERT_NE(it, expected.end()) << tier << " " << row.start_ns;
                  EXPECT_EQ(windows, it->second.second) << tier;
                  EXPECT_EQ(wire::testing::FirstDifference(it->second.first, row), "")
                      << "tier " << tier << " bucket " << key.first;
                  std::string a, b;
                  wire::EncodeWindow(it->second.first, &a);
                  wire::EncodeWindow(row, &b);
                  EXPECT_EQ(a, b);
                  seen.insert(key);
                  ++rows;
                },
                &stats)
            .ok());
    for (const auto& [key, value] : expected) {
      if (key.first + tier <= coverage->sealed_ns) {
        EXPECT_TRUE(seen.count(key))
            << "sealed bucket without a row: tier " << tier << " at " << key.first;
      }
    }
  }
  return rows;
}

std::vector<int64_t> TwoProcesses(SqliteStore& store) {
  std::vector<int64_t> ids;
  for (uint32_t p = 0; p < 2; ++p) {
    auto id = store.UpsertProcess(MakeHello(100 + p, static_cast<int32_t>(p)), kT0);
    EXPECT_TRUE(id.ok());
    ids.push_back(*id);
  }
  return ids;
}

TEST(RollupTest, RebinningNestedBinsEqualsMergeTimeline) {
  // RebinTimelines adds nested bins directly; it must give what MergeTimeline's proportional
  // split gives on a seeded grid (trailing empty bins aside), for aligned and offset origins.
  for (int64_t offset_bins : {0, 3, 17}) {
    for (int64_t bin_ns : {kSec, 10 * kSec, 60 * kSec}) {
      model::ProfileWindow w = RollupTestWindow(100, 0, kT0 + offset_bins * 100'000'000, 5);
      model::ProfileWindow fast = w;
      RebinTimelines(bin_ns, &fast);
      for (size_t d = 0; d < w.processes[0].devices.size(); ++d) {
        const model::Timeline& in = w.processes[0].devices[d].timeline;
        model::Timeline want;
        want.bin_ns = bin_ns;
        want.origin_ns = FloorTo(in.origin_ns, bin_ns);
        want.busy_ns.assign(1, 0);
        want.category_ns.assign(1, {});
        model::MergeTimeline(in, &want, 100'000);
        while (want.busy_ns.size() > 1 && want.busy_ns.back() == 0 &&
               want.category_ns.back() == std::array<int64_t, model::kCategoryCount>{}) {
          want.busy_ns.pop_back();
          want.category_ns.pop_back();
        }
        EXPECT_EQ(fast.processes[0].devices[d].timeline, want)
            << "offset " << offset_bins << " bin " << bin_ns << " device " << d;
      }
    }
  }
}

TEST(RollupTest, RowsEqualTheMergeOfTheirWindows) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  std::vector<Appended> appended;
  const auto ids = TwoProcesses(**store);
  Fill(**store, ids, kT0, kT0 + 150 * 60 * kSec, 10 * kSec, &appended);
  auto coverage = (*store)->Coverage();
  ASSERT_TRUE(coverage.ok());
  EXPECT_EQ(coverage->from_ns, 0);  // a new store: the tiers cover everything
  // Sealed up to the last whole 10 min bucket 2 min behind the newest window.
  EXPECT_EQ(coverage->sealed_ns,
            FloorTo(kT0 + 150 * 60 * kSec - 10 * kSec - 120 * kSec, 600 * kSec));
  // 2 processes: 15 ten-minute and 3 hour buckets sealed (the first of each partial), each with
  // a row.
  EXPECT_EQ(ExpectRowsEqualMerges(**store, appended), 2 * (15 + 3));
}

TEST(RollupTest, RollbackUndoesTheFoldAndRestartRebuildsOpenBuckets) {
  TempDir dir;
  std::vector<Appended> appended;
  std::vector<int64_t> ids;
  {
    auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    ids = TwoProcesses(**store);
    Fill(**store, ids, kT0, kT0 + 30 * 60 * kSec, 10 * kSec, &appended);
    // A batch that fails is rolled back: its windows must leave the open buckets too.
    ASSERT_TRUE((*store)->Begin().ok());
    model::ProfileWindow lost = RollupTestWindow(100, 0, kT0 + 30 * 60 * kSec, 999);
    ASSERT_TRUE((*store)->AppendWindow(PendingOf(ids[0], lost, kT0), &lost).ok());
    ASSERT_TRUE((*store)->Rollback().ok());
    // A bigger batch rolled back: 15 min of windows (closing and sealing buckets, so rollup rows
    // are written inside it) and a late window rewriting a sealed row. Rows and open buckets must
    // both come back to what they were.
    ASSERT_TRUE((*store)->Begin().ok());
    for (int64_t t = kT0 + 30 * 60 * kSec; t < kT0 + 45 * 60 * kSec; t += 10 * kSec) {
      model::ProfileWindow w = RollupTestWindow(100, 0, t, 777);
      ASSERT_TRUE((*store)->AppendWindow(PendingOf(ids[0], w, t), &w).ok());
    }
    model::ProfileWindow late = RollupTestWindow(101, 1, kT0 + 5 * kSec, 778);
    ASSERT_TRUE((*store)->AppendWindow(PendingOf(ids[1], late, kT0), &late).ok());
    ASSERT_TRUE((*store)->Rollback().ok());
    Fill(**store, ids, kT0 + 30 * 60 * kSec, kT0 + 50 * 60 * kSec, 10 * kSec, &appended);
    // 10 min buckets up to 1:20 after the first hour's start, the first hour.
    EXPECT_EQ(ExpectRowsEqualMerges(**store, appended), 2 * (5 + 1));
  }  // closed without writing the open buckets (as a crash would)
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  Fill(**store, ids, kT0 + 50 * 60 * kSec, kT0 + 200 * 60 * kSec, 10 * kSec, &appended);
  EXPECT_EQ(ExpectRowsEqualMerges(**store, appended), 2 * (20 + 3));
}

TEST(RollupTest, LateWindowIsMergedIntoItsSealedRow) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  std::vector<Appended> appended;
  const auto ids = TwoProcesses(**store);
  Fill(**store, ids, kT0, kT0 + 90 * 60 * kSec, 10 * kSec, &appended);
  // A window from 80 minutes ago (a process whose windows were held up) arrives now; its buckets
  // in every tier are sealed. The row must take it, in its own transaction or a batch's.
  model::ProfileWindow late = RollupTestWindow(100, 0, kT0 + 10 * 60 * kSec + 5 * kSec, 4242);
  ASSERT_TRUE((*store)->AppendWindow(PendingOf(ids[0], late, kT0), &late).ok());
  appended.push_back({ids[0], late});
  EXPECT_EQ(ExpectRowsEqualMerges(**store, appended), 2 * (9 + 2));
}

TEST(RollupTest, ScanFindsALongWindowThatStartedBeforeTheRange) {
  // Scans walk the start index from `from - longest window`: a window longer than all before it
  // must still be found by a range that begins in its middle.
  TempDir dir;
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok());
  const auto ids = TwoProcesses(**store);
  std::vector<Appended> appended;
  Fill(**store, ids, kT0, kT0 + 10 * 60 * kSec, 10 * kSec, &appended);
  model::ProfileWindow long_window = RollupTestWindow(100, 0, kT0 + 20 * 60 * kSec, 7);
  long_window.end_ns = long_window.start_ns + 2 * kHour;
  ASSERT_TRUE((*store)->AppendWindow(PendingOf(ids[0], long_window, kT0), &long_window).ok());
  WindowQuery q;
  q.from_ns = kT0 + 80 * 60 * kSec;  // an hour into the long window; open-ended
  auto found = (*store)->QueryWindows(q);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->windows.size(), 1u);
  EXPECT_EQ(found->windows[0].window.end_ns, long_window.end_ns);
  q.from_ns = kT0 + 5 * 60 * kSec;
  q.to_ns = kT0 + 6 * 60 * kSec;
  found = (*store)->QueryWindows(q);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->windows.size(), 2u * 6);  // starts 5:00 through 5:50 (4:50 ends at 5:00)
}

TEST(RollupTest, ParsesRollupRetention) {
  auto r = ParseRollupRetention("1h=730d");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->max_age_ns[0], RollupRetention().max_age_ns[0]);  // not named: default
  EXPECT_EQ(r->max_age_ns[1], 730 * 24 * kHour);
  r = ParseRollupRetention("10m=0,1h=90d");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_age_ns[0], 0);
  EXPECT_EQ(r->max_age_ns[1], 90 * 24 * kHour);
  EXPECT_EQ(ParseRollupRetention("2h=1d").status().message(),
            "unknown rollup tier '2h' (tiers: 10m, 1h)");
  // The 1 min tier of earlier builds: say where its ranges went.
  EXPECT_NE(ParseRollupRetention("1m=0").status().message().find("no 1m rollup tier"),
            std::string::npos);
  EXPECT_FALSE(ParseRollupRetention("1h").ok());
  EXPECT_FALSE(ParseRollupRetention("1h=forever").ok());
}

// The schema of version 4 as it shipped (migrations 1-4), to write a store the way the previous
// release did.
constexpr const char* kVersion4Schema =
    "CREATE TABLE processes (id INTEGER PRIMARY KEY, hostname TEXT NOT NULL, pid INTEGER NOT NULL,"
    " start_unix_ns INTEGER NOT NULL, rank INTEGER NOT NULL, local_rank INTEGER NOT NULL,"
    " world_size INTEGER NOT NULL, tool_version TEXT NOT NULL, first_seen_ns INTEGER NOT NULL,"
    " last_seen_ns INTEGER NOT NULL, ended_ns INTEGER NOT NULL DEFAULT 0,"
    " cupti_release TEXT NOT NULL DEFAULT '', cupti_path TEXT NOT NULL DEFAULT '',"
    " profiling_off TEXT NOT NULL DEFAULT '', UNIQUE (hostname, pid, start_unix_ns));"
    "CREATE TABLE windows (id INTEGER PRIMARY KEY, process_id INTEGER NOT NULL REFERENCES"
    " processes (id), start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
    " received_ns INTEGER NOT NULL, payload BLOB NOT NULL);"
    "CREATE INDEX windows_by_start ON windows (start_ns);"
    "CREATE INDEX windows_by_process ON windows (process_id, start_ns);"
    "CREATE TABLE telemetry (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, start_ns INTEGER NOT NULL,"
    " end_ns INTEGER NOT NULL, received_ns INTEGER NOT NULL, payload BLOB NOT NULL);"
    "CREATE INDEX telemetry_by_start ON telemetry (kind, start_ns);"
    "PRAGMA user_version = 4;";

// A payload as schema versions 1-7 stored it: codec byte 1, the size (u32 LE), zlib level 6.
base::StatusOr<std::string> ZlibPayload(std::string_view encoded) {
  uLongf bound = compressBound(static_cast<uLong>(encoded.size()));
  std::string out(5 + bound, '\0');
  out[0] = 1;
  const auto n = static_cast<uint32_t>(encoded.size());
  for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  if (compress2(reinterpret_cast<Bytef*>(out.data() + 5), &bound,
                reinterpret_cast<const Bytef*>(encoded.data()), n, 6) != Z_OK)
    return base::InternalError("compress2");
  out.resize(5 + bound);
  return out;
}

TEST(RollupTest, MigratesAVersion4StoreInPlace) {
  TempDir dir;
  const std::string path = dir.path() + "/" + SqliteStore::kFileName;
  std::vector<model::ProfileWindow> old_windows;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL;", nullptr, nullptr, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, kVersion4Schema, nullptr, nullptr, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "INSERT INTO processes (id, hostname, pid, start_unix_ns, rank,"
                           " local_rank, world_size, tool_version, first_seen_ns, last_seen_ns)"
                           " VALUES (1, 'node-a', 100, 1100, 0, 0, 2, '0.1.0', 1, 1)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "INSERT INTO windows (process_id, start_ns, end_ns, received_ns,"
                                 " payload) VALUES (1, ?1, ?2, ?1, ?3)",
                                 -1, &s, nullptr),
              SQLITE_OK);
    for (int i = 0; i < 30; ++i) {
      model::ProfileWindow w = RollupTestWindow(100, 0, kT0 + i * 10 * kSec, i);
      std::string encoded;
      wire::EncodeWindow(w, &encoded);
      auto payload = ZlibPayload(encoded);  // what versions 1-7 wrote
      ASSERT_TRUE(payload.ok());
      sqlite3_bind_int64(s, 1, w.start_ns);
      sqlite3_bind_int64(s, 2, w.end_ns);
      sqlite3_bind_blob(s, 3, payload->data(), static_cast<int>(payload->size()), SQLITE_TRANSIENT);
      ASSERT_EQ(sqlite3_step(s), SQLITE_DONE);
      sqlite3_reset(s);
      old_windows.push_back(std::move(w));
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
  }
  // A reader of this build refuses the old schema until the agent upgraded it.
  EXPECT_FALSE(SqliteStore::Open(dir.path(), Mode::kReadOnly).ok());
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ((*store)->schema_version(), SqliteStore::LatestSchemaVersion());
  auto coverage = (*store)->Coverage();
  ASSERT_TRUE(coverage.ok());
  // Windows stored before the upgrade are answered raw: the tiers start after them.
  EXPECT_EQ(coverage->from_ns, old_windows.back().end_ns);
  auto all = (*store)->QueryWindows({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->windows.size(), old_windows.size());
  // The counts Summary reads were taken from the old rows by the migration.
  auto summary = (*store)->Summary();
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->windows, old_windows.size());
  EXPECT_GT(summary->payload_bytes, 30u * 100);
  EXPECT_EQ(summary->last_end_ns, old_windows.back().end_ns);
  for (size_t i = 0; i < old_windows.size(); ++i)
    EXPECT_EQ(wire::testing::FirstDifference(old_windows[i], all->windows[i].window), "") << i;
  // Converted to incremental auto-vacuum (so retention can shrink the file).
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA auto_vacuum", -1, &s, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(s, 0), 2);  // INCREMENTAL
    sqlite3_finalize(s);
    sqlite3_close(db);
  }
  // New windows are rolled up; the old ones are not folded into any row.
  std::vector<Appended> appended;
  Fill(**store, {1}, kT0 + 20 * 60 * kSec, kT0 + 100 * 60 * kSec, 10 * kSec, &appended);
  // 10 min buckets from 0:50 of the first hour through 2:00 (sealed to 2:10), two hour rows.
  EXPECT_EQ(ExpectRowsEqualMerges(**store, appended), 8 + 2);
}

TEST(RollupTest, MigrationDropsTheOneMinuteTier) {
  // A version 5 store (rollups with a 1 min tier) opened by this build: its 1 min rows go, the
  // other tiers stay and keep answering.
  TempDir dir;
  const std::string path = dir.path() + "/" + SqliteStore::kFileName;
  std::vector<Appended> appended;
  {
    auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    Fill(**store, TwoProcesses(**store), kT0, kT0 + 90 * 60 * kSec, 10 * kSec, &appended);
  }
  auto count_rows = [&path](const char* where) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    const std::string sql = std::string("SELECT count(*) FROM rollups WHERE ") + where;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW);
    const int64_t n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  };
  const int64_t kept = count_rows("tier_ns != 60000000000");
  ASSERT_GT(kept, 0);
  {
    // What a version 5 writer left: a 1 min row (a copy of a 10 min row's payload will do).
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "INSERT INTO rollups (tier_ns, start_ns, process_id, end_ns, windows,"
                           " payload) SELECT 60000000000, start_ns, process_id, start_ns +"
                           " 60000000000, 6, payload FROM rollups WHERE tier_ns = 600000000000;"
                           // ...and what schema 7 added, undone.
                           "DROP INDEX windows_by_received; DROP INDEX telemetry_by_received;"
                           "DROP TRIGGER windows_counted_in; DROP TRIGGER windows_counted_out;"
                           "DELETE FROM store_meta WHERE key IN ('window_count',"
                           " 'window_payload_bytes', 'payload_codec');"
                           "PRAGMA user_version = 5;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  ASSERT_GT(count_rows("tier_ns = 60000000000"), 0);
  auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ((*store)->schema_version(), SqliteStore::LatestSchemaVersion());
  EXPECT_EQ(count_rows("tier_ns = 60000000000"), 0);
  EXPECT_EQ(count_rows("tier_ns != 60000000000"), kept);
  EXPECT_EQ(ExpectRowsEqualMerges(**store, appended), 2 * (9 + 2));
}

TEST(RollupTest, RetentionDeletesTiersByAgeAndShrinksTheFile) {
  TempDir dir;
  const std::string path = dir.path() + "/" + SqliteStore::kFileName;
  std::vector<Appended> appended;
  uint64_t full_bytes = 0;
  {
    auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    const auto ids = TwoProcesses(**store);
    Fill(**store, ids, kT0, kT0 + 180 * 60 * kSec, 10 * kSec, &appended, 200);
    auto bytes = (*store)->RollupBytes();
    ASSERT_TRUE(bytes.ok());
    EXPECT_GT(*bytes, 0u);
  }
  full_bytes = fs::file_size(path);
  const int64_t now = kT0 + 180 * 60 * kSec;
  {
    auto store = SqliteStore::Open(dir.path(), Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    // Raw windows older than 30 min go; 10 min rows are kept as long (0: as raw windows), hour
    // rows 90 min (longer than raw windows: the first hour's row goes, the others stay).
    RollupRetention tiers;
    tiers.max_age_ns = {0, 90 * 60 * kSec};
    auto r = (*store)->ApplyRetention(30 * 60 * kSec, 0, now, tiers);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_GT(r->deleted_windows, 2u * 140);
    EXPECT_GT(r->deleted_rollups, 0u);
    ScanStats stats;
    int64_t oldest_10m = INT64_MAX, oldest_hour = INT64_MAX;
    auto oldest = [&](int64_t tier, int64_t* out) {
      ASSERT_TRUE((*store)
                      ->ScanRollups(
                          tier, {},
                          [&](int64_t, uint64_t, model::ProfileWindow& w) {
                            *out = std::min(*out, FloorTo(w.start_ns, tier));
                          },
                          &stats)
                      .ok());
    };
    oldest(kRollupTierNs[0], &oldest_10m);
    oldest(kRollupTierNs[1], &oldest_hour);
    EXPECT_GE(oldest_10m + kRollupTierNs[0], now - 30 * 60 * kSec);
    EXPECT_LT(oldest_10m, now - 30 * 60 * kSec);           // the bucket the cutoff falls in stays
    EXPECT_GE(oldest_hour + kHour, now - 90 * 60 * kSec);  // by its own age...
    EXPECT_LT(oldest_hour + kHour, now - 30 * 60 * kSec);  // ...longer than raw windows
  }
  // Closing checkpoints the WAL; the freed pages were given back.
  const uint64_t after_bytes = fs::file_size(path);
  EXPECT_LT(after_bytes, full_bytes * 6 / 10) << full_bytes << " -> " << after_bytes;
}

}  // namespace
}  // namespace inferscope::store
