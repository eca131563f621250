// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/store/sqlite_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "src/base/duration.h"
#include "src/base/state_dir.h"
#include "src/model/profile_merge.h"
#include "src/store/rollups.h"
#include "src/wire/window_codec.h"

namespace inferscope::store {
namespace {

// Numbered migrations: migration i (1-based) takes the schema from version i-1 to i, recorded in
// PRAGMA user_version. Append only; never edit one that shipped.
constexpr const char* kMigrations[] = {
    // 1: processes and their windows.
    "CREATE TABLE processes ("
    "  id INTEGER PRIMARY KEY,"
    "  hostname TEXT NOT NULL,"
    "  pid INTEGER NOT NULL,"
    "  start_unix_ns INTEGER NOT NULL,"
    "  rank INTEGER NOT NULL,"
    "  local_rank INTEGER NOT NULL,"
    "  world_size INTEGER NOT NULL,"
    "  tool_version TEXT NOT NULL,"
    "  first_seen_ns INTEGER NOT NULL,"
    "  last_seen_ns INTEGER NOT NULL,"
    "  UNIQUE (hostname, pid, start_unix_ns));"
    "CREATE TABLE windows ("
    "  id INTEGER PRIMARY KEY,"
    "  process_id INTEGER NOT NULL REFERENCES processes (id),"
    "  start_ns INTEGER NOT NULL,"
    "  end_ns INTEGER NOT NULL,"
    "  received_ns INTEGER NOT NULL,"
    "  payload BLOB NOT NULL);"
    "CREATE INDEX windows_by_start ON windows (start_ns);"
    "CREATE INDEX windows_by_process ON windows (process_id, start_ns);",
    // 2: when a process said goodbye (0 = not yet, or its connection was lost).
    "ALTER TABLE processes ADD COLUMN ended_ns INTEGER NOT NULL DEFAULT 0;",
    // 3: host telemetry per window (GPU metrics, engine metrics, request spans), JSON payloads.
    "CREATE TABLE telemetry ("
    "  id INTEGER PRIMARY KEY,"
    "  kind TEXT NOT NULL,"
    "  start_ns INTEGER NOT NULL,"
    "  end_ns INTEGER NOT NULL,"
    "  received_ns INTEGER NOT NULL,"
    "  payload BLOB NOT NULL);"
    "CREATE INDEX telemetry_by_start ON telemetry (kind, start_ns);",
    // 4: the process's profiling state from its hello: the CUPTI it bound (release, path) and
    // why profiling is off (empty when on).
    "ALTER TABLE processes ADD COLUMN cupti_release TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE processes ADD COLUMN cupti_path TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE processes ADD COLUMN profiling_off TEXT NOT NULL DEFAULT '';",
    // 5: rollup tiers (rollups.h): one row per (tier, bucket, process), the merge of the windows
    // starting in the bucket, compressed like window payloads. store_meta says which buckets the
    // tiers answer exactly: from the end of the windows already stored (a store written before
    // rollups keeps answering those from raw windows) up to what the writer has sealed.
    "CREATE TABLE rollups ("
    "  id INTEGER PRIMARY KEY,"
    "  tier_ns INTEGER NOT NULL,"
    "  start_ns INTEGER NOT NULL,"
    "  process_id INTEGER NOT NULL REFERENCES processes (id),"
    "  end_ns INTEGER NOT NULL,"
    "  windows INTEGER NOT NULL,"
    "  payload BLOB NOT NULL,"
    "  UNIQUE (tier_ns, start_ns, process_id));"
    "CREATE TABLE store_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT INTO store_meta VALUES ('rollups_from_ns',"
    "  coalesce((SELECT max(end_ns) FROM windows), 0));"
    "INSERT INTO store_meta VALUES ('rollups_sealed_ns', 0);"
    "INSERT INTO store_meta VALUES ('max_window_ns',"
    "  coalesce((SELECT max(end_ns - start_ns) FROM windows), 0));"
    // Per-process window counts and spans of a range (ListProcesses, /api/v1/processes) from the
    // index alone: without end_ns in it, a week's count read every window's row (1.5 s -> 0.07 s
    // on 8 GPUs x 7 days).
    "DROP INDEX windows_by_process;"
    "CREATE INDEX windows_by_process ON windows (process_id, start_ns, end_ns);",
    // 6: the 1 min tier is gone (rollups.h says why): its rows would only take space. The sealed
    // mark may sit inside a 10 min bucket; the planner reads only whole buckets and the writer
    // rebuilds the open one from raw windows, so nothing else changes.
    "DELETE FROM rollups WHERE tier_ns = 60000000000;",
    // 7: what the writer asks every retention pass without reading the whole table (a week of
    // 8 GPUs is ~1.4 GB of rows): indexes for retention by age, and the window count and payload
    // bytes kept in store_meta by triggers (so they hold whatever deletes or rolls back rows).
    "CREATE INDEX windows_by_received ON windows (received_ns);"
    "CREATE INDEX telemetry_by_received ON telemetry (received_ns);"
    "INSERT INTO store_meta VALUES ('window_count', (SELECT count(*) FROM windows));"
    "INSERT INTO store_meta VALUES ('window_payload_bytes',"
    "  (SELECT coalesce(sum(length(payload)), 0) FROM windows));"
    "CREATE TRIGGER windows_counted_in AFTER INSERT ON windows BEGIN"
    "  UPDATE store_meta SET value = value + 1 WHERE key = 'window_count';"
    "  UPDATE store_meta SET value = value + length(NEW.payload)"
    "    WHERE key = 'window_payload_bytes';"
    "END;"
    "CREATE TRIGGER windows_counted_out AFTER DELETE ON windows BEGIN"
    "  UPDATE store_meta SET value = value - 1 WHERE key = 'window_count';"
    "  UPDATE store_meta SET value = value - length(OLD.payload)"
    "    WHERE key = 'window_payload_bytes';"
    "END;",
    // 8: payloads are written with zstd (codec byte 2; zlib rows, codec 1, are still read). No
    // table changes: the version tells an older inferscope, which reads zlib only, that this store
    // is newer than it, rather than it failing row by row.
    "INSERT INTO store_meta VALUES ('payload_codec', 2);",
};
constexpr int kSchemaVersion = static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));

constexpr uint8_t kCodecZlib = 1;  // schema 1-7 wrote these; still read
// zstd at its default level. Against zlib level 6 (what schema 1-7 wrote) on the agent's windows:
// several times less CPU to compress (compressing was most of the agent's instructions) for a few
// percent more bytes (measured: docs/benchmarks.md, "Store payload codec").
constexpr uint8_t kCodecZstd = 2;
constexpr int kZstdLevel = 3;
constexpr size_t kPayloadHeaderBytes = 5;
// Windows are 1-20 KB encoded; the wire refuses frames over 16 MiB, so a bigger size is corruption.
constexpr uint32_t kMaxUncompressedBytes = 16u << 20;

