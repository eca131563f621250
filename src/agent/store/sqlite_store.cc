// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agent/store/sqlite_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "src/wire/window_codec.h"

namespace inferscope::agent {
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
};
constexpr int kSchemaVersion = static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));

constexpr uint8_t kCodecZlib = 1;
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

base::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& state_dir,
                                                               Mode mode) {
  namespace fs = std::filesystem;
  const std::string path = state_dir + "/" + kFileName;
  int flags = SQLITE_OPEN_NOMUTEX;
  if (mode == Mode::kReadWrite) {
    std::error_code ec;
    if (!fs::is_directory(state_dir, ec)) {
      fs::create_directories(state_dir, ec);
      if (ec)
        return base::UnavailableError(state_dir +
                                      ": cannot create state directory: " + ec.message());
      ::chmod(state_dir.c_str(), 0700);  // sockets and profiles of this user only
    }
    flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    // Created owner-only (SQLite gives its -wal and -shm files the database file's mode): the
    // profiles name this user's processes and kernels. An existing file keeps its mode.
    if (!fs::exists(path, ec)) {
      const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd >= 0) ::close(fd);
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
    RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"));
    RETURN_IF_ERROR(store->Migrate());
  } else {
    ASSIGN_OR_RETURN(sqlite3_stmt * s, store->Prepare("PRAGMA user_version"));
    if (sqlite3_step(s) != SQLITE_ROW) return store->Error("cannot read the schema version");
    store->schema_version_ = sqlite3_column_int(s, 0);
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

base::Status SqliteStore::Begin() { return Exec("BEGIN IMMEDIATE"); }
base::Status SqliteStore::Commit() { return Exec("COMMIT"); }
base::Status SqliteStore::Rollback() { return Exec("ROLLBACK"); }

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

base::StatusOr<std::string> SqliteStore::CompressPayload(std::string_view encoded) {
  if (encoded.size() > kMaxUncompressedBytes)
    return base::InvalidArgumentError("window too large to store");
  uLongf bound = compressBound(static_cast<uLong>(encoded.size()));
  std::string out(kPayloadHeaderBytes + bound, '\0');
  out[0] = static_cast<char>(kCodecZlib);
  const uint32_t n = static_cast<uint32_t>(encoded.size());
  for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  const int rc = compress2(reinterpret_cast<Bytef*>(out.data() + kPayloadHeaderBytes), &bound,
                           reinterpret_cast<const Bytef*>(encoded.data()), n, 6);
  if (rc != Z_OK) return base::InternalError("zlib compress2 failed: " + std::to_string(rc));
  out.resize(kPayloadHeaderBytes + bound);
  return out;
}

base::StatusOr<std::string> SqliteStore::DecompressPayload(std::string_view stored) {
  if (stored.size() < kPayloadHeaderBytes || static_cast<uint8_t>(stored[0]) != kCodecZlib)
    return base::DataLossError("stored window has an unknown codec");
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<uint32_t>(static_cast<uint8_t>(stored[1 + i])) << (8 * i);
  if (n > kMaxUncompressedBytes) return base::DataLossError("stored window size is corrupt");
  std::string out(n, '\0');
  uLongf out_len = n;
  const int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &out_len,
                            reinterpret_cast<const Bytef*>(stored.data() + kPayloadHeaderBytes),
                            static_cast<uLong>(stored.size() - kPayloadHeaderBytes));
  if (rc != Z_OK || out_len != n) return base::DataLossError("stored window does not inflate");
  return out;
}

base::Status SqliteStore::AppendWindow(const PendingWindow& window) {
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
  return base::OkStatus();
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
#define INFERSCOPE_PROCESS_COLUMNS                                                           \
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

base::StatusOr<QueryResult> SqliteStore::QueryWindows(const WindowQuery& query) {
  // Overlap with [from, to): a window that started before `from` but ends after it counts.
  std::string sql =
      "SELECT w.process_id, w.payload, " INFERSCOPE_PROCESS_COLUMNS
      " FROM windows w JOIN processes p ON p.id = w.process_id"
      " WHERE w.start_ns < ?2 AND w.end_ns > ?1" +
      FilterSql(query) + " ORDER BY w.start_ns, w.id";
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
    return Error("cannot query windows");
  OwnedStatement s(raw);
  BindQuery(raw, query);

  QueryResult result;
  int rc;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    const int64_t process_id = sqlite3_column_int64(raw, 0);
    const auto* blob = static_cast<const char*>(sqlite3_column_blob(raw, 1));
    const std::string_view stored(blob ? blob : "",
                                  static_cast<size_t>(sqlite3_column_bytes(raw, 1)));
    auto encoded = DecompressPayload(stored);
    auto window = encoded.ok() ? wire::DecodeWindow(*encoded)
                               : base::StatusOr<model::ProfileWindow>(encoded.status());
    if (!window.ok()) {
      ++result.corrupt_windows;
      continue;
    }
    if (!result.processes.count(process_id)) {
      StoredProcess& p = result.processes[process_id];
      ReadProcessColumns(raw, 2, &p);
      p.id = process_id;
    }
    result.windows.push_back({process_id, std::move(window).value()});
  }
  if (rc != SQLITE_DONE) return Error("cannot read windows");
  return result;
}

base::StatusOr<std::vector<ProcessInfo>> SqliteStore::ListProcesses(const WindowQuery& query,
                                                                    bool include_idle) {
  std::string sql =
      "SELECT p.id, " INFERSCOPE_PROCESS_COLUMNS
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
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("SELECT count(*), coalesce(sum(length(payload)), 0),"
                           " coalesce(min(start_ns), 0), coalesce(max(end_ns), 0),"
                           " (SELECT count(*) FROM processes) FROM windows"));
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

base::StatusOr<RetentionResult> SqliteStore::ApplyRetention(int64_t max_age_ns, uint64_t max_bytes,
                                                            int64_t now_ns) {
  RetentionResult result;
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
  ASSIGN_OR_RETURN(sqlite3_stmt * p,
                   Prepare("DELETE FROM processes WHERE last_seen_ns < ?1 AND NOT EXISTS"
                           " (SELECT 1 FROM windows WHERE process_id = processes.id)"));
  sqlite3_bind_int64(p, 1, max_age_ns > 0 ? cutoff_ns : INT64_MIN);
  if (sqlite3_step(p) != SQLITE_DONE) return Error("cannot delete old processes");
  result.deleted_processes = static_cast<uint64_t>(sqlite3_changes(db_));
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

}  // namespace inferscope::agent
