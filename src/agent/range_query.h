// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A time range of the store as one profile: what `inferscope report` prints and what the agent's
// HTTP API serves (/api/v1/profile). One code path so both always agree.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "src/agent/nvml/gpu_metrics_window.h"
#include "src/agent/otlp/span_window.h"
#include "src/agent/scrape/engine_window.h"
#include "src/agent/store/sqlite_store.h"
#include "src/analyze/analysis.h"
#include "src/analyze/cost.h"
#include "src/analyze/diagnose.h"
#include "src/base/status.h"
#include "src/report/report.h"

namespace inferscope::agent {

struct RangeQuery {
  int64_t from_ns = 0;                                  // window end > from
  int64_t to_ns = std::numeric_limits<int64_t>::max();  // window start < to; max = open-ended
  std::optional<uint32_t> pid;
  std::optional<int32_t> rank;
  std::optional<uint32_t> device;  // keep only this device of every process
  int top = 15;                    // top kernels per rank
  // Diagnosis thresholds (ParseThresholds; --diagnosis-thresholds); defaults when unset.
  analyze::DiagnosisThresholds thresholds;
  // GPU prices (--gpu-hourly-cost, --gpu-prices); no cost section without one.
  std::optional<double> gpu_hourly_usd;
  std::optional<analyze::GpuPriceTable> gpu_prices;

  // The store's window filter for the same range, pid and rank.
  WindowQuery Windows() const { return {from_ns, to_ns, pid, rank}; }
};

struct RangeProfile {
  analyze::Analysis analysis;  // one rank per (process, device), like a trace's
  size_t windows = 0;          // stored windows merged into it
  size_t processes = 0;
  uint64_t corrupt_windows = 0;  // stored windows that did not decode (skipped)
  // The host telemetry of the same range, merged; absent when nothing was collected.
  std::optional<GpuMetricsWindow> gpu;
  std::optional<scrape::EngineMetricsWindow> engine;
  std::optional<otlp::SpanWindow> spans;
  uint64_t telemetry_windows = 0;
  std::optional<analyze::Cost> cost;  // when a price was given
  uint64_t corrupt_telemetry = 0;     // records that did not parse (skipped)
};

// Loads the windows of the range, merges them per process (a range reads like one long window)
// and analyzes them; the diagnosis uses the range's host telemetry too (HostSignalsOf). `source`
// names where they came from in the report ("store:DIR"). `windows == 0` when nothing matched (not
// an error: callers word that themselves).
base::StatusOr<RangeProfile> QueryRangeProfile(SqliteStore& store, const RangeQuery& query,
                                               const std::string& source);

// What the diagnosis can use from the range's telemetry: stage means and queue share (engine
// metrics, else spans), load gauges, and the busiest GPU's GPM means.
analyze::HostSignals HostSignalsOf(const RangeProfile& profile);

// The report of a range: the kernel profile plus the telemetry sections ("gpu_metrics",
// "engine" and "requests" in JSON; docs/report-schema.md).
std::string RenderRangeReport(const RangeProfile& profile, report::ReportFormat format);

}  // namespace inferscope::agent