// Finalizes a statement that is not cached (queries built per call).
struct StatementCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using OwnedStatement = std::unique_ptr<sqlite3_stmt, StatementCloser>;

}  // namespace

int SqliteStore::LatestSchemaVersion() { return kSchemaVersion; }

// The writer's rollup buckets still open, per (tier, process): the newest bucket that has windows
// and is not sealed yet. Written out (merged into any row already there) when sealed or when the
// process moves on to a later bucket. Windows enter the finest tier; a bucket that closes is
// folded into the next tier's bucket, so a window costs one fold, not one per tier.
struct SqliteStore::RollupState {
  struct Open {
    int64_t start_ns = 0;
    uint64_t windows = 0;
    model::ProfileWindow merged;
  };
  using Key = std::pair<size_t, int64_t>;  // (tier index, process_id)
  std::map<Key, Open> open;
  int64_t from_ns = 0;                  // store_meta rollups_from_ns
  int64_t sealed_ns = 0;                // store_meta rollups_sealed_ns
  int64_t newest_start_ns = INT64_MIN;  // window time the writer has reached
};

SqliteStore::SqliteStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

base::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& state_dir,
                                                               Mode mode) {
  namespace fs = std::filesystem;
  const std::string path = state_dir + "/" + kFileName;
  int flags = SQLITE_OPEN_NOMUTEX;
  if (mode == Mode::kReadWrite) {
    RETURN_IF_ERROR(base::CreateStateDir(state_dir));  // sockets and profiles of this user only
    flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    // Owner-only (SQLite gives its -wal and -shm files the database file's mode): the profiles
    // name this user's processes and kernels. Created 0600, and an existing file of ours (an
    // older version's, or one copied in) is set to 0600 too, whatever the umask was.
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd >= 0) ::close(fd);
    }
    for (const char* suffix : {"", "-wal", "-shm"}) {
      const std::string file = path + suffix;
      struct stat st {};
      if (::lstat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
          (st.st_mode & 077) != 0)
        (void)::chmod(file.c_str(), 0600);
    }
  } else {
    std::error_code ec;
    if (!fs::exists(path, ec))
      return base::NotFoundError(path + ": no inferscope store here (start 'inferscope agent'" +
                                 " or pass --state-dir)");
    flags |= SQLITE_OPEN_READONLY;
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message =
        path + ": cannot open store: " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return base::UnavailableError(message);
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db, path));
  sqlite3_busy_timeout(db, 5000);  // a reader may meet the writer's checkpoint
  if (mode == Mode::kReadWrite) {
    // WAL: `inferscope report` reads while the agent writes; NORMAL sync is durable across
    // process crashes (an OS crash may lose the last transactions, which are re-creatable data).
    // Incremental auto-vacuum lets retention give freed pages back to the file system. It takes
    // effect on a new database (set before its first table); an older store is converted once by
    // the VACUUM below.
    RETURN_IF_ERROR(store->Exec("PRAGMA auto_vacuum=INCREMENTAL;"));
    RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"));
    RETURN_IF_ERROR(store->Migrate());
    ASSIGN_OR_RETURN(sqlite3_stmt * av, store->Prepare("PRAGMA auto_vacuum"));
    const int auto_vacuum = sqlite3_step(av) == SQLITE_ROW ? sqlite3_column_int(av, 0) : -1;
    sqlite3_reset(av);
    if (auto_vacuum == 0) RETURN_IF_ERROR(store->Exec("VACUUM"));  // one-time rewrite
    RETURN_IF_ERROR(store->LoadRollups());
  } else {
    ASSIGN_OR_RETURN(sqlite3_stmt * s, store->Prepare("PRAGMA user_version"));
    if (sqlite3_step(s) != SQLITE_ROW) return store->Error("cannot read the schema version");
    store->schema_version_ = sqlite3_column_int(s, 0);
    // A statement left on its row holds a read transaction open: every later read would see the
    // store as it was here, never a window written after (`top` keeps one reader for its run).
    sqlite3_reset(s);
    if (store->schema_version_ > kSchemaVersion)
      return base::UnsupportedError(path + ": store schema version " +
                                    std::to_string(store->schema_version_) +
                                    " is newer than this inferscope reads (" +
                                    std::to_string(kSchemaVersion) + "); upgrade inferscope");
    if (store->schema_version_ < kSchemaVersion)
      return base::UnsupportedError(path + ": store schema version " +
                                    std::to_string(store->schema_version_) +
                                    " is older than this inferscope reads; start 'inferscope "
                                    "agent' once to upgrade it");
  }
  return store;
}

SqliteStore::~SqliteStore() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

base::Status SqliteStore::Error(const std::string& what) const {
  const int code = sqlite3_errcode(db_);
  const std::string message = path_ + ": " + what + ": " + sqlite3_errmsg(db_);
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
    return base::DataLossError(path_ + ": not a valid inferscope store (" + sqlite3_errmsg(db_) +
                               "); move it away to start a new one");
  return base::UnavailableError(message);
}

base::Status SqliteStore::Exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    sqlite3_free(message);
    return Error("SQL failed");
  }
  return base::OkStatus();
}

base::StatusOr<sqlite3_stmt*> SqliteStore::Prepare(const char* sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) {
    sqlite3_reset(it->second);
    sqlite3_clear_bindings(it->second);
    return it->second;
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr) != SQLITE_OK)
    return Error("cannot prepare statement");
  statements_.emplace(sql, stmt);
  return stmt;
}

base::Status SqliteStore::Migrate() {
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("PRAGMA user_version"));
  if (sqlite3_step(s) != SQLITE_ROW) return Error("cannot read the schema version");
  int version = sqlite3_column_int(s, 0);
  sqlite3_reset(s);
  if (version > kSchemaVersion)
    return base::UnsupportedError(path_ + ": store schema version " + std::to_string(version) +
                                  " is newer than this inferscope knows (" +
                                  std::to_string(kSchemaVersion) + "); upgrade inferscope");
  for (; version < kSchemaVersion; ++version) {
    // Each migration and its version bump commit together, so a crash leaves a consistent
    // version.
    RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    base::Status status = Exec(kMigrations[version]);
    if (status.ok())
      status = Exec(("PRAGMA user_version = " + std::to_string(version + 1)).c_str());
    if (!status.ok()) {
      (void)Exec("ROLLBACK");
      return status;
    }
    RETURN_IF_ERROR(Exec("COMMIT"));
  }
  schema_version_ = version;
  return base::OkStatus();
}

