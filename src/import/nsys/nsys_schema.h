// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// SQLite plumbing and schema probing for the Nsight Systems importer. Nsight's export schema has
// changed across releases (2.x `EXPORT_META_DATA` in 2022, 3.x `META_DATA_EXPORT` since 2023;
// tables and columns come and go), so the importer never assumes a column exists: it asks here
// which do and builds each SELECT from the answer.

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace inferscope::import::nsys {

// Owns a read-only sqlite3 connection. Move-only; closes on destruction.
class Database {
 public:
  Database() = default;
  ~Database();
  Database(Database&& other) noexcept
      : db_(std::exchange(other.db_, nullptr)), budget_(std::move(other.budget_)) {}
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Opens `path` read-only and immutable (no locks, no journal: exports are never written to).
  static base::StatusOr<Database> OpenFile(const std::string& path);
  // Opens an in-memory copy-free view of a database image. `bytes` must outlive the Database.
  // `max_vm_steps` > 0 bounds the work any one query may do (the fuzzer feeds hostile schemas).
  static base::StatusOr<Database> OpenImage(std::string_view bytes, uint64_t max_vm_steps);

  sqlite3* get() const { return db_; }

  // Turns the connection's last error into a one-line Status naming `what` (e.g. the table).
  base::Status Error(int rc, std::string_view what) const;

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
  std::unique_ptr<uint64_t> budget_;  // VM-step budget left, in units of kProgressOps (OpenImage)
};

// Owns a prepared statement. Move-only; finalizes on destruction.
class Statement {
 public:
  Statement() = default;
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(Statement&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)) {}
  Statement& operator=(Statement&& other) noexcept {
    std::swap(stmt_, other.stmt_);
    return *this;
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  static base::StatusOr<Statement> Prepare(const Database& db, const std::string& sql);

  sqlite3_stmt* get() const { return stmt_; }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string_view Text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    if (p == nullptr) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
  }

 private:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  sqlite3_stmt* stmt_ = nullptr;
};

// The ordinary (non-generated) columns of one table, as the file declares them.
struct TableInfo {
  std::string name;
  bool exists = false;
  std::vector<std::string> columns;

  bool Has(std::string_view column) const;
};

// What the file holds: every table the importer may read, probed once.
struct Schema {
  TableInfo string_ids;        // StringIds(id, value)
  TableInfo kernel;            // CUPTI_ACTIVITY_KIND_KERNEL
  TableInfo memcpy;            // CUPTI_ACTIVITY_KIND_MEMCPY
  TableInfo memset;            // CUPTI_ACTIVITY_KIND_MEMSET
  TableInfo runtime;           // CUPTI_ACTIVITY_KIND_RUNTIME
  TableInfo sync;              // CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
  TableInfo nvtx;              // NVTX_EVENTS
  TableInfo gpu;               // TARGET_INFO_GPU (device names; absent in some 3.x exports)
  TableInfo system_env;        // TARGET_INFO_SYSTEM_ENV (hostname)
  TableInfo enum_memcpy_oper;  // ENUM_CUDA_MEMCPY_OPER(id, name)
  TableInfo enum_mem_kind;     // ENUM_CUDA_MEM_KIND(id, name)
  TableInfo enum_sync_type;    // ENUM_CUPTI_SYNC_TYPE(id, name)
  TableInfo enum_event_type;   // ENUM_NSYS_EVENT_TYPE(id, name)
};

// Reads sqlite_master and the columns of the tables above. Only real tables count (a view or a
// virtual table of the same name is ignored). Errors: kUnsupported for a file that is not SQLite,
// kDataLoss for a corrupt one.
base::StatusOr<Schema> ProbeSchema(const Database& db);

// "a, b, NULL" for `wanted` columns in order: a column the table lacks becomes NULL, so the
// importer reads fixed column indices whatever the schema version.
std::string SelectList(const TableInfo& table, const std::vector<std::string_view>& wanted);

// Quotes an SQL identifier ("name" with embedded quotes doubled).
std::string QuoteIdentifier(std::string_view name);

// Reads (id, name) rows of an ENUM_* table; empty when the table is absent or unreadable.
std::vector<std::pair<int64_t, std::string>> ReadEnum(const Database& db, const TableInfo& table);

}  // namespace inferscope::import::nsys
