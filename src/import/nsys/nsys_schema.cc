// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/nsys/nsys_schema.h"

#include <algorithm>
#include <filesystem>

namespace inferscope::import::nsys {
namespace {

// The progress handler runs every kProgressOps virtual-machine instructions.
constexpr int kProgressOps = 10000;
// No string we read (a kernel name, an NVTX label) is anywhere near this; a hostile file asking for
// more is refused by SQLite instead of exhausting memory.
constexpr int kMaxValueBytes = 64 << 20;

int ProgressHandler(void* ctx) {
  auto* remaining = static_cast<uint64_t*>(ctx);
  if (*remaining == 0) return 1;  // interrupts the statement with SQLITE_INTERRUPT
  --*remaining;
  return 0;
}

// Per-connection settings for reading an export fast and defensively.
void Configure(sqlite3* db) {
  sqlite3_extended_result_codes(db, 1);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
  // Exports are written once; a large page cache and memory-mapped reads cut per-row cost.
  sqlite3_exec(db,
               "PRAGMA trusted_schema=OFF; PRAGMA cache_size=-65536; PRAGMA mmap_size=1073741824;",
               nullptr, nullptr, nullptr);
}

// "file:" URI for `path` with the characters a URI gives meaning to percent-encoded.
std::string FileUri(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x21 || c >= 0x7f) {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    } else {
      uri += static_cast<char>(c);
    }
  }
  uri += "?immutable=1";
  return uri;
}

}  // namespace

Database::~Database() { sqlite3_close_v2(db_); }

Database& Database::operator=(Database&& other) noexcept {
  std::swap(db_, other.db_);
  std::swap(budget_, other.budget_);
  return *this;
}

base::StatusOr<Database> Database::OpenFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return base::NotFoundError("no such file");
  if (std::filesystem::is_directory(path, ec)) return base::InvalidArgumentError("is a directory");
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(FileUri(path).c_str(), &raw,
                      SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  Database db(raw);
  if (rc != SQLITE_OK) {
    if (raw == nullptr) return base::InternalError("sqlite3_open_v2: out of memory");
    return db.Error(rc, "open");
  }
  Configure(raw);
  return db;
}

base::StatusOr<Database> Database::OpenImage(std::string_view bytes, uint64_t max_vm_steps) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  Database db(raw);
  if (rc != SQLITE_OK) {
    if (raw == nullptr) return base::InternalError("sqlite3_open_v2: out of memory");
    return db.Error(rc, "open");
  }
  static unsigned char empty = 0;
  // READONLY: SQLite reads the caller's buffer in place and never writes or frees it.
  auto* data =
      bytes.empty() ? &empty : reinterpret_cast<unsigned char*>(const_cast<char*>(bytes.data()));
  const auto size = static_cast<sqlite3_int64>(bytes.size());
  const int drc = sqlite3_deserialize(raw, "main", data, size, size, SQLITE_DESERIALIZE_READONLY);
  if (drc != SQLITE_OK) return db.Error(drc, "open image");
  Configure(raw);
  if (max_vm_steps > 0) {
    db.budget_ = std::make_unique<uint64_t>(max_vm_steps / kProgressOps + 1);
    sqlite3_progress_handler(raw, kProgressOps, &ProgressHandler, db.budget_.get());
  }
  return db;
}

base::Status Database::Error(int rc, std::string_view what) const {
  const std::string detail = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  std::string prefix(what);
  prefix += ": ";
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      return base::UnsupportedError(prefix + "not a SQLite database (" + detail + ")");
    case SQLITE_CORRUPT:
      return base::DataLossError(prefix + "corrupt or truncated SQLite file (" + detail + ")");
    case SQLITE_IOERR:
      return base::DataLossError(prefix + "read error, file truncated? (" + detail + ")");
    case SQLITE_INTERRUPT:
      return base::DataLossError(prefix + "query work limit exceeded (hostile or corrupt file)");
    case SQLITE_CANTOPEN:
      return base::NotFoundError(prefix + "cannot open (" + detail + ")");
    case SQLITE_NOMEM:
    case SQLITE_TOOBIG:
      return base::DataLossError(prefix + "value too large or out of memory (" + detail + ")");
    default:
      return base::DataLossError(prefix + detail);
  }
}