base::Status SqliteStore::Begin() {
  if (rollups_ && rollups_stale_ && LoadRollups().ok()) rollups_stale_ = false;
  return Exec("BEGIN IMMEDIATE");
}
base::Status SqliteStore::Commit() { return Exec("COMMIT"); }
base::Status SqliteStore::Rollback() {
  const base::Status status = Exec("ROLLBACK");
  // The open rollup buckets took this transaction's windows too: rebuild them from the store, as
  // a restart does. Until a rebuild succeeds (it may fail for the reason the transaction did)
  // nothing is folded, so no row is written from buckets that hold rolled-back windows.
  // (An undo log did this before: a copy of each bucket at its first change in every
  // transaction, which the agent paid on nearly every window, its batches being mostly one
  // window, to serve a path that runs only when the disk fails.)
  if (rollups_) rollups_stale_ = !LoadRollups().ok();
  return status;
}

base::StatusOr<int64_t> SqliteStore::UpsertProcess(const wire::Hello& hello, int64_t now_ns) {
  static constexpr const char* kSql =
      "INSERT INTO processes (hostname, pid, start_unix_ns, rank, local_rank, world_size,"
      " tool_version, first_seen_ns, last_seen_ns, cupti_release, cupti_path, profiling_off)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10, ?11)"
      " ON CONFLICT (hostname, pid, start_unix_ns) DO UPDATE SET rank = ?4, local_rank = ?5,"
      " world_size = ?6, tool_version = ?7, last_seen_ns = ?8, ended_ns = 0, cupti_release = ?9,"
      " cupti_path = ?10, profiling_off = ?11 RETURNING id";
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare(kSql));
  sqlite3_bind_text(s, 1, hello.hostname.data(), static_cast<int>(hello.hostname.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, hello.pid);
  sqlite3_bind_int64(s, 3, hello.process_start_unix_ns);
  sqlite3_bind_int(s, 4, hello.rank);
  sqlite3_bind_int(s, 5, hello.local_rank);
  sqlite3_bind_int(s, 6, hello.world_size);
  sqlite3_bind_text(s, 7, hello.tool_version.data(), static_cast<int>(hello.tool_version.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 8, now_ns);
  auto bind_text = [&](int i, const std::string& t) {
    sqlite3_bind_text(s, i, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
  };
  bind_text(9, hello.cupti_release);
  bind_text(10, hello.cupti_path);
  bind_text(11, hello.profiling_off_reason);
  if (sqlite3_step(s) != SQLITE_ROW) return Error("cannot record process");
  const int64_t id = sqlite3_column_int64(s, 0);
  sqlite3_reset(s);
  return id;
}

base::Status SqliteStore::MarkProcessEnded(int64_t process_id, int64_t now_ns) {
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("UPDATE processes SET ended_ns = ?2, last_seen_ns = ?2 WHERE id = ?1"));
  sqlite3_bind_int64(s, 1, process_id);
  sqlite3_bind_int64(s, 2, now_ns);
  if (sqlite3_step(s) != SQLITE_DONE) return Error("cannot mark process ended");
  return base::OkStatus();
}

namespace {

// One compression and one decompression context per thread (the writer compresses; range scans
// decompress on several threads): zstd's contexts are reusable but not thread-safe.
struct ZstdContexts {
  ZSTD_CCtx* compress = ZSTD_createCCtx();
  ZSTD_DCtx* decompress = ZSTD_createDCtx();
  ~ZstdContexts() {
    ZSTD_freeCCtx(compress);
    ZSTD_freeDCtx(decompress);
  }
};
ZstdContexts& ThreadZstd() {
  thread_local ZstdContexts contexts;
  return contexts;
}

}  // namespace

base::StatusOr<std::string> SqliteStore::CompressPayload(std::string_view encoded) {
  if (encoded.size() > kMaxUncompressedBytes)
    return base::InvalidArgumentError("window too large to store");
  ZstdContexts& z = ThreadZstd();
  if (!z.compress) return base::InternalError("zstd: out of memory");
  const size_t bound = ZSTD_compressBound(encoded.size());
  std::string out(kPayloadHeaderBytes + bound, '\0');
  out[0] = static_cast<char>(kCodecZstd);
  const uint32_t n = static_cast<uint32_t>(encoded.size());
  for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  const size_t written = ZSTD_compressCCtx(z.compress, out.data() + kPayloadHeaderBytes, bound,
                                           encoded.data(), encoded.size(), kZstdLevel);
  if (ZSTD_isError(written))
    return base::InternalError(std::string("zstd compress failed: ") + ZSTD_getErrorName(written));
  out.resize(kPayloadHeaderBytes + written);
  return out;
}

base::StatusOr<std::string> SqliteStore::DecompressPayload(std::string_view stored) {
  const uint8_t codec = stored.empty() ? 0 : static_cast<uint8_t>(stored[0]);
  if (stored.size() < kPayloadHeaderBytes || (codec != kCodecZlib && codec != kCodecZstd))
    return base::DataLossError("stored window has an unknown codec");
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<uint32_t>(static_cast<uint8_t>(stored[1 + i])) << (8 * i);
  if (n > kMaxUncompressedBytes) return base::DataLossError("stored window size is corrupt");
  std::string out(n, '\0');
  const std::string_view body = stored.substr(kPayloadHeaderBytes);
  if (codec == kCodecZstd) {
    ZstdContexts& z = ThreadZstd();
    if (!z.decompress) return base::InternalError("zstd: out of memory");
    const size_t got = ZSTD_decompressDCtx(z.decompress, out.data(), n, body.data(), body.size());
    if (ZSTD_isError(got) || got != n) return base::DataLossError("stored window does not inflate");
    return out;
  }
  uLongf out_len = n;
  const int rc =
      uncompress(reinterpret_cast<Bytef*>(out.data()), &out_len,
                 reinterpret_cast<const Bytef*>(body.data()), static_cast<uLong>(body.size()));
  if (rc != Z_OK || out_len != n) return base::DataLossError("stored window does not inflate");
  return out;
}

base::Status SqliteStore::AppendWindow(const PendingWindow& window,
                                       const model::ProfileWindow* decoded) {
  ASSIGN_OR_RETURN(std::string payload, CompressPayload(window.encoded));
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("INSERT INTO windows (process_id, start_ns, end_ns, received_ns, "
                           "payload) VALUES (?1, ?2, ?3, ?4, ?5)"));
  sqlite3_bind_int64(s, 1, window.process_id);
  sqlite3_bind_int64(s, 2, window.start_ns);
  sqlite3_bind_int64(s, 3, window.end_ns);
  sqlite3_bind_int64(s, 4, window.received_ns);
  sqlite3_bind_blob(s, 5, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
  if (sqlite3_step(s) != SQLITE_DONE) return Error("cannot store window");
  ASSIGN_OR_RETURN(sqlite3_stmt * u,
                   Prepare("UPDATE processes SET last_seen_ns = max(last_seen_ns, ?2) "
                           "WHERE id = ?1"));
  sqlite3_bind_int64(u, 1, window.process_id);
  sqlite3_bind_int64(u, 2, window.received_ns);
  if (sqlite3_step(u) != SQLITE_DONE) return Error("cannot update process");
  if (window.end_ns - window.start_ns > max_window_ns_) {
    // Rare (the first window, or a longer --window): keeps ScanWindows' bound true.
    ASSIGN_OR_RETURN(sqlite3_stmt * m,
                     Prepare("UPDATE store_meta SET value = max(value, ?1) WHERE key = "
                             "'max_window_ns' RETURNING value"));
    sqlite3_bind_int64(m, 1, window.end_ns - window.start_ns);
    if (sqlite3_step(m) != SQLITE_ROW) return Error("cannot update store_meta");
    max_window_ns_ = sqlite3_column_int64(m, 0);
    sqlite3_reset(m);
  }
  if (!rollups_ || !rollups_enabled_) return base::OkStatus();
  if (rollups_stale_) {
    // The open buckets are being rebuilt (Rollback). Outside a transaction the rebuild reads this
    // window too, now stored; inside one, it will when a later rebuild runs after the commit.
    if (sqlite3_get_autocommit(db_) != 0 && LoadRollups().ok()) rollups_stale_ = false;
    return base::OkStatus();
  }
  if (decoded) return FoldIntoRollups(window.process_id, *decoded, /*rebuilding=*/false);
  ASSIGN_OR_RETURN(model::ProfileWindow w, wire::DecodeWindow(window.encoded));
  return FoldIntoRollups(window.process_id, w, /*rebuilding=*/false);
}

namespace {

// Binds the range and the optional pid/rank of `query` as ?1..?4 (see FilterSql).
void BindQuery(sqlite3_stmt* s, const WindowQuery& query) {
  sqlite3_bind_int64(s, 1, query.from_ns);
  sqlite3_bind_int64(s, 2, query.to_ns);
  if (query.pid) sqlite3_bind_int64(s, 3, *query.pid);
  if (query.rank) sqlite3_bind_int(s, 4, *query.rank);
}

// The process columns hostname, pid, start_unix_ns, rank, local_rank, world_size, tool_version,
// first_seen_ns, last_seen_ns, ended_ns, cupti_release, cupti_path, profiling_off, in that order
// from column `first` (kProcessColumns of them).
constexpr int kProcessColumns = 13;
#define INFERSCOPE_PROCESS_COLUMNS                                                          \
  "p.hostname, p.pid, p.start_unix_ns, p.rank, p.local_rank, p.world_size, p.tool_version," \
  " p.first_seen_ns, p.last_seen_ns, p.ended_ns, p.cupti_release, p.cupti_path,"            \
  " p.profiling_off"
void ReadProcessColumns(sqlite3_stmt* s, int first, StoredProcess* p) {
  auto text = [&](int col) {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, col));
    return std::string(t ? t : "");
  };
  p->hello.hostname = text(first);
  p->hello.pid = static_cast<uint32_t>(sqlite3_column_int64(s, first + 1));
  p->hello.process_start_unix_ns = sqlite3_column_int64(s, first + 2);
  p->hello.rank = sqlite3_column_int(s, first + 3);
  p->hello.local_rank = sqlite3_column_int(s, first + 4);
  p->hello.world_size = sqlite3_column_int(s, first + 5);
  p->hello.tool_version = text(first + 6);
  p->first_seen_ns = sqlite3_column_int64(s, first + 7);
  p->last_seen_ns = sqlite3_column_int64(s, first + 8);
  p->ended_ns = sqlite3_column_int64(s, first + 9);
  p->hello.cupti_release = text(first + 10);
  p->hello.cupti_path = text(first + 11);
  p->hello.profiling_off_reason = text(first + 12);
}

