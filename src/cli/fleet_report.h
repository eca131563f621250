// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope report --source clickhouse://HOST:8123/DB`: the fleet view over what agents shipped
// with --sink (docs/fleet.md): per host (or model, engine, GPU model) figures computed by
// ClickHouse, worst first, and the outliers against the fleet median.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace inferscope::cli {

struct FleetReportOptions {
  std::string source;                 // clickhouse://...
  std::string credentials_path;       // --source-credentials
  int64_t last_ns = 300'000'000'000;  // unless from/to
  std::string from, to;
  std::vector<std::string> hosts, labels;
  std::string group_by = "host", rank_by = "idle";
  int top = 10;
  bool json = false;
  bool exact = false;  // --exact: FINAL (collapse not-yet-merged retried rows)
  // --views kernels: also the kernels view (statistics and launch configurations) of the
  // selection's GPUs taken as one, `kernels_top` kernels (agent/clickhouse/fleet_profile.h).
  bool kernels_view = false;
  int kernels_top = 20;
  int64_t now_unix_ns = 0;  // 0: the clock
};

// Exit codes: 0 ok, 2 usage (bad URL, label, group), 3 no windows in the range, 1 the server did
// not answer or refused the query, 4 the schema is newer than this build.
int RunFleetReport(const FleetReportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace inferscope::cli
