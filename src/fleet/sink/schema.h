// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The fleet schema in ClickHouse (docs/fleet.md): one fact table per figure family, keyed by
// (date, window start, host, process, rank, device), created and migrated by the sink. Plain
// types only, so that Debian's clickhouse-server 18.16 takes it (no TTL, codecs, LowCardinality).

#include <string>
#include <vector>

namespace inferscope::fleet {

inline constexpr const char* kWindowsTable = "inferscope_windows";
inline constexpr const char* kCategoriesTable = "inferscope_window_categories";
inline constexpr const char* kKernelsTable = "inferscope_window_kernels";
inline constexpr const char* kSyncsTable = "inferscope_window_syncs";
inline constexpr const char* kTelemetryTable = "inferscope_telemetry";
// Schema 4: the forward-phase split of each device window (model::PhaseSplit), a row per phase.
inline constexpr const char* kPhasesTable = "inferscope_window_phases";
// Schema 4: the NVTX range table of each process window (model::RangeTable, `run --nvtx`): a row
// per kept range name and one tail row.
inline constexpr const char* kRangesTable = "inferscope_window_ranges";
// The phase of the row that holds the GPU time of steps not whole (PhaseSplit::outside_*).
inline constexpr const char* kOutsidePhase = "outside";
inline constexpr const char* kSchemaTable = "inferscope_schema";

// One schema migration: the statements that take version - 1 to version. Every statement is
// idempotent (IF NOT EXISTS; ADD COLUMN's "already exists" is taken as done), so two agents
// migrating at once, or a migration retried after a lost answer, leave the same schema.
struct Migration {
  int version = 0;
  std::vector<std::string> statements;  // `{db}` stands for the database name
};

const std::vector<Migration>& Migrations();
int LatestSchemaVersion();
// `{db}` replaced by `database` (validated [A-Za-z0-9_]+ by ParseClickHouseUrl).
std::string WithDatabase(const std::string& statement, const std::string& database);

}  // namespace inferscope::fleet