std::string FilterSql(const WindowQuery& query) {
  std::string sql;
  if (query.pid) sql += " AND p.pid = ?3";
  if (query.rank) sql += " AND p.rank = ?4";
  return sql;
}

}  // namespace

base::Status SqliteStore::ScanPayloads(sqlite3_stmt* s, const WindowVisitor& visit,
                                       ScanStats* stats) {
  // Columns: process_id, windows, payload, then the process columns.
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const int64_t process_id = sqlite3_column_int64(s, 0);
    const auto windows = static_cast<uint64_t>(sqlite3_column_int64(s, 1));
    const auto* blob = static_cast<const char*>(sqlite3_column_blob(s, 2));
    const std::string_view stored(blob ? blob : "",
                                  static_cast<size_t>(sqlite3_column_bytes(s, 2)));
    auto encoded = DecompressPayload(stored);
    auto window = encoded.ok() ? wire::DecodeWindow(*encoded)
                               : base::StatusOr<model::ProfileWindow>(encoded.status());
    if (!window.ok()) {
      ++stats->corrupt_rows;
      continue;
    }
    if (!stats->processes.count(process_id)) {
      StoredProcess& p = stats->processes[process_id];
      ReadProcessColumns(s, 3, &p);
      p.id = process_id;
    }
    ++stats->rows;
    visit(process_id, windows, *window);
  }
  if (rc != SQLITE_DONE) return Error("cannot read windows");
  return base::OkStatus();
}

base::Status SqliteStore::ScanWindows(const WindowQuery& query, const WindowVisitor& visit,
                                      ScanStats* stats) {
  ASSIGN_OR_RETURN(RollupCoverage meta, Coverage());
  // Overlap with [from, to): a window that started before `from` but ends after it counts. It
  // started at most max_window_ns before `from`, so the start index bounds both ends of the walk.
  const int64_t lowest_start = query.from_ns > INT64_MIN + meta.max_window_ns
                                   ? query.from_ns - meta.max_window_ns
                                   : INT64_MIN;
  std::string sql =
      "SELECT w.process_id, 1, w.payload, " INFERSCOPE_PROCESS_COLUMNS
      " FROM windows w JOIN processes p ON p.id = w.process_id"
      " WHERE w.start_ns < ?2 AND w.end_ns > ?1 AND w.start_ns >= ?6 AND w.start_ns < ?7" +
      FilterSql(query) + " ORDER BY w.start_ns, w.id";
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
    return Error("cannot query windows");
  OwnedStatement s(raw);
  // Rows starting in the skipped span are left out by walking the index on either side of it.
  std::vector<std::pair<int64_t, int64_t>> spans;
  if (query.skip_from_ns < query.skip_to_ns) {
    spans = {{lowest_start, query.skip_from_ns}, {query.skip_to_ns, INT64_MAX}};
  } else {
    spans = {{lowest_start, INT64_MAX}};
  }
  for (const auto& [lo, hi] : spans) {
    if (lo >= hi) continue;
    sqlite3_reset(raw);
    BindQuery(raw, query);
    sqlite3_bind_int64(raw, 6, lo);
    sqlite3_bind_int64(raw, 7, hi);
    RETURN_IF_ERROR(ScanPayloads(raw, visit, stats));
  }
  return base::OkStatus();
}

