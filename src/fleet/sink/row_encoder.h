// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Turns a stored window (one process, its devices) and telemetry records into ClickHouse rows,
// `INSERT ... FORMAT JSONEachRow` bodies, one per fact table (src/fleet/sink/schema.h).
// Deterministic: the same window always gives the same bytes, so a retried insert carries the
// same row keys and ReplacingMergeTree collapses it (docs/fleet.md).

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/fleet/sink/clickhouse_config.h"
#include "src/model/profile.h"
#include "src/store/sqlite_store.h"
#include "src/wire/framing.h"

namespace inferscope::fleet {

// The dimensions this agent stamps on every row: `host` (the `host` label, else the process's
// hostname), `engine` and `model` (labels of those names, else what the agent's engine scrape
// found, else empty), and all labels.
struct FleetIdentity {
  Labels labels;
  // From the latest engine telemetry record (`--metrics-url`): the engine kind ("vllm",
  // "sglang", ...; "unknown" is not kept) and its served model names joined by ",". One scrape
  // target per agent, so they stand for the host; a label of the same name wins.
  std::string scraped_engine, scraped_model;

  std::string LabelOr(std::string_view key, std::string_view fallback) const;
  std::string Engine() const { return LabelOr("engine", scraped_engine); }
  std::string Model() const { return LabelOr("model", scraped_model); }
  // Takes scraped_engine/scraped_model from an engine record's JSON
  // (telemetry::scrape::EngineMetricsWindow); a record that does not parse changes nothing.
  void LearnFromEngineRecord(std::string_view json);
};

// Rows waiting to be sent, one JSONEachRow body per table.
struct RowBatch {
  // Schema 4's last: the spool names tables, so the order only sets the inserts' order.
  enum Table { kWindows = 0, kCategories, kKernels, kSyncs, kTelemetry, kPhases, kRanges, kTables };
  std::array<std::string, kTables> body;
  std::array<uint64_t, kTables> rows{};

  uint64_t total_rows() const;
  size_t total_bytes() const;
  void Clear();
  static const char* TableName(int table);
};

// Appends the rows of `window` (every device of every process in it) to `out`.
void EncodeWindow(const FleetIdentity& identity, const wire::Hello& process,
                  const model::ProfileWindow& window, RowBatch* out);
// Appends one telemetry row.
void EncodeTelemetry(const FleetIdentity& identity, const std::string& hostname,
                     const store::TelemetryRecord& record, RowBatch* out);

// One INSERT of the sink: the rows of one table and one day (`date`, the partition), each carrying
// `batch_id`. On 18.16 such an insert writes exactly one part, and a part becomes visible
// atomically, so the insert is all or nothing: after a lost answer, any row of `batch_id` in
// (table, date) means all of them are there (docs/fleet.md, "Exactly once").
struct Insert {
  int table = 0;  // RowBatch::Table
  std::string date;
  uint64_t batch_id = 0;  // non-zero; 0 is what rows written before schema version 2 hold
  uint64_t rows = 0;
  std::string body;  // JSONEachRow, every row starting {"batch_id":N,
};

// Below ClickHouse's max_insert_block_size (1,048,576 rows, which cuts an insert into several
// blocks, so several parts): a larger (table, date) group is split into more inserts.
inline constexpr uint64_t kMaxRowsPerInsert = 100'000;

// Splits `batch` into inserts, one per table and day (at most kMaxRowsPerInsert rows each), in
// table order; `next_batch_id` names each one. Rows keep their order.
std::vector<Insert> SplitIntoInserts(const RowBatch& batch,
                                     const std::function<uint64_t()>& next_batch_id);

// "YYYY-MM-DD" of a Unix time in ns (UTC; ClickHouse's Date has no zone).
std::string UtcDate(int64_t unix_ns);

}  // namespace inferscope::fleet
