// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/import/nsys/nsys_importer.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/import/nsys/nsys_mapping.h"
#include "src/import/nsys/nsys_schema.h"
#include "src/import/nsys/nsys_split_scan.h"
#include "src/model/cuda_api.h"

namespace inferscope::import {
namespace {

using model::NameId;
using nsys::Database;
using nsys::Statement;
using nsys::TableInfo;

constexpr int64_t kLow24 = 0xFFFFFF;
constexpr int64_t kInvalidStreamId = 0xFFFFFFFFll;  // CUPTI's "no stream"
// StringIds ids are dense from 0 in every export seen; ids up to this many are cached in a vector,
// anything beyond (only a hostile file) in a hash map.
constexpr int64_t kDenseStringIdLimit = int64_t{1} << 22;
constexpr NameId kUnresolved = model::kNoName - 1;  // cache slot not looked up yet
constexpr uint8_t kUnclassified = 0xff;
constexpr size_t kMaxPendingSyncs = size_t{1} << 21;  // bounds memory on huge files

// The importer for one open database: streams each table once, in a fixed order (kernels, copies
// and memsets first, so synchronization rows can find their context's device and their API call's
// thread). Holds only small per-file caches; never a row.
class Importer {
 public:
  // `path` is the database file (empty for an in-memory image): large tables are then read on
  // two connections at once.
  Importer(Database db, std::string path, model::NameTable* names, model::EventSink* sink,
           bool kernel_resources)
      : db_(std::move(db)),
        path_(std::move(path)),
        names_(names),
        sink_(sink),
        kernel_resources_(kernel_resources) {}

  base::StatusOr<ImportStats> Run(uint64_t input_bytes) {
    stats_.format = TraceFormat::kNsysSqlite;
    stats_.file_bytes = stats_.input_bytes = input_bytes;
    ASSIGN_OR_RETURN(schema_, nsys::ProbeSchema(db_));
    if (!schema_.kernel.exists && !schema_.string_ids.exists) {
      return base::UnsupportedError(
          "not an Nsight Systems export (no CUPTI_ACTIVITY_KIND_KERNEL table)");
    }
    if (schema_.kernel.exists && (!HasTimes(schema_.kernel))) {
      return base::UnsupportedError("CUPTI_ACTIVITY_KIND_KERNEL has no start/end columns");
    }
    codes_.LoadFrom(db_, schema_);
    RETURN_IF_ERROR(PrepareStringLookup());
    ReadHostname();
    ReadSessionStart();
    ReadGpuNames();
    RETURN_IF_ERROR(ImportKernels());
    RETURN_IF_ERROR(ImportMemcpys());
    RETURN_IF_ERROR(ImportMemsets());
    // Synchronization rows have no thread: they are held until the runtime scan has found the API
    // call with the same correlation id (cudaStreamSynchronize, cudaEventQuery, ...).
    RETURN_IF_ERROR(ImportSyncs());
    RETURN_IF_ERROR(ImportRuntime());
    for (const model::SyncEvent& e : pending_syncs_) sink_->OnSync(e);
    pending_syncs_.clear();
    RETURN_IF_ERROR(ImportNvtx());
    return stats_;
  }

 private:
  static bool HasTimes(const TableInfo& t) { return t.exists && t.Has("start") && t.Has("end"); }

  // Runs `sql` and calls `on_row` for each row; a read error ends the import.
  template <typename F>
  base::Status ForEachRow(const std::string& sql, const std::string& table, F&& on_row) {
    ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db_, sql));
    int rc;
    while ((rc = stmt.Step()) == SQLITE_ROW) {
      ++stats_.events_read;
      on_row(stmt);
    }
    if (rc != SQLITE_DONE) return db_.Error(rc, table);
    return base::OkStatus();
  }

  // ---- processes, devices, names -------------------------------------------------------------

  // pid of a globalPid/globalTid (bits 24..47; the low 24 bits of a globalTid are the tid).
  // Announces the process the first time it is seen.
  uint32_t Pid(int64_t global_id) {
    const auto pid = static_cast<uint32_t>((global_id >> 24) & kLow24);
    if (pid == last_pid_ && have_last_pid_) return pid;
    bool known = false;
    for (uint32_t p : pids_) known = known || p == pid;
    if (!known) {
      pids_.push_back(pid);
      model::ProcessInfo info;
      info.pid = pid;
      info.hostname = hostname_;
      sink_->OnProcess(info);
    }
    last_pid_ = pid;
    have_last_pid_ = true;
    return pid;
  }