base::Status SqliteStore::ScanRollups(int64_t tier_ns, const WindowQuery& query,
                                      const WindowVisitor& visit, ScanStats* stats) {
  const std::string sql = "SELECT r.process_id, r.windows, r.payload, " INFERSCOPE_PROCESS_COLUMNS
                          " FROM rollups r JOIN processes p ON p.id = r.process_id"
                          " WHERE r.tier_ns = ?8 AND r.start_ns >= ?1 AND r.start_ns < ?2" +
                          FilterSql(query) + " ORDER BY r.start_ns, r.process_id";
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
    return Error("cannot query rollups");
  OwnedStatement s(raw);
  BindQuery(raw, query);
  sqlite3_bind_int64(raw, 8, tier_ns);
  return ScanPayloads(raw, visit, stats);
}

base::StatusOr<QueryResult> SqliteStore::QueryWindows(const WindowQuery& query) {
  QueryResult result;
  ScanStats stats;
  RETURN_IF_ERROR(ScanWindows(
      query,
      [&](int64_t process_id, uint64_t, model::ProfileWindow& w) {
        result.windows.push_back({process_id, std::move(w)});
      },
      &stats));
  result.processes = std::move(stats.processes);
  result.corrupt_windows = stats.corrupt_rows;
  return result;
}

base::StatusOr<RollupCoverage> SqliteStore::Coverage() {
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("SELECT key, value FROM store_meta"));
  RollupCoverage c;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const auto* key = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    const std::string_view k(key ? key : "");
    if (k == "rollups_from_ns") c.from_ns = sqlite3_column_int64(s, 1);
    if (k == "rollups_sealed_ns") c.sealed_ns = sqlite3_column_int64(s, 1);
    if (k == "max_window_ns") c.max_window_ns = sqlite3_column_int64(s, 1);
  }
  sqlite3_reset(s);
  if (rc != SQLITE_DONE) return Error("cannot read store_meta");
  return c;
}

base::StatusOr<std::optional<std::pair<int64_t, int64_t>>> SqliteStore::DataSpan(int64_t from_ns,
                                                                                 int64_t to_ns) {
  // Both ends come from the start_ns indexes (first row / last row of the range).
  ASSIGN_OR_RETURN(sqlite3_stmt * first,
                   Prepare("SELECT min(s) FROM (SELECT start_ns s FROM windows"
                           " WHERE start_ns >= ?1 AND start_ns < ?2 ORDER BY start_ns LIMIT 1)"
                           " UNION ALL SELECT min(s) FROM (SELECT start_ns s FROM rollups"
                           " WHERE tier_ns = ?3 AND start_ns >= ?1 AND start_ns < ?2"
                           " ORDER BY tier_ns, start_ns LIMIT 1)"));
  ASSIGN_OR_RETURN(sqlite3_stmt * last,
                   Prepare("SELECT max(e) FROM (SELECT end_ns e FROM windows"
                           " WHERE start_ns >= ?1 AND start_ns < ?2 ORDER BY start_ns DESC LIMIT 1)"
                           " UNION ALL SELECT max(e) FROM (SELECT end_ns e FROM rollups"
                           " WHERE tier_ns = ?3 AND start_ns >= ?1 AND start_ns < ?2"
                           " ORDER BY tier_ns DESC, start_ns DESC LIMIT 1)"));
  std::optional<int64_t> lo, hi;
  for (sqlite3_stmt* s : {first, last}) {
    sqlite3_bind_int64(s, 1, from_ns);
    sqlite3_bind_int64(s, 2, to_ns);
    sqlite3_bind_int64(s, 3, kRollupTierNs.back());
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      if (sqlite3_column_type(s, 0) == SQLITE_NULL) continue;
      const int64_t v = sqlite3_column_int64(s, 0);
      std::optional<int64_t>& out = s == first ? lo : hi;
      out = out ? (s == first ? std::min(*out, v) : std::max(*out, v)) : v;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return Error("cannot read the data span");
  }
  if (!lo || !hi) return std::optional<std::pair<int64_t, int64_t>>();
  return std::optional<std::pair<int64_t, int64_t>>(std::make_pair(*lo, *hi));
}

base::StatusOr<uint64_t> SqliteStore::RollupBytes() {
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("SELECT coalesce(sum(length(payload)), 0) FROM rollups"));
  if (sqlite3_step(s) != SQLITE_ROW) return Error("cannot sum rollups");
  const auto bytes = static_cast<uint64_t>(sqlite3_column_int64(s, 0));
  sqlite3_reset(s);
  return bytes;
}

// ---- Rollup writing ----

base::Status SqliteStore::LoadRollups() {
  rollups_ = std::make_unique<RollupState>();
  ASSIGN_OR_RETURN(RollupCoverage c, Coverage());
  rollups_->from_ns = c.from_ns;
  rollups_->sealed_ns = c.sealed_ns;
  max_window_ns_ = c.max_window_ns;
  // Buckets not sealed yet were open in the last writer's memory, which a crash loses (and a clean
  // stop does not write either): rebuild them from their windows. Their rows are dropped first so
  // no window is counted twice.
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  base::Status status;
  for (int64_t tier_ns : kRollupTierNs) {
    ASSIGN_OR_RETURN(sqlite3_stmt * d,
                     Prepare("DELETE FROM rollups WHERE tier_ns = ?1 AND start_ns >= ?2"));
    sqlite3_bind_int64(d, 1, tier_ns);
    sqlite3_bind_int64(d, 2, FloorTo(c.sealed_ns, tier_ns));
    if (sqlite3_step(d) != SQLITE_DONE) status = Error("cannot drop unsealed rollups");
    sqlite3_reset(d);
  }
  // A coarser bucket that is not sealed may have finer children that are: fold their rows in.
  for (size_t tier = 1; status.ok() && tier < kRollupTierNs.size(); ++tier) {
    const int64_t finer_ns = kRollupTierNs[tier - 1];
    WindowQuery children;
    children.from_ns = std::max(FloorTo(c.sealed_ns, kRollupTierNs[tier]), c.from_ns);
    children.to_ns = FloorTo(c.sealed_ns, finer_ns);
    if (children.from_ns >= children.to_ns) continue;
    ScanStats stats;
    base::Status scan = ScanRollups(
        finer_ns, children,
        [&](int64_t process_id, uint64_t windows, model::ProfileWindow& row) {
          const int64_t bucket = FloorTo(row.start_ns, finer_ns);
          base::Status st =
              FoldIntoTier(tier, process_id, row, bucket, windows, /*rebuilding=*/true);
          if (!st.ok() && status.ok()) status = st;
        },
        &stats);
    if (!scan.ok() && status.ok()) status = scan;
  }
  WindowQuery rebuild;
  rebuild.from_ns = std::max(FloorTo(c.sealed_ns, kRollupTierNs.front()), c.from_ns) - 1;
  ScanStats stats;
  if (status.ok()) {
    // Windows are folded in start order here (arrival order is not kept apart from the id);
    // what arrives next is folded in arrival order.
    status = ScanWindows(
        rebuild,
        [&](int64_t process_id, uint64_t, model::ProfileWindow& w) {
          if (w.start_ns < c.from_ns) return;
          base::Status st = FoldIntoRollups(process_id, w, /*rebuilding=*/true);
          if (!st.ok() && status.ok()) status = st;
        },
        &stats);
  }
  if (!status.ok()) {
    (void)Exec("ROLLBACK");
    return status;
  }
  return Exec("COMMIT");
}

