// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/fleet/sink/schema.h"

namespace inferscope::fleet {
namespace {

// The columns every per-window fact table starts with: its key, then the dimensions users filter
// and group by. Repeated in each table (not joined) because ClickHouse joins are costly and
// columns of repeated values compress to almost nothing.
constexpr const char* kKeyAndDimensions =
    "date Date, window_start_ns Int64, window_end_ns Int64, host String, pid UInt32, "
    "process_start_ns Int64, rank Int32, world_size Int32, device UInt32, engine String, "
    "model String, gpu_model String, label_keys Array(String), label_values Array(String)";

// ReplacingMergeTree over the full row key: a retried insert (same rows, same keys) collapses to
// one row at the next merge, and readers that must be exact before merges add FINAL or group by
// the key (docs/fleet.md). Daily partitions: retention drops whole days (ALTER TABLE ... DROP
// PARTITION), the way a server without TTL expires data.
std::string FactTable(const char* name, const std::string& figures, const std::string& extra_key) {
  return std::string("CREATE TABLE IF NOT EXISTS {db}.") + name + " (" + kKeyAndDimensions + ", " +
         figures +
         ") ENGINE = ReplacingMergeTree() PARTITION BY date ORDER BY (host, window_start_ns, pid, "
         "process_start_ns, rank, device" +
         extra_key + ")";
}

}  // namespace

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> kMigrations = {
      {1,
       {
           "CREATE DATABASE IF NOT EXISTS {db}",
           "CREATE TABLE IF NOT EXISTS {db}.inferscope_schema (version UInt32, applied_ns Int64) "
           "ENGINE = TinyLog",
           FactTable(kWindowsTable,
                     "span_ns Int64, busy_ns Int64, idle_ns Int64, compute_ns Int64, "
                     "communication_ns Int64, communication_overlap_ns Int64, "
                     "exposed_communication_ns Int64, kernel_count UInt64, "
                     "idle_allocation_ns Int64, idle_sync_ns Int64, idle_launch_ns Int64, "
                     "idle_host_idle_ns Int64, idle_dependency_ns Int64, idle_queued_ns Int64, "
                     "idle_unattributed_ns Int64, idle_intervals UInt64, "
                     "sync_count UInt64, sync_wait_ns Int64, step_count UInt64, "
                     "step_total_ns Int64, step_max_ns Int64",
                     ""),
           FactTable(kCategoriesTable, "category String, kernel_count UInt64, time_ns Int64",
                     ", category"),
           FactTable(kKernelsTable,
                     "kernel String, category String, subcategory String, is_tail UInt8, "
                     "kernel_count UInt64, total_ns Int64, min_ns Int64, max_ns Int64, "
                     "distinct_names UInt64",
                     ", is_tail, kernel"),
           FactTable(kSyncsTable,
                     "sync_type String, sync_count UInt64, wait_ns Int64, max_ns Int64",
                     ", sync_type"),
           // Telemetry: each collector's window summary as the agent stores it (its JSON), per
           // host; the fleet reads pick fields out with visitParam/JSONExtract functions.
           "CREATE TABLE IF NOT EXISTS {db}.inferscope_telemetry (date Date, start_ns Int64, "
           "end_ns Int64, host String, kind String, engine String, model String, "
           "label_keys Array(String), label_values Array(String), json String) "
           "ENGINE = ReplacingMergeTree() PARTITION BY date ORDER BY (host, kind, start_ns)",
       }},
      // batch_id: the sink's insert that wrote the row. After an insert whose answer was lost,
      // the sink counts the rows of its batch_id before sending it again, so a retry never
      // duplicates and reads need no FINAL (docs/fleet.md, "Exactly once"). Not in the sorting
      // key: the ReplacingMergeTree still collapses a same-key row however it got there. 18.16
      // has no ADD COLUMN IF NOT EXISTS: "already exists" (Code 44) counts as done
      // (ClickHouseClient::EnsureSchema), so two agents migrating at once both succeed.
      {2,
       {
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN batch_id UInt64",
           "ALTER TABLE {db}.inferscope_window_categories ADD COLUMN batch_id UInt64",
           "ALTER TABLE {db}.inferscope_window_kernels ADD COLUMN batch_id UInt64",
           "ALTER TABLE {db}.inferscope_window_syncs ADD COLUMN batch_id UInt64",
           "ALTER TABLE {db}.inferscope_telemetry ADD COLUMN batch_id UInt64",
       }},
      // What the fleet's context and diff need to rebuild a range the way the local store
      // merges it (model/profile_merge.h): the window's first and last GPU activity (a range's
      // span runs from one to the other, gaps between windows are idle) and its idle gaps by
      // kind. Rows of older agents read 0 and the reads fall back to the summed window spans
      // (fleet_profile.h). One column a statement: "already exists" counts as done per statement.
      {3,
       {
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN first_start_ns Int64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN last_end_ns Int64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN gap_host_wait_count UInt64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN gap_host_wait_ns Int64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN gap_host_wait_max_ns Int64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN gap_kernel_wait_count UInt64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN gap_kernel_wait_ns Int64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN gap_kernel_wait_max_ns Int64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN gap_other_count UInt64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN gap_other_ns Int64 DEFAULT 0",
           "ALTER TABLE {db}.inferscope_windows ADD COLUMN gap_other_max_ns Int64 DEFAULT 0",
       }},
      // The forward-phase split (prefill vs decode, model::PhaseSplit) of each device window:
      // one row per phase with steps (prefill, decode, mixed, unknown) and one `outside` row for
      // the GPU time of steps not whole. The category times are two parallel arrays, not a row
      // per category, so a window adds a few rows, not dozens (the sink's insert cost,
      // docs/benchmarks.md); the reads ARRAY JOIN them (18.16's sumMap takes numeric keys only).
      // The NVTX range table of each process window (model::RangeTable, `run --nvtx`): a row per
      // kept name and a tail row (is_tail 1, name '') that also holds the table's tail_names and
      // late counts. Per process, not per device: `device` is 0 and `gpu_model` the process's
      // first GPU's. New tables: CREATE TABLE IF NOT EXISTS is the whole migration, batch_id
      // included.
      {4,
       {
           FactTable(kPhasesTable,
                     "phase String, steps UInt64, step_ns Int64, busy_ns Int64, ops UInt64, "
                     "categories Array(String), category_ns Array(Int64), batch_id UInt64",
                     ", phase"),
           FactTable(kRangesTable,
                     "name String, is_tail UInt8, instances UInt64, total_ns Int64, min_ns Int64, "
                     "max_ns Int64, gpu_ops UInt64, gpu_time_ns Int64, tail_names UInt64, "
                     "late UInt64, batch_id UInt64",
                     ", is_tail, name"),
       }},
      // The launch configurations of each top kernel row (model::KernelStats::configs, live
      // windows of format 1.5): three parallel arrays, a configuration's key (the ten fields of
      // model::LaunchConfig::key(): grid x y z, block x y z, registers per thread, static,
      // dynamic and total shared memory; -1 where not recorded), its launches and its time, and
      // how many configurations the window saw. Arrays on the kernel row, not a table of their
      // own: a row per configuration would repeat the key and dimension columns (the sink's
      // insert cost, docs/benchmarks.md). Rows of older agents, and the tail rows, read empty
      // arrays and 0. The reads ARRAY JOIN them and sum per configuration (fleet_profile.cc).
      {5,
       {
           "ALTER TABLE {db}.inferscope_window_kernels ADD COLUMN config_key Array(Array(Int32))",
           "ALTER TABLE {db}.inferscope_window_kernels ADD COLUMN config_count Array(UInt64)",
           "ALTER TABLE {db}.inferscope_window_kernels ADD COLUMN config_ns Array(Int64)",
           "ALTER TABLE {db}.inferscope_window_kernels ADD COLUMN distinct_configs UInt64 "
           "DEFAULT 0",
       }},
  };
  return kMigrations;
}

int LatestSchemaVersion() { return Migrations().back().version; }

std::string WithDatabase(const std::string& statement, const std::string& database) {
  std::string out;
  out.reserve(statement.size() + 16);
  for (size_t i = 0; i < statement.size(); ++i) {
    if (statement.compare(i, 4, "{db}") == 0) {
      out += database;
      i += 3;
    } else {
      out += statement[i];
    }
  }
  return out;
}

}  // namespace inferscope::fleet