  // Announces (pid, device) once and remembers which device a (pid, context) runs on.
  void NoteDevice(uint32_t pid, uint32_t device, int64_t context) {
    if (pid == last_dev_pid_ && device == last_device_ && context == last_context_) return;
    last_dev_pid_ = pid;
    last_device_ = device;
    last_context_ = context;
    bool known = false;
    for (const auto& [p, d] : devices_) known = known || (p == pid && d == device);
    if (!known) {
      devices_.emplace_back(pid, device);
      model::DeviceInfo info;
      info.pid = pid;
      info.device = device;
      for (const auto& [id, name] : gpu_names_) {
        if (id == device) {
          info.name = name;
          break;
        }
      }
      sink_->OnDevice(info);
    }
    const uint64_t key = ContextKey(pid, context);
    if (context_device_.size() < 4096) context_device_.try_emplace(key, device);
  }

  static uint64_t ContextKey(uint32_t pid, int64_t context) {
    return (uint64_t{pid} << 32) ^ static_cast<uint64_t>(context);
  }

  base::Status PrepareStringLookup() {
    if (!schema_.string_ids.exists || !schema_.string_ids.Has("id") ||
        !schema_.string_ids.Has("value")) {
      return base::OkStatus();
    }
    ASSIGN_OR_RETURN(Statement max_id, Statement::Prepare(db_, "SELECT max(id) FROM StringIds"));
    const int rc = max_id.Step();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_.Error(rc, "StringIds");
    const int64_t max = rc == SQLITE_ROW ? max_id.Int(0) : -1;
    if (max >= 0)
      dense_names_.assign(static_cast<size_t>(std::min(max, kDenseStringIdLimit - 1) + 1),
                          kUnresolved);
    ASSIGN_OR_RETURN(string_lookup_,
                     Statement::Prepare(db_, "SELECT value FROM StringIds WHERE id = ?"));
    return base::OkStatus();
  }

  // NameId of a StringIds id; each distinct id is read and interned once.
  NameId NameOfStringId(int64_t id) {
    if (id >= 0 && id < static_cast<int64_t>(dense_names_.size())) {
      NameId& slot = dense_names_[static_cast<size_t>(id)];
      if (slot == kUnresolved) slot = LookUpString(id);
      return slot;
    }
    if (string_lookup_.get() == nullptr) return model::kNoName;
    auto [it, inserted] = sparse_names_.try_emplace(id, model::kNoName);
    if (inserted) it->second = LookUpString(id);
    return it->second;
  }