base::Status SqliteStore::WriteRollupRow(int64_t tier_ns, int64_t process_id, int64_t start_ns,
                                         uint64_t windows, const model::ProfileWindow& merged) {
  // A row may already hold windows of this bucket (a late window, or the bucket of a process that
  // moved on and came back): merge into it.
  ASSIGN_OR_RETURN(sqlite3_stmt * q,
                   Prepare("SELECT windows, payload FROM rollups"
                           " WHERE tier_ns = ?1 AND start_ns = ?2 AND process_id = ?3"));
  sqlite3_bind_int64(q, 1, tier_ns);
  sqlite3_bind_int64(q, 2, start_ns);
  sqlite3_bind_int64(q, 3, process_id);
  std::optional<model::ProfileWindow> existing;
  uint64_t existing_windows = 0;
  if (sqlite3_step(q) == SQLITE_ROW) {
    const auto* blob = static_cast<const char*>(sqlite3_column_blob(q, 1));
    auto encoded = DecompressPayload(
        std::string_view(blob ? blob : "", static_cast<size_t>(sqlite3_column_bytes(q, 1))));
    if (encoded.ok()) {
      auto w = wire::DecodeWindow(*encoded);
      if (w.ok()) {
        existing = std::move(w).value();
        existing_windows = static_cast<uint64_t>(sqlite3_column_int64(q, 0));
      }
    }
  }
  sqlite3_reset(q);
  std::string encoded;
  if (existing) {
    FoldWindow(merged, RollupBinNs(tier_ns), RollupMergeOptions(), &*existing);
    wire::EncodeWindow(*existing, &encoded);
  } else {
    wire::EncodeWindow(merged, &encoded);
  }
  ASSIGN_OR_RETURN(std::string payload, CompressPayload(encoded));
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("INSERT OR REPLACE INTO rollups"
                           " (tier_ns, start_ns, process_id, end_ns, windows, payload)"
                           " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  sqlite3_bind_int64(s, 1, tier_ns);
  sqlite3_bind_int64(s, 2, start_ns);
  sqlite3_bind_int64(s, 3, process_id);
  sqlite3_bind_int64(s, 4, start_ns + tier_ns);
  sqlite3_bind_int64(s, 5, static_cast<int64_t>(existing_windows + windows));
  sqlite3_bind_blob(s, 6, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
  const int rc = sqlite3_step(s);
  sqlite3_reset(s);
  if (rc != SQLITE_DONE) return Error("cannot store rollup");
  return base::OkStatus();
}

base::Status SqliteStore::FoldIntoRollups(int64_t process_id, const model::ProfileWindow& window,
                                          bool rebuilding) {
  RollupState& st = *rollups_;
  if (window.start_ns < st.from_ns) return base::OkStatus();  // before the tiers' coverage
  st.newest_start_ns = std::max(st.newest_start_ns, window.start_ns);
  const int64_t start_ns = window.start_ns;
  RETURN_IF_ERROR(FoldIntoTier(0, process_id, window, start_ns, 1, rebuilding));
  return SealRollups();
}

base::Status SqliteStore::FoldIntoTier(size_t tier, int64_t process_id,
                                       const model::ProfileWindow& part, int64_t start_ns,
                                       uint64_t windows, bool rebuilding) {
  RollupState& st = *rollups_;
  const int64_t tier_ns = kRollupTierNs[tier];
  const int64_t bucket = FloorTo(start_ns, tier_ns);
  const int64_t bin_ns = RollupBinNs(tier_ns);
  const bool sealed = bucket + tier_ns <= st.sealed_ns;
  if (sealed && rebuilding) return base::OkStatus();  // its row already holds this part
  const RollupState::Key key{tier, process_id};
  auto it = st.open.find(key);
  if (it != st.open.end() && it->second.start_ns == bucket) {
    FoldWindow(part, bin_ns, RollupMergeOptions(), &it->second.merged);
    it->second.windows += windows;
    return base::OkStatus();
  }
  if (sealed || (it != st.open.end() && bucket < it->second.start_ns)) {
    // Late: this bucket was written already (or is behind the open one). Merge into its row, and
    // pass the part on: the coarser bucket did not get it either.
    model::ProfileWindow one;
    FoldWindow(part, bin_ns, RollupMergeOptions(), &one);
    RETURN_IF_ERROR(WriteRollupRow(tier_ns, process_id, bucket, windows, one));
    if (tier + 1 < kRollupTierNs.size())
      return FoldIntoTier(tier + 1, process_id, one, bucket, windows, rebuilding);
    return base::OkStatus();
  }
  if (it != st.open.end()) RETURN_IF_ERROR(CloseBucket(tier, process_id));  // moved on
  RollupState::Open& open = st.open[key];
  open.start_ns = bucket;
  open.windows = windows;
  open.merged = model::ProfileWindow();
  FoldWindow(part, bin_ns, RollupMergeOptions(), &open.merged);
  return base::OkStatus();
}

base::Status SqliteStore::CloseBucket(size_t tier, int64_t process_id) {
  RollupState& st = *rollups_;
  const RollupState::Key key{tier, process_id};
  auto it = st.open.find(key);
  if (it == st.open.end()) return base::OkStatus();
  RollupState::Open closed = std::move(it->second);
  st.open.erase(it);
  RETURN_IF_ERROR(WriteRollupRow(kRollupTierNs[tier], process_id, closed.start_ns, closed.windows,
                                 closed.merged));
  if (tier + 1 < kRollupTierNs.size())
    return FoldIntoTier(tier + 1, process_id, closed.merged, closed.start_ns, closed.windows,
                        /*rebuilding=*/false);
  return base::OkStatus();
}

base::Status SqliteStore::SealRollups() {
  RollupState& st = *rollups_;
  // Sealed in whole buckets of the finest tier behind the newest window (store_meta changes once
  // per bucket).
  const int64_t seal_ns = FloorTo(st.newest_start_ns - kRollupSealGraceNs, kRollupTierNs.front());
  if (st.newest_start_ns == INT64_MIN || seal_ns <= st.sealed_ns) return base::OkStatus();
  // Finest first: a closing bucket is folded into the next tier's, which may then close too.
  for (size_t tier = 0; tier < kRollupTierNs.size(); ++tier) {
    std::vector<int64_t> closing;
    for (const auto& [key, open] : st.open)
      if (key.first == tier && open.start_ns + kRollupTierNs[tier] <= seal_ns)
        closing.push_back(key.second);
    for (int64_t process_id : closing) RETURN_IF_ERROR(CloseBucket(tier, process_id));
  }
  ASSIGN_OR_RETURN(sqlite3_stmt * u,
                   Prepare("UPDATE store_meta SET value = ?1 WHERE key = 'rollups_sealed_ns'"));
  sqlite3_bind_int64(u, 1, seal_ns);
  const int rc = sqlite3_step(u);
  sqlite3_reset(u);
  if (rc != SQLITE_DONE) return Error("cannot seal rollups");
  st.sealed_ns = seal_ns;
  return base::OkStatus();
}

base::StatusOr<std::vector<ProcessInfo>> SqliteStore::ListProcesses(const WindowQuery& query,
                                                                    bool include_idle) {
  std::string sql = "SELECT p.id, " INFERSCOPE_PROCESS_COLUMNS
                    ", count(w.id), coalesce(min(w.start_ns), 0), coalesce(max(w.end_ns), 0)"
                    " FROM processes p LEFT JOIN windows w"
                    " ON w.process_id = p.id AND w.start_ns < ?2 AND w.end_ns > ?1"
                    " WHERE 1" +
                    FilterSql(query) + " GROUP BY p.id";
  sql += include_idle ? " HAVING count(w.id) > 0 OR (p.last_seen_ns >= ?1 AND p.first_seen_ns < ?2)"
                      : " HAVING count(w.id) > 0";
  sql += " ORDER BY p.id";
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
    return Error("cannot list processes");
  OwnedStatement s(raw);
  BindQuery(raw, query);
  std::vector<ProcessInfo> out;
  int rc;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    ProcessInfo info;
    info.process.id = sqlite3_column_int64(raw, 0);
    ReadProcessColumns(raw, 1, &info.process);
    info.windows = static_cast<uint64_t>(sqlite3_column_int64(raw, 1 + kProcessColumns));
    info.first_window_start_ns = sqlite3_column_int64(raw, 2 + kProcessColumns);
    info.last_window_end_ns = sqlite3_column_int64(raw, 3 + kProcessColumns);
    out.push_back(std::move(info));
  }
  if (rc != SQLITE_DONE) return Error("cannot list processes");
  return out;
}

base::StatusOr<std::vector<WindowInfo>> SqliteStore::ListWindows(const WindowQuery& query,
                                                                 size_t limit) {
  std::string sql =
      "SELECT w.id, w.process_id, w.start_ns, w.end_ns, w.received_ns, length(w.payload)"
      " FROM windows w JOIN processes p ON p.id = w.process_id"
      " WHERE w.start_ns < ?2 AND w.end_ns > ?1" +
      FilterSql(query) + " ORDER BY w.start_ns, w.id LIMIT ?5";
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
    return Error("cannot list windows");
  OwnedStatement s(raw);
  BindQuery(raw, query);
  sqlite3_bind_int64(raw, 5, static_cast<int64_t>(std::min<size_t>(limit, INT64_MAX)));
  std::vector<WindowInfo> out;
  int rc;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    WindowInfo w;
    w.id = sqlite3_column_int64(raw, 0);
    w.process_id = sqlite3_column_int64(raw, 1);
    w.start_ns = sqlite3_column_int64(raw, 2);
    w.end_ns = sqlite3_column_int64(raw, 3);
    w.received_ns = sqlite3_column_int64(raw, 4);
    w.stored_bytes = static_cast<uint64_t>(sqlite3_column_int64(raw, 5));
    out.push_back(w);
  }
  if (rc != SQLITE_DONE) return Error("cannot list windows");
  return out;
}

