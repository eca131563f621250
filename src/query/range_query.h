// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A time range of the store as one profile: what `inferscope report` prints and what the agent's
// HTTP API serves (/api/v1/profile). One code path so both always agree.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/analyze/cost.h"
#include "src/analyze/diagnose.h"
#include "src/base/status.h"
#include "src/report/report.h"
#include "src/store/sqlite_store.h"
#include "src/telemetry/telemetry_kind.h"

namespace inferscope::query {

// The most kernels a report lists per rank: `--top` (analyze, report) and the API's `top` accept
// 1..kMaxTop.
inline constexpr int kMaxTop = 100'000;

struct RangeQuery {
  int64_t from_ns = 0;                                  // window end > from
  int64_t to_ns = std::numeric_limits<int64_t>::max();  // window start < to; max = open-ended
  std::optional<uint32_t> pid;
  std::optional<int32_t> rank;
  std::optional<uint32_t> device;  // keep only this device of every process
  int64_t now_ns = 0;              // what "now" was: an open-ended range is reported up to it
  int top = 15;                    // top kernels per rank
  // Also the kernels view (analyze::AnalysisOptions::window_kernels_view; `report --views
  // kernels`): the top kernels with their launch configurations as a table.
  bool kernels_view = false;
  // Diagnosis thresholds (ParseThresholds; --diagnosis-thresholds); defaults when unset.
  analyze::DiagnosisThresholds thresholds;
  // GPU prices (--gpu-hourly-cost, --gpu-prices); no cost section without one.
  std::optional<double> gpu_hourly_usd;
  std::optional<analyze::GpuPriceTable> gpu_prices;
  // Read whole rollup-tier rows for the middle of the range (raw windows at its edges). Off = raw
  // windows only: the same answer (tested), slower.
  bool use_rollups = true;

  // The store's window filter for the same range, pid and rank.
  store::WindowQuery Windows() const { return {from_ns, to_ns, pid, rank}; }
};

struct RangeProfile {
  std::string source;              // "store:DIR"
  int64_t from_ns = 0, to_ns = 0;  // the range asked for (to = now when open-ended)
  bool open_ended = false;         // no --to: windows stamped after "now" count too
  analyze::Analysis analysis;      // one rank per (process, device), like a trace's
  size_t windows = 0;              // stored windows merged into it (directly or via rollups)
  size_t rows_read = 0;            // window and rollup rows decoded to answer it
  int64_t timeline_bin_ns = 0;     // the resolution the timelines were laid on (RangeBinNs)
  size_t processes = 0;
  uint64_t corrupt_windows = 0;  // stored windows that did not decode (skipped)
  // The host telemetry of the same range, merged per kind (TelemetryKinds()); a kind is absent
  // when nothing of it was collected. Typed access: telemetry.Get<GpuMetricsWindow>().
  telemetry::TelemetrySet telemetry;
  uint64_t telemetry_windows = 0;
  std::optional<analyze::Cost> cost;  // when a price was given
  uint64_t corrupt_telemetry = 0;     // records that did not parse (skipped)
};

// The timeline resolution of a range `span_ns` long: the finest of 1/10/100 ms, 1/10/60/600 s,
// 1 h, 1 d that keeps it within kMaxRangeBins bins, so a week is not 60,000 windows x 100 bins.
inline constexpr int64_t kMaxRangeBins = 3000;
int64_t RangeBinNs(int64_t span_ns);

// Which rollup rows answer [from_ns, to_ns) at resolution `bin_ns`: whole buckets of the coarsest
// tier inside the range, then finer tiers towards the ragged edges; raw windows starting outside
// [covered_from_ns, covered_to_ns) do the rest. Only buckets the tiers cover exactly (`coverage`)
// and tiers whose timeline bins nest in bin_ns are used, so the answer equals the raw merge.
struct RollupPlan {
  struct Segment {
    int64_t tier_ns = 0, from_ns = 0, to_ns = 0;  // bucket starts in [from, to)
  };
  std::vector<Segment> segments;
  int64_t covered_from_ns = 0, covered_to_ns = 0;  // empty when equal
};
RollupPlan PlanRollups(int64_t from_ns, int64_t to_ns, const store::RollupCoverage& coverage,
                       int64_t bin_ns);

// Streams the range's data to `visit` as whole rollup rows where the plan for resolution `bin_ns`
// allows and raw windows elsewhere (each stored window exactly once; `windows` says how many a row
// stands for). Memory does not grow with the range. `use_rollups` false: raw windows only.
base::Status ScanRange(store::SqliteStore& store, const store::WindowQuery& range, int64_t bin_ns,
                       bool use_rollups, const store::WindowVisitor& visit,
                       store::ScanStats* stats);

// Loads the windows of the range, merges them per process (a range reads like one long window)
// and analyzes them; the diagnosis uses the range's host telemetry too (HostSignalsOf). `source`
// names where they came from in the report ("store:DIR"). `windows == 0` when nothing matched (not
// an error: callers word that themselves).
base::StatusOr<RangeProfile> QueryRangeProfile(store::SqliteStore& store, const RangeQuery& query,
                                               const std::string& source);

// Whether the profile holds any GPU activity (a kernel, copy or memset) for the query's filters.
bool HasGpuActivity(const RangeProfile& profile);
// The filters set, for messages: "pid 1, rank 7, device 5"; "" without any.
std::string FilterText(const RangeQuery& query);
// No verdict without evidence: true when the range must not be reported on (`report` exits 3, the
// API answers 404) because no GPU activity matched: a pid/rank/device filter matched none, or the
// matched profile windows hold no kernel, copy or memset. A range with host telemetry only and no
// filter still reports (the telemetry is its evidence, and it says it has no profile windows).
bool NoGpuActivityMatched(const RangeQuery& query, const RangeProfile& profile);
// What the range does hold, ignoring the filters: one line per process ("pid 101, rank 1 on
// node-a: GPU 1, 2; 6 windows", at most 20, then a count), then the GPUs of the host telemetry.
// Empty when the range holds nothing.
base::StatusOr<std::vector<std::string>> DescribeRange(store::SqliteStore& store,
                                                       const RangeQuery& query);

// What the diagnosis can use from the range's telemetry: stage means and queue share (engine
// metrics, else spans), load gauges, and the busiest GPU's GPM means.
analyze::HostSignals HostSignalsOf(const RangeProfile& profile);

// The report of a range: what it covers (one `input:` line for the store with its process and
// window counts, the range in UTC and local time; "range" in JSON), the kernel profile, then one
// section per telemetry kind in registry order ("gpu_metrics", "engine" and "requests" in JSON;
// docs/report-schema.md) and the cost.
std::string RenderRangeReport(const RangeProfile& profile, report::ReportFormat format);

}  // namespace inferscope::query
