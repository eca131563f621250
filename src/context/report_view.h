// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The parts of a report JSON (docs/report-schema.md) that the context text and the MCP tools
// read, parsed once into plain structs. Ranks outside a host filter are dropped here and every
// total is summed from the ranks kept, so shares stay right after narrowing.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/analyze/compare.h"
#include "src/base/status.h"

namespace inferscope::context {

struct KernelRow {
  std::string name, display_name, category;
  int64_t total_ns = 0, count = 0;
};

struct RankView {
  int64_t rank = -1, pid = 0, device = 0;
  std::string hostname, device_name;
  int64_t span_ns = 0, busy_ns = 0, idle_ns = 0, compute_ns = 0;
  int64_t kernel_time_ns = 0, kernel_count = 0;
  std::vector<std::pair<std::string, int64_t>> categories;  // schema order, time_ns
  std::vector<std::pair<std::string, int64_t>> subcategories;
  std::vector<KernelRow> top_kernels;
  int64_t other_kernels_ns = 0, other_kernels_distinct = 0;
  std::vector<std::pair<std::string, int64_t>> idle_causes;  // cause, total_ns
  // The forward-phase split (report `phases`): per phase with steps, and the GPU time outside.
  struct Phase {
    std::string phase;
    int64_t steps = 0, step_total_ns = 0, gpu_time_ns = 0;
  };
  std::vector<Phase> phases;
  int64_t phase_outside_ns = 0;
  struct SyncWait {
    std::string type, waited_on;
    int64_t count = 0, total_ns = 0, max_ns = 0;
  };
  std::vector<SyncWait> sync_waits;
  std::vector<std::pair<std::string, int64_t>> data_quality;  // non-zero counters only
  int64_t timeline_bin_ns = 0, timeline_origin_ns = 0;
  std::vector<int64_t> timeline_busy_ns;
  std::vector<std::map<std::string, int64_t>> timeline_category_ns;
};

struct FindingView {
  std::string id, severity, summary;
  double confidence = 0, score = 0;
  int64_t rank = -1;
  std::vector<std::string> evidence;  // "busy_pct=45.9%"
  std::vector<std::string> fixes;
};

struct GpuView {
  int64_t index = 0;
  std::string name;
  std::vector<std::pair<std::string, std::string>> metrics;  // name -> "mean 33 (20..50) %"
  std::vector<std::string> throttle;                         // "sw_power_cap 50%"
  int64_t xid_count = 0;
};

struct StageView {
  std::string stage;
  int64_t count = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
};

// One process's NVTX / annotation range table (the report's `views.inputs[].processes[].ranges`,
// host ranges only: docs/report-schema.md, "views"): the listed names and the `other` row.
struct RangeTableView {
  struct Row {
    std::string name;  // "" for the other row
    int64_t count = 0, host_ns = 0, gpu_ops = 0, gpu_time_ns = 0;
  };
  int64_t pid = 0;
  int64_t instances = 0;  // ranges seen (all names)
  std::vector<Row> rows;  // by total host time, the report's top
  Row other;              // every other name as one row
  int64_t other_names = 0;
};

struct ReportView {
  std::string from_utc, to_utc;  // empty for traces
  bool open_ended = false;
  int64_t windows = 0;
  std::vector<std::string> inputs;  // trace paths (traces only)
  // The inputs were several jobs (a store range: several runs) and only one is profiled here:
  // the report's "jobs.warning", "" for one job.
  std::string job_warning;
  std::vector<RankView> ranks;  // after the host filter
  std::vector<std::string> all_hosts;
  std::vector<FindingView> findings;
  std::vector<GpuView> gpus;
  std::string gpu_unavailable;
  bool has_engine = false;
  std::string engine, backend;
  std::vector<std::string> models;
  std::vector<std::pair<std::string, double>> engine_derived;  // rates, percentiles (seconds)
  std::vector<std::pair<std::string, double>> engine_gauges;   // means
  bool has_requests = false;
  int64_t requests = 0, prompt_tokens = 0, completion_tokens = 0;
  std::vector<StageView> request_stages;
  std::vector<std::pair<std::string, int64_t>> request_models;
  std::vector<std::pair<std::string, int64_t>> span_drops;  // non-zero dropped_*/rejected counters
  // The processes' range tables that saw ranges (`run --nvtx` windows, trace views); empty when
  // the report has none. With a host filter, only processes of a kept rank (views name no host).
  std::vector<RangeTableView> range_tables;

  // Sums over the kept ranks.
  int64_t span_ns() const;  // longest rank span
  int64_t busy_ns() const { return Total(&RankView::busy_ns); }
  int64_t idle_ns() const { return Total(&RankView::idle_ns); }
  int64_t compute_ns() const { return Total(&RankView::compute_ns); }
  int64_t kernel_time_ns() const { return Total(&RankView::kernel_time_ns); }
  int64_t Total(int64_t RankView::*field) const;
  // Kernels merged by name across ranks, heaviest first; ties by name.
  std::vector<KernelRow> MergedKernels() const;
  // A per-key sum over ranks of one of the (key, ns) lists, heaviest first, zeros dropped.
  std::vector<std::pair<std::string, int64_t>> Sum(
      std::vector<std::pair<std::string, int64_t>> RankView::*list) const;
};

// Parses `json`. `host` non-empty keeps only that host's ranks (kNotFound naming the hosts there
// are when none matches); `engine` non-empty drops an engine section of another engine.
base::StatusOr<ReportView> ParseReport(std::string_view json, const std::string& host,
                                       const std::string& engine);

// The host range tables of a report's `views` object alone (ParseReport's range_tables, every
// process), for a reader that parses the rest itself (`diff` of saved reports). kDataLoss when
// `views_json` does not parse.
base::StatusOr<std::vector<RangeTableView>> ParseViewRangeTables(std::string_view views_json);

// Sums `tables` into `figures`: rows by name into `ranges`, the other rows into `range_tail`,
// `has_ranges` set when there is any. How `diff` and the MCP `compare` tool read a report's range
// tables for analyze::CompareRanges.
void AddRangeFigures(const std::vector<RangeTableView>& tables, analyze::ProfileFigures* figures);

// base::FormatDuration: "1.23 s", "45.6 ms", "789 us", "12 ns" (the one duration style).
std::string FormatNs(int64_t ns);
// `part` of `whole` in percent with one decimal ("12.3%"); "0.0%" when whole is 0.
std::string Share(int64_t part, int64_t whole);

}  // namespace inferscope::context