base::StatusOr<StoreSummary> SqliteStore::Summary() {
  // Counts from store_meta (kept by triggers) and both ends from the start_ns index: no scan of
  // the windows (retention asks this every pass).
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("SELECT (SELECT value FROM store_meta WHERE key = 'window_count'),"
                           " (SELECT value FROM store_meta WHERE key = 'window_payload_bytes'),"
                           " coalesce((SELECT min(start_ns) FROM windows), 0),"
                           " coalesce((SELECT max(end_ns) FROM windows WHERE start_ns >="
                           "   (SELECT max(start_ns) FROM windows) -"
                           "   (SELECT value FROM store_meta WHERE key = 'max_window_ns')), 0),"
                           " (SELECT count(*) FROM processes)"));
  if (sqlite3_step(s) != SQLITE_ROW) return Error("cannot summarize store");
  StoreSummary summary;
  summary.windows = static_cast<uint64_t>(sqlite3_column_int64(s, 0));
  summary.payload_bytes = static_cast<uint64_t>(sqlite3_column_int64(s, 1));
  summary.first_start_ns = sqlite3_column_int64(s, 2);
  summary.last_end_ns = sqlite3_column_int64(s, 3);
  summary.processes = static_cast<uint64_t>(sqlite3_column_int64(s, 4));
  sqlite3_reset(s);
  return summary;
}

base::StatusOr<RollupRetention> ParseRollupRetention(std::string_view text) {
  RollupRetention out;
  static constexpr const char* kTierNames[] = {"10m", "1h"};
  static_assert(std::size(kTierNames) == kRollupTierNs.size());
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return base::InvalidArgumentError("expected TIER=AGE (tiers 10m, 1h), got '" +
                                        std::string(item) + "'");
    const std::string_view tier = item.substr(0, eq);
    size_t index = std::size(kTierNames);
    for (size_t i = 0; i < std::size(kTierNames); ++i)
      if (tier == kTierNames[i]) index = i;
    if (tier == "1m")
      return base::InvalidArgumentError(
          "there is no 1m rollup tier any more: raw windows answer the ranges it served (tiers: "
          "10m, 1h)");
    if (index == std::size(kTierNames))
      return base::InvalidArgumentError("unknown rollup tier '" + std::string(tier) +
                                        "' (tiers: 10m, 1h)");
    ASSIGN_OR_RETURN(const int64_t age,
                     base::ParseDuration(item.substr(eq + 1), base::DurationUnits::kWithLongUnits));
    if (age < 0) return base::InvalidArgumentError("rollup retention must not be negative");
    out.max_age_ns[index] = age;
  }
  return out;
}

