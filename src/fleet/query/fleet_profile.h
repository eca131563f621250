// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Range profiles rebuilt from the fleet's fact tables, for `inferscope context|diff --source
// clickhouse://...` (docs/fleet.md). ClickHouse sums the selection per (slice, host, process,
// rank, device) with GROUP BY: one row per device, per category, per kept kernel and per sync
// type travels, never one per window. The sums are folded into model::ProfileWindow the way the
// local store folds a range's windows (model/profile_merge.h), so the analysis, the context text
// and diff's comparison run unchanged on them and say what they say on the per-host stores.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/base/status.h"
#include "src/fleet/query/fleet_query.h"
#include "src/fleet/sink/clickhouse_client.h"
#include "src/model/profile.h"

namespace inferscope::fleet {

struct FleetProfileQuery {
  // from/to, hosts, labels and exact; group_by, rank_by and top are not used. Windows overlapping
  // [from, to) count (window end > from, window start < to), as in the local store's ranges.
  FleetQuery selection;
  std::optional<uint32_t> pid;
  std::optional<int32_t> rank;
  std::optional<uint32_t> device;
  // Kernels kept per device and slice, heaviest first (ties: more calls, then name); the others
  // fold into the device's tail, as model::MergeWindow's top_k does.
  int top_k = 50;
  // Ascending window starts: a window belongs to the slice of the last start <= its own. Empty:
  // one slice (the whole range).
  std::vector<int64_t> slice_starts;
  // One synthetic GPU per slice (host "", pid 0, rank -1) holding the sums over the selection's
  // GPUs, its span the sum of theirs: one row per slice, category, kept kernel and sync type
  // instead of per GPU, for diff's slices of a large fleet (its figures sum over ranks anyway).
  // The kernels kept are the heaviest top_k over the whole selection, which equals the local
  // per-rank lists' merge while no GPU has more than top_k names in a slice.
  bool collapse_devices = false;
  // Read the kept kernels' launch configurations (two more queries over the kernels table). diff
  // turns it off: its figures do not use them.
  bool launch_configs = true;
  // kLaunchConfigs and kUnlistedConfigs: only rows of these kernel names (empty: every name).
  // QueryFleetProfile sets it to the kept kernels' names, so the configurations of names that
  // fell into the tails do not travel.
  std::vector<std::string> config_kernels;
};

// The fact tables a profile is read from, one query each.
// kPhases: each phase's steps, step and busy time and ops; kPhaseCategories: its category times
// (the rows' parallel arrays, ARRAY JOINed); kRanges: the NVTX range names' sums per process.
enum class FleetFact {
  kDevices,
  kCategories,
  kKernels,
  kKernelTotals,
  kSyncs,
  kWindowCount,
  kPhases,
  kPhaseCategories,
  kRanges,
  // Schema 5: the top kernel rows' launch configurations (the rows' parallel arrays, ARRAY
  // JOINed), summed per kernel and configuration; and per kernel the configurations its windows
  // saw but did not list (distinct_configs beyond the listed ones).
  kLaunchConfigs,
  kUnlistedConfigs
};

struct FleetProfile {
  // Per slice: one window per process (host, pid, process start), its devices' sums; sorted by
  // host, rank, pid. A slice without rows is empty.
  std::vector<std::vector<model::ProfileWindow>> slices;
  uint64_t windows = 0;  // process windows read (distinct host, process, window start)
  uint64_t rows = 0;     // device rows ClickHouse summed
  size_t processes = 0;  // distinct (host, pid, process start)
  size_t devices = 0;    // distinct (host, pid, process start, device)
  std::vector<std::string> hosts;
  uint64_t unknown_names = 0;  // category or sync type names this build does not know (skipped)
  // Device rows written by an agent before schema 2 (no first/last activity): their span is the
  // sum of their window spans, so gaps between windows do not count as idle for them.
  uint64_t rows_without_bounds = 0;
  // No phases or ranges table (a database no agent of schema 4 has written to yet): the profile
  // has no forward-phase split or no NVTX range tables.
  bool no_phases_table = false;
  bool no_ranges_table = false;
  // The kernels table has no launch-configuration columns (a database no agent of schema 5 has
  // migrated yet): the top kernels have no configurations.
  bool no_launch_configs = false;
};

// A launch configuration's key as TabSeparated writes a config_key element (Array(Int32)):
// "[gx,gy,gz,bx,by,bz,regs,static,dynamic,shared]", model::LaunchConfig::key()'s ten fields, into
// `*c` (count and time untouched). False on anything else.
bool ParseLaunchConfigKey(const std::string& text, model::LaunchConfig* c);

// The SQL of one fact's query (public for tests).
std::string FleetProfileSql(const std::string& database, const FleetProfileQuery& query,
                            FleetFact fact);
// The distinct window starts of the selection, ascending, at most `limit` + 1 of them (more than
// `limit` returned: there are more).
std::string FleetWindowStartsSql(const std::string& database, const FleetProfileQuery& query,
                                 size_t limit);
base::StatusOr<std::vector<int64_t>> QueryWindowStarts(const ClickHouseClient& client,
                                                       const FleetProfileQuery& query,
                                                       size_t limit);

// Runs the queries and folds their rows. A selection without rows gives slices of no windows.
// A kept kernel's launch configurations are its rows' configurations summed per configuration
// (ClickHouse sums them) and folded with model::MergeLaunchConfigs, the store's window merge: the
// kMaxMergedLaunchConfigs most frequent listed (MoreFrequentConfig order), distinct_configs the
// configurations listed in any window plus those its windows saw but did not list. That is the
// store's merge whenever it is exact (at most kMaxMergedLaunchConfigs configurations over the
// range, every window listing all it saw); past that the fleet's counts stay exact where the
// store's rotating lists may lose launches of a configuration they dropped and met again.
// NVTX range tables (per process) are summed by name and cut to the top_k heaviest by host time
// with model::RangeTable::Trim, the rest in the tail: the store's merge while no process has more
// than top_k names in the range.
base::StatusOr<FleetProfile> QueryFleetProfile(const ClickHouseClient& client,
                                               const FleetProfileQuery& query);

// `report --source ... --views kernels`: the kernels view of the selection's GPUs taken as one
// (QueryFleetProfile with collapse_devices over windows overlapping [from, to)): the `top_k`
// heaviest kernels with their statistics and launch configurations summed over the selection's
// windows and hosts, the rest as the "other" row; the analysis of that one synthetic GPU with
// AnalysisOptions::window_kernels_view. `*no_launch_configs` (may be null): the database has no
// configuration columns yet (schema 4), so the rows list none.
base::StatusOr<analyze::Analysis> QueryFleetKernels(const ClickHouseClient& client,
                                                    const FleetQuery& selection, int top_k,
                                                    bool* no_launch_configs);

// The target named by `url` with the credentials of `credentials_path` (may be empty); the
// messages name the argument ("--source: ...", "--source-credentials: ...").
base::StatusOr<ClickHouseTarget> ResolveFleetSource(const std::string& url,
                                                    const std::string& credentials_path);

}  // namespace inferscope::fleet