  NameId LookUpString(int64_t id) {
    sqlite3_stmt* s = string_lookup_.get();
    if (s == nullptr) return model::kNoName;
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, id);
    NameId name = model::kNoName;
    if (sqlite3_step(s) == SQLITE_ROW && !string_lookup_.IsNull(0)) {
      name = names_->Intern(string_lookup_.Text(0));
    }
    sqlite3_reset(s);
    return name;
  }

  model::CudaApiClass ClassOf(NameId name) {
    if (name == model::kNoName) return {};
    if (name >= api_classes_.size()) api_classes_.resize(name + 1, kUnclassified);
    uint8_t& slot = api_classes_[name];
    if (slot == kUnclassified) {
      const model::CudaApiClass c = model::ClassifyCudaApi(names_->Get(name));
      slot =
          static_cast<uint8_t>(static_cast<uint8_t>(c.kind) | (static_cast<uint8_t>(c.sync) << 4));
    }
    return {static_cast<model::ApiKind>(slot & 15), static_cast<model::SyncType>(slot >> 4)};
  }

  void ReadHostname() {
    const TableInfo& t = schema_.system_env;
    if (!t.exists || !t.Has("name") || !t.Has("value")) return;
    auto stmt = Statement::Prepare(
        db_, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' LIMIT 1");
    if (stmt.ok() && stmt->Step() == SQLITE_ROW && !stmt->IsNull(0)) {
      hostname_ = names_->Intern(stmt->Text(0));
    }
  }

  // Timestamps count from the capture's start; its UTC time puts them on the wall clock (how
  // separate runs are told apart, src/pipeline). Exports without the table leave it unknown.
  void ReadSessionStart() {
    auto stmt =
        Statement::Prepare(db_, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1");
    if (stmt.ok() && stmt->Step() == SQLITE_ROW && !stmt->IsNull(0) && stmt->Int(0) > 0)
      stats_.wall_clock_offset_ns = stmt->Int(0);
  }

  void ReadGpuNames() {
    const TableInfo& t = schema_.gpu;
    if (!t.exists || !t.Has("id") || !t.Has("name")) return;
    auto stmt = Statement::Prepare(db_, "SELECT id, name FROM TARGET_INFO_GPU");
    if (!stmt.ok()) return;
    while (stmt->Step() == SQLITE_ROW && gpu_names_.size() < 1024) {
      if (stmt->IsNull(1)) continue;
      gpu_names_.emplace_back(static_cast<uint32_t>(stmt->Int(0)), names_->Intern(stmt->Text(1)));
    }
  }

  // Counts and rejects zero or reversed timestamps.
  bool ValidTimes(uint32_t pid, int64_t start, int64_t end) {
    if (start == 0 || end == 0) {
      sink_->OnDataQuality(pid, model::DataQuality::kZeroTimestamp);
      return false;
    }
    if (end < start) {
      sink_->OnDataQuality(pid, model::DataQuality::kReversedTimestamp);
      return false;
    }
    return true;
  }

  // ---- tables --------------------------------------------------------------------------------

  static std::string_view FirstOf(const TableInfo& t,
                                  std::initializer_list<std::string_view> cols) {
    for (std::string_view c : cols) {
      if (t.Has(c)) return c;
    }
    return "missing_column";  // SelectList turns an absent column into NULL
  }

  std::string Select(const TableInfo& t, const std::vector<std::string_view>& cols,
                     const std::string& where = {}) {
    return "SELECT " + nsys::SelectList(t, cols) + " FROM " + nsys::QuoteIdentifier(t.name) + where;
  }

  base::Status ImportKernels() {
    const TableInfo& t = schema_.kernel;
    if (!HasTimes(t)) return base::OkStatus();
    std::string list =
        nsys::SelectList(t, {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                             "globalPid", FirstOf(t, {"demangledName", "shortName", "mangledName"}),
                             "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "graphId"});
    int columns = 15;
    if (kernel_resources_) {
      // -1 for NULL or an absent column (older exports): the split scan reads integers only.
      for (std::string_view c : {"registersPerThread", "staticSharedMemory", "dynamicSharedMemory"})
        list += t.Has(c) ? ", COALESCE(" + nsys::QuoteIdentifier(c) + ", -1)" : std::string(", -1");
      columns += 3;
    }
    const std::string sql = "SELECT " + list + " FROM " + nsys::QuoteIdentifier(t.name);
    const int kColumns = columns;
    auto on_row = [&](const auto& r) {
      const uint32_t pid = Pid(r.Int(6));
      const int64_t start = r.Int(0);
      const int64_t end = r.Int(1);
      if (!ValidTimes(pid, start, end)) return;
      model::KernelEvent e;
      e.start_ns = start;
      e.end_ns = end;
      e.pid = pid;
      e.device = static_cast<uint32_t>(r.Int(2));
      NoteDevice(pid, e.device, r.Int(3));
      e.stream = static_cast<uint32_t>(r.Int(4));
      e.correlation_id = static_cast<uint32_t>(r.Int(5));
      e.name = NameOfStringId(r.Int(7));
      for (int i = 0; i < 3; ++i) {
        e.grid[i] = static_cast<int32_t>(r.Int(8 + i));
        e.block[i] = static_cast<int32_t>(r.Int(11 + i));
      }
      e.graph_id = static_cast<uint32_t>(r.Int(14));
      if (kernel_resources_) {
        model::KernelResourcesEvent k;
        k.pid = pid;
        k.name = e.name;
        model::KernelResources& res = k.resources;
        res.registers_per_thread =
            model::KernelResourceValue(r.Int(15), model::kMaxRegistersPerThread);
        res.static_shared_bytes = model::KernelResourceValue(r.Int(16));
        res.dynamic_shared_bytes = model::KernelResourceValue(r.Int(17));
        // The sum only when both parts are known (and it fits).
        if (res.static_shared_bytes >= 0 && res.dynamic_shared_bytes >= 0)
          res.shared_bytes = model::KernelResourceValue(int64_t{res.static_shared_bytes} +
                                                        res.dynamic_shared_bytes);
        if (resources_.Changed(k.name, res)) sink_->OnKernelResources(k);  // before its kernel
      }
      sink_->OnKernel(e);
      ++stats_.kernels;
    };
    const int64_t split = SplitPoint(t);
    if (split < 0) return ForEachRow(sql, t.name, on_row);

    // A large table on a file: the upper rowid half is read on a second connection and thread
    // while this one reads the lower half and takes the helper's rows as they come.
    nsys::SplitScan helper(path_, sql + " WHERE rowid > " + std::to_string(split), kColumns);
    ASSIGN_OR_RETURN(Statement stmt,
                     Statement::Prepare(db_, sql + " WHERE rowid <= " + std::to_string(split)));
    int rc;
    uint64_t rows = 0;
    while ((rc = stmt.Step()) == SQLITE_ROW) {
      on_row(stmt);
      if ((++rows & 4095) == 0) RETURN_IF_ERROR(helper.Take(on_row, /*wait=*/false));
    }
    if (rc != SQLITE_DONE) return db_.Error(rc, t.name);
    RETURN_IF_ERROR(helper.Take(on_row, /*wait=*/true));
    stats_.events_read += rows + helper.rows_read();
    return base::OkStatus();
  }

  // The rowid that splits table `t` in two for a parallel scan, or -1 when it is not worth it
  // (small table, in-memory image, or a table without rowids).
  int64_t SplitPoint(const TableInfo& t) {
    constexpr int64_t kMinRowsToSplit = 200'000;
    if (path_.empty()) return -1;
    auto stmt = Statement::Prepare(
        db_, "SELECT min(rowid), max(rowid) FROM " + nsys::QuoteIdentifier(t.name));
    if (!stmt.ok() || stmt->Step() != SQLITE_ROW || stmt->IsNull(0)) return -1;
    const int64_t lo = stmt->Int(0);
    const int64_t hi = stmt->Int(1);
    if (hi - lo < kMinRowsToSplit) return -1;
    // The importer thread also turns every row (its own and the helper's) into events, so it
    // takes the smaller share.
    return lo + (hi - lo) * 2 / 5;
  }

  base::Status ImportMemcpys() {
    const TableInfo& t = schema_.memcpy;
    if (!HasTimes(t)) return base::OkStatus();
    std::string sql =
        Select(t, {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                   "globalPid", "bytes", "copyKind", "srcKind", "dstKind"});
    return ForEachRow(sql, t.name, [&](const Statement& r) {
      const uint32_t pid = Pid(r.Int(6));
      const int64_t start = r.Int(0);
      const int64_t end = r.Int(1);
      if (!ValidTimes(pid, start, end)) return;
      model::MemcpyEvent e;
      e.start_ns = start;
      e.end_ns = end;
      e.pid = pid;
      e.device = static_cast<uint32_t>(r.Int(2));
      NoteDevice(pid, e.device, r.Int(3));
      e.stream = static_cast<uint32_t>(r.Int(4));
      e.correlation_id = static_cast<uint32_t>(r.Int(5));
      e.bytes = static_cast<uint64_t>(r.Int(7));
      e.kind = r.IsNull(8) ? model::MemcpyKind::kUnknown : codes_.Memcpy(r.Int(8));
      e.pageable = (!r.IsNull(9) && codes_.Pageable(r.Int(9))) ||
                   (!r.IsNull(10) && codes_.Pageable(r.Int(10)));
      sink_->OnMemcpy(e);
    });
  }

  base::Status ImportMemsets() {
    const TableInfo& t = schema_.memset;
    if (!HasTimes(t)) return base::OkStatus();
    std::string sql = Select(t, {"start", "end", "deviceId", "contextId", "streamId",
                                 "correlationId", "globalPid", "bytes"});
    return ForEachRow(sql, t.name, [&](const Statement& r) {
      const uint32_t pid = Pid(r.Int(6));
      const int64_t start = r.Int(0);
      const int64_t end = r.Int(1);
      if (!ValidTimes(pid, start, end)) return;
      model::MemsetEvent e;
      e.start_ns = start;
      e.end_ns = end;
      e.pid = pid;
      e.device = static_cast<uint32_t>(r.Int(2));
      NoteDevice(pid, e.device, r.Int(3));
      e.stream = static_cast<uint32_t>(r.Int(4));
      e.correlation_id = static_cast<uint32_t>(r.Int(5));
      e.bytes = static_cast<uint64_t>(r.Int(7));
      sink_->OnMemset(e);
    });
  }

  base::Status ImportRuntime() {
    const TableInfo& t = schema_.runtime;
    if (!HasTimes(t)) return base::OkStatus();
    // 2.x exports also have a `name` text column (NULL in practice); nameId wins when present.
    const bool by_id = t.Has("nameId");
    std::string sql =
        Select(t, {"start", "end", "globalTid", "correlationId", by_id ? "nameId" : "name"});
    return ForEachRow(sql, t.name, [&](const Statement& r) {
      const int64_t gtid = r.Int(2);
      const uint32_t pid = Pid(gtid);
      const int64_t start = r.Int(0);
      const int64_t end = r.Int(1);
      if (!ValidTimes(pid, start, end)) return;
      model::ApiCallEvent e;
      e.start_ns = start;
      e.end_ns = end;
      e.pid = pid;
      e.tid = static_cast<uint32_t>(gtid & kLow24);
      e.correlation_id = static_cast<uint32_t>(r.Int(3));
      if (!r.IsNull(4)) e.name = by_id ? NameOfStringId(r.Int(4)) : names_->Intern(r.Text(4));
      const model::CudaApiClass c = ClassOf(e.name);
      e.kind = c.kind;
      e.sync_type = c.sync;
      // Launches and copies (the bulk of the rows) never own a synchronization row.
      if (!sync_by_call_.empty() &&
          (c.kind == model::ApiKind::kSync || c.kind == model::ApiKind::kQuery ||
           c.kind == model::ApiKind::kOther)) {
        auto it = sync_by_call_.find((uint64_t{pid} << 32) | e.correlation_id);
        if (it != sync_by_call_.end()) pending_syncs_[it->second].tid = e.tid;
      }
      sink_->OnApiCall(e);
    });
  }

  base::Status ImportSyncs() {
    const TableInfo& t = schema_.sync;
    if (!HasTimes(t)) return base::OkStatus();
    // 3.x exports keep the old column as deprecatedSyncType (NULL in the files seen).
    std::string type = "-1";
    if (t.Has("syncType") && t.Has("deprecatedSyncType")) {
      type = "coalesce(syncType, deprecatedSyncType, -1)";
    } else if (t.Has("syncType")) {
      type = "coalesce(syncType, -1)";
    }
    const std::string stream = t.Has("streamId") ? "coalesce(streamId, -1)" : "-1";
    const std::string sql =
        "SELECT " +
        nsys::SelectList(t, {"start", "end", "contextId", "correlationId", "globalPid"}) + ", " +
        stream + ", " + type + " FROM " + nsys::QuoteIdentifier(t.name);
    return ForEachRow(sql, t.name, [&](const Statement& r) {
      const uint32_t pid = Pid(r.Int(4));
      const int64_t start = r.Int(0);
      const int64_t end = r.Int(1);
      if (!ValidTimes(pid, start, end)) return;
      model::SyncEvent e;
      e.start_ns = start;
      e.end_ns = end;
      e.pid = pid;
      e.type = codes_.Sync(r.Int(6));
      // The table's own deviceId column is 0 for every context in the 3.x files; the device comes
      // from the kernels and copies of the same context instead.
      if (auto it = context_device_.find(ContextKey(pid, r.Int(2))); it != context_device_.end()) {
        e.device = it->second;
      }
      const int64_t stream_id = r.Int(5);
      if (stream_id >= 0 && stream_id < kInvalidStreamId && e.type != model::SyncType::kDevice) {
        e.stream = static_cast<uint32_t>(stream_id);
      }
      const auto corr = static_cast<uint32_t>(r.Int(3));
      e.correlation_id = corr;
      if (corr == 0 || pending_syncs_.size() >= kMaxPendingSyncs) {
        sink_->OnSync(e);  // no call to find (or too many held): thread stays unknown
        return;
      }
      sync_by_call_.try_emplace((uint64_t{pid} << 32) | corr, pending_syncs_.size());
      pending_syncs_.push_back(e);
    });
  }

  base::Status ImportNvtx() {
    const TableInfo& t = schema_.nvtx;
    if (!HasTimes(t)) return base::OkStatus();
    std::string where = " WHERE \"end\" IS NOT NULL";
    if (t.Has("eventType")) {
      where += " AND eventType IN (";
      const auto& types = codes_.NvtxRangeTypes();
      for (size_t i = 0; i < types.size(); ++i) {
        where += (i ? ", " : "") + std::to_string(types[i]);
      }
      where += ")";
    }
    const std::string sql = Select(t, {"start", "end", "globalTid", "text", "textId"}, where);
    return ForEachRow(sql, t.name, [&](const Statement& r) {
      const int64_t gtid = r.Int(2);
      const uint32_t pid = Pid(gtid);
      const int64_t start = r.Int(0);
      const int64_t end = r.Int(1);
      if (end == start && start != 0) {  // an instant, not a range
        ++stats_.events_skipped;
        return;
      }
      if (!ValidTimes(pid, start, end)) return;
      model::NvtxEvent e;
      e.start_ns = start;
      e.end_ns = end;
      e.pid = pid;
      e.tid = static_cast<uint32_t>(gtid & kLow24);
      if (!r.IsNull(3)) {
        e.name = names_->Intern(r.Text(3));
      } else if (!r.IsNull(4)) {
        e.name = NameOfStringId(r.Int(4));
      }
      sink_->OnNvtx(e);
    });
  }

  Database db_;
  std::string path_;  // empty for an in-memory image
  model::NameTable* names_;
  model::EventSink* sink_;
  nsys::Schema schema_;
  nsys::CodeMaps codes_;
  ImportStats stats_;

  Statement string_lookup_;
  std::vector<NameId> dense_names_;
  std::unordered_map<int64_t, NameId> sparse_names_;
  std::vector<uint8_t> api_classes_;  // per NameId: ApiKind | SyncType << 4, or kUnclassified

  NameId hostname_ = model::kNoName;
  std::vector<std::pair<uint32_t, NameId>> gpu_names_;  // TARGET_INFO_GPU id -> name

  std::vector<uint32_t> pids_;
  uint32_t last_pid_ = 0;
  bool have_last_pid_ = false;
  std::vector<std::pair<uint32_t, uint32_t>> devices_;  // announced (pid, device)
  uint32_t last_dev_pid_ = 0xffffffffu;
  uint32_t last_device_ = 0xffffffffu;
  int64_t last_context_ = -1;
  std::unordered_map<uint64_t, uint32_t> context_device_;  // (pid, contextId) -> device
  std::vector<model::SyncEvent> pending_syncs_;            // held until their tid is known
  const bool kernel_resources_;
  model::KernelResourcesInterner resources_;
  std::unordered_map<uint64_t, size_t> sync_by_call_;  // (pid, correlationId) -> index
};

}  // namespace

base::StatusOr<ImportStats> ImportNsysSqlite(const std::string& path, model::NameTable* names,
                                             model::EventSink* sink, bool kernel_resources) {
  if (names == nullptr || sink == nullptr) {
    return base::InvalidArgumentError("ImportNsysSqlite: null NameTable or EventSink");
  }
  auto prefixed = [&](const base::Status& s) {
    return base::Status(s.code(), path + ": " + s.message());
  };
  auto db = Database::OpenFile(path);
  if (!db.ok()) return prefixed(db.status());
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  Importer importer(std::move(db).value(), path, names, sink, kernel_resources);
  auto stats = importer.Run(ec ? 0 : static_cast<uint64_t>(size));
  if (!stats.ok()) return prefixed(stats.status());
  return stats;
}

base::StatusOr<ImportStats> ImportNsysSqliteImage(std::string_view bytes, model::NameTable* names,
                                                  model::EventSink* sink, bool kernel_resources) {
  if (names == nullptr || sink == nullptr) {
    return base::InvalidArgumentError("ImportNsysSqliteImage: null NameTable or EventSink");
  }
  // Bounds the SQLite work per query: an export does a few dozen VM steps per byte at most.
  const uint64_t max_vm_steps = 200 * uint64_t{bytes.size()} + 10'000'000;
  ASSIGN_OR_RETURN(Database db, Database::OpenImage(bytes, max_vm_steps));
  Importer importer(std::move(db), std::string(), names, sink, kernel_resources);
  return importer.Run(bytes.size());
}

}  // namespace inferscope::import
