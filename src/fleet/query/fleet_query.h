// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The fleet reads (`inferscope report --source clickhouse://...`, docs/fleet.md): per host (or
// model, engine, GPU model) figures of a time range, aggregated by ClickHouse (GROUP BY over the
// fact tables; only one row per group travels), ranked worst first, with the groups that differ
// from the fleet median.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/base/status.h"
#include "src/fleet/sink/clickhouse_client.h"
#include "src/model/profile.h"

namespace inferscope::fleet {

enum class GroupBy { kHost, kModel, kEngine, kGpuModel };
// "host", "model", "engine", "gpu_model"; false on anything else.
bool ParseGroupBy(std::string_view text, GroupBy* out);
const char* GroupByName(GroupBy g);

// What a fleet figure ranks by.
enum class FleetMetric { kIdle, kCommunication, kSync, kStep };
bool ParseFleetMetric(std::string_view text, FleetMetric* out);  // idle, communication, sync, step
const char* FleetMetricName(FleetMetric m);

struct FleetQuery {
  int64_t from_ns = 0, to_ns = 0;  // windows starting in [from, to)
  std::vector<std::string> hosts;  // empty: all
  Labels labels;                   // every one must match
  GroupBy group_by = GroupBy::kHost;
  FleetMetric rank_by = FleetMetric::kIdle;
  size_t top = 10;  // groups listed worst first (all groups count for the median)
  // FINAL: an audit read that collapses same-key rows at read time whatever wrote them (18.16
  // reads FINAL in one stream: several times slower, docs/benchmarks.md). The plain read is
  // already exact for rows of this sink: it counts a batch whose answer was lost before sending
  // it again (docs/fleet.md, "Exactly once").
  bool exact = false;
};

// One group's sums over its device windows.
struct FleetGroup {
  std::string key;
  uint64_t windows = 0;  // device windows
  uint64_t gpus = 0;     // distinct (host, process, device)
  int64_t span_ns = 0, busy_ns = 0, idle_ns = 0, exposed_communication_ns = 0, sync_wait_ns = 0;
  uint64_t step_count = 0, kernel_count = 0;
  int64_t step_total_ns = 0;
  // The forward-phase split of its GPUs' windows (schema 4's phases table), summed as the store's
  // range merge sums it (model::PhaseSplit::Merge); empty without steps.
  model::PhaseSplit phases;
  // The NVTX range tables of its processes' windows (`run --nvtx`; schema 4's ranges table),
  // summed by name over the group and cut to the top 20 by host time (model::RangeTable::Trim);
  // empty without ranges.
  model::RangeTable ranges;

  // Shares of the GPUs' active span (0 when there is none), and the mean step in ns.
  double Share(int64_t part_ns) const {
    return span_ns > 0 ? static_cast<double>(part_ns) / static_cast<double>(span_ns) : 0;
  }
  double Metric(FleetMetric m) const;
};

struct FleetOutlier {
  std::string key;
  FleetMetric metric;
  double value = 0, median = 0;
};

struct FleetView {
  std::vector<FleetGroup> groups;  // every group, worst first by the query's rank_by
  FleetGroup total;                // the whole selection (key "fleet")
  double median[4] = {};           // per FleetMetric, over the groups
  std::vector<FleetOutlier> outliers;
  // The database has no phases or ranges table yet (no agent of schema 4 wrote to it): none shown.
  bool no_phases_table = false;
  bool no_ranges_table = false;
};

// The WHERE clause of a selection (without the keyword). `overlap`: windows overlapping
// [from, to) (the profile reads, as the local store's ranges); else windows starting in it (the
// fleet view).
std::string FleetWhereSql(const FleetQuery& selection, bool overlap);
// The SQL the view runs (public for tests and the benchmark).
std::string FleetGroupsSql(const std::string& database, const FleetQuery& query);
// The groups' forward phases: per group and phase the steps, step and busy time and ops
// (`categories` false), or per group, phase and category the GPU time (true).
std::string FleetPhasesSql(const std::string& database, const FleetQuery& query, bool categories);
// The groups' NVTX ranges: per group and range name (the tail rows apart) the instances' sums.
std::string FleetRangesSql(const std::string& database, const FleetQuery& query);
base::StatusOr<FleetView> QueryFleet(const ClickHouseClient& client, const FleetQuery& query);

// Renders the view as text (worst `query.top` groups and the outliers) or JSON (everything).
// `kernels` (`report --source ... --views kernels`, QueryFleetKernels in fleet_profile.h): also
// its kernels view, the text's kernel statistics and launch configuration sections and the
// JSON's "views" key (docs/report-schema.md's `views`).
std::string RenderFleetText(const FleetView& view, const FleetQuery& query, const std::string& url,
                            const analyze::Analysis* kernels = nullptr);
std::string RenderFleetJson(const FleetView& view, const FleetQuery& query, const std::string& url,
                            const analyze::Analysis* kernels = nullptr);

// Folding one answer row of the schema-4 tables' grouped reads into the model, shared by the fleet
// view and the profile reads (fleet_profile.h); the row's fields start at `at`.
enum class RowFold { kFolded, kUnknownName, kBadNumber };
// (phase, steps, step_ns, busy_ns, ops) into `split` with model::PhaseSplit::Merge; the `outside`
// row gives the ops of steps not whole. A phase this build does not know is skipped.
RowFold FoldPhaseRow(const std::vector<std::string>& row, size_t at, model::PhaseSplit* split);
// (phase, category, ns): a phase's (or the outside work's) time in one category, the same way.
RowFold FoldPhaseCategoryRow(const std::vector<std::string>& row, size_t at,
                             model::PhaseSplit* split);
// (is_tail, name, instances, total_ns, min_ns, max_ns, gpu_ops, gpu_time_ns, tail_names, late):
// a named row is appended (the reads group by name, so each name comes once), the tail row folds
// in with model::RangeTable::Merge. The caller cuts the table (RangeTable::Trim) once all are in.
RowFold FoldRangeRow(const std::vector<std::string>& row, size_t at, model::RangeTable* table);

// ClickHouse's TabSeparated output (escapes \t \n \\ \' \0 \b \f \r): rows of fields. kDataLoss
// on a malformed escape or a row whose width differs from the first's.
base::StatusOr<std::vector<std::vector<std::string>>> ParseTabSeparated(std::string_view body);
// `s` as a single-quoted ClickHouse string literal.
std::string SqlQuote(std::string_view s);

}  // namespace inferscope::fleet