base::StatusOr<Statement> Statement::Prepare(const Database& db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc =
      sqlite3_prepare_v2(db.get(), sql.c_str(), static_cast<int>(sql.size() + 1), &stmt, nullptr);
  Statement result(stmt);
  if (rc != SQLITE_OK) return db.Error(rc, "prepare");
  if (stmt == nullptr) return base::InternalError("prepare: empty statement");
  return result;
}

bool TableInfo::Has(std::string_view column) const {
  return std::find(columns.begin(), columns.end(), column) != columns.end();
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string SelectList(const TableInfo& table, const std::vector<std::string_view>& wanted) {
  std::string out;
  for (std::string_view column : wanted) {
    if (!out.empty()) out += ", ";
    out += table.Has(column) ? QuoteIdentifier(column) : std::string("NULL");
  }
  return out;
}

base::StatusOr<Schema> ProbeSchema(const Database& db) {
  std::vector<std::string> tables;
  {
    ASSIGN_OR_RETURN(Statement stmt,
                     Statement::Prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table'"));
    int rc;
    while ((rc = stmt.Step()) == SQLITE_ROW) tables.emplace_back(stmt.Text(0));
    if (rc != SQLITE_DONE) return db.Error(rc, "sqlite_master");
  }
  Schema schema;
  const std::pair<TableInfo*, const char*> wanted[] = {
      {&schema.string_ids, "StringIds"},
      {&schema.kernel, "CUPTI_ACTIVITY_KIND_KERNEL"},
      {&schema.memcpy, "CUPTI_ACTIVITY_KIND_MEMCPY"},
      {&schema.memset, "CUPTI_ACTIVITY_KIND_MEMSET"},
      {&schema.runtime, "CUPTI_ACTIVITY_KIND_RUNTIME"},
      {&schema.sync, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"},
      {&schema.nvtx, "NVTX_EVENTS"},
      {&schema.gpu, "TARGET_INFO_GPU"},
      {&schema.system_env, "TARGET_INFO_SYSTEM_ENV"},
      {&schema.enum_memcpy_oper, "ENUM_CUDA_MEMCPY_OPER"},
      {&schema.enum_mem_kind, "ENUM_CUDA_MEM_KIND"},
      {&schema.enum_sync_type, "ENUM_CUPTI_SYNC_TYPE"},
      {&schema.enum_event_type, "ENUM_NSYS_EVENT_TYPE"},
  };
  ASSIGN_OR_RETURN(Statement columns,
                   Statement::Prepare(db, "SELECT name, hidden FROM pragma_table_xinfo(?)"));
  for (const auto& [info, name] : wanted) {
    info->name = name;
    if (std::find(tables.begin(), tables.end(), name) == tables.end()) continue;
    info->exists = true;
    sqlite3_reset(columns.get());
    sqlite3_bind_text(columns.get(), 1, name, -1, SQLITE_STATIC);
    int rc;
    while ((rc = columns.Step()) == SQLITE_ROW) {
      // hidden: 0 ordinary, 1 virtual-table hidden, 2/3 generated. Generated columns run
      // expressions from the file on every read, so they count as absent.
      if (columns.Int(1) == 0) info->columns.emplace_back(columns.Text(0));
    }
    if (rc != SQLITE_DONE) return db.Error(rc, name);
  }
  return schema;
}

std::vector<std::pair<int64_t, std::string>> ReadEnum(const Database& db, const TableInfo& table) {
  std::vector<std::pair<int64_t, std::string>> rows;
  if (!table.exists || !table.Has("id") || !table.Has("name")) return rows;
  auto stmt = Statement::Prepare(db, "SELECT id, name FROM " + QuoteIdentifier(table.name));
  if (!stmt.ok()) return rows;
  while (stmt->Step() == SQLITE_ROW && rows.size() < 4096) {
    rows.emplace_back(stmt->Int(0), std::string(stmt->Text(1)));
  }
  return rows;
}

}  // namespace inferscope::import::nsys