base::StatusOr<RetentionResult> SqliteStore::ApplyRetention(int64_t max_age_ns, uint64_t max_bytes,
                                                            int64_t now_ns,
                                                            const RollupRetention& tiers) {
  RetentionResult result;
  for (size_t i = 0; i < kRollupTierNs.size(); ++i) {
    // Never shorter than raw windows (see RollupRetention); 0 everywhere = keep everything.
    const int64_t age = max_age_ns > 0 ? std::max(tiers.max_age_ns[i], max_age_ns) : 0;
    if (age <= 0) continue;
    ASSIGN_OR_RETURN(sqlite3_stmt * s,
                     Prepare("DELETE FROM rollups WHERE tier_ns = ?1 AND end_ns < ?2"));
    sqlite3_bind_int64(s, 1, kRollupTierNs[i]);
    sqlite3_bind_int64(s, 2, now_ns - age);
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return Error("cannot delete old rollups");
    result.deleted_rollups += static_cast<uint64_t>(sqlite3_changes(db_));
  }
  const int64_t cutoff_ns = max_age_ns > 0 ? now_ns - max_age_ns : INT64_MIN;
  if (max_age_ns > 0) {
    ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("DELETE FROM windows WHERE received_ns < ?1"));
    sqlite3_bind_int64(s, 1, cutoff_ns);
    if (sqlite3_step(s) != SQLITE_DONE) return Error("cannot delete old windows");
    result.deleted_windows += static_cast<uint64_t>(sqlite3_changes(db_));
  }
  if (max_bytes > 0) {
    ASSIGN_OR_RETURN(StoreSummary summary, Summary());
    if (summary.payload_bytes > max_bytes) {
      // Walk the oldest windows (insertion order = arrival order) until enough bytes are freed,
      // then delete them in one statement.
      uint64_t excess = summary.payload_bytes - max_bytes;
      ASSIGN_OR_RETURN(sqlite3_stmt * s,
                       Prepare("SELECT id, length(payload) FROM windows ORDER BY id"));
      int64_t last_id = -1;
      while (excess > 0 && sqlite3_step(s) == SQLITE_ROW) {
        last_id = sqlite3_column_int64(s, 0);
        const auto bytes = static_cast<uint64_t>(sqlite3_column_int64(s, 1));
        excess -= std::min(excess, bytes);
      }
      sqlite3_reset(s);
      ASSIGN_OR_RETURN(sqlite3_stmt * d, Prepare("DELETE FROM windows WHERE id <= ?1"));
      sqlite3_bind_int64(d, 1, last_id);
      if (sqlite3_step(d) != SQLITE_DONE) return Error("cannot delete windows over the size cap");
      result.deleted_windows += static_cast<uint64_t>(sqlite3_changes(db_));
    }
  }
  if (max_age_ns > 0) {
    ASSIGN_OR_RETURN(sqlite3_stmt * t, Prepare("DELETE FROM telemetry WHERE received_ns < ?1"));
    sqlite3_bind_int64(t, 1, cutoff_ns);
    if (sqlite3_step(t) != SQLITE_DONE) return Error("cannot delete old telemetry");
    result.deleted_telemetry += static_cast<uint64_t>(sqlite3_changes(db_));
  }
  ASSIGN_OR_RETURN(
      sqlite3_stmt * p,
      Prepare("DELETE FROM processes WHERE last_seen_ns < ?1 AND NOT EXISTS"
              " (SELECT 1 FROM windows WHERE process_id = processes.id)"
              " AND NOT EXISTS (SELECT 1 FROM rollups WHERE process_id = processes.id)"));
  sqlite3_bind_int64(p, 1, max_age_ns > 0 ? cutoff_ns : INT64_MIN);
  if (sqlite3_step(p) != SQLITE_DONE) return Error("cannot delete old processes");
  result.deleted_processes = static_cast<uint64_t>(sqlite3_changes(db_));
  sqlite3_reset(p);
  if (result.deleted_windows + result.deleted_rollups + result.deleted_telemetry > 0) {
    // Give the freed pages back (auto_vacuum=INCREMENTAL): the file shrinks once the WAL is
    // checkpointed. Outside a transaction only; inside one the caller's commit does it later.
    if (sqlite3_get_autocommit(db_)) {
      RETURN_IF_ERROR(Exec("PRAGMA incremental_vacuum"));
      RETURN_IF_ERROR(Exec("PRAGMA wal_checkpoint(PASSIVE)"));
    }
  }
  return result;
}

base::Status SqliteStore::AppendTelemetry(const TelemetryRecord& record) {
  ASSIGN_OR_RETURN(std::string payload, CompressPayload(record.json));
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("INSERT INTO telemetry (kind, start_ns, end_ns, received_ns, payload)"
                           " VALUES (?1, ?2, ?3, ?4, ?5)"));
  sqlite3_bind_text(s, 1, record.kind.data(), static_cast<int>(record.kind.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, record.start_ns);
  sqlite3_bind_int64(s, 3, record.end_ns);
  sqlite3_bind_int64(s, 4, record.received_ns);
  sqlite3_bind_blob(s, 5, payload.data(), static_cast<int>(payload.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(s);
  sqlite3_reset(s);
  if (rc != SQLITE_DONE) return Error("cannot store telemetry");
  return base::OkStatus();
}

base::StatusOr<std::vector<TelemetryRecord>> SqliteStore::QueryTelemetry(const std::string& kind,
                                                                         int64_t from_ns,
                                                                         int64_t to_ns) {
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("SELECT start_ns, end_ns, received_ns, payload FROM telemetry"
                           " WHERE kind = ?1 AND start_ns < ?3 AND end_ns > ?2"
                           " ORDER BY start_ns, id"));
  sqlite3_bind_text(s, 1, kind.data(), static_cast<int>(kind.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, from_ns);
  sqlite3_bind_int64(s, 3, to_ns);
  std::vector<TelemetryRecord> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const auto* blob = static_cast<const char*>(sqlite3_column_blob(s, 3));
    auto json = DecompressPayload(
        std::string_view(blob ? blob : "", static_cast<size_t>(sqlite3_column_bytes(s, 3))));
    if (!json.ok()) continue;  // a corrupt row costs only itself
    TelemetryRecord r;
    r.kind = kind;
    r.start_ns = sqlite3_column_int64(s, 0);
    r.end_ns = sqlite3_column_int64(s, 1);
    r.received_ns = sqlite3_column_int64(s, 2);
    r.json = std::move(json).value();
    out.push_back(std::move(r));
  }
  sqlite3_reset(s);
  if (rc != SQLITE_DONE) return Error("cannot read telemetry");
  return out;
}

}  // namespace inferscope::store
