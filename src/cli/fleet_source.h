// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope context --source clickhouse://HOST:8123/DB` (docs/fleet.md): the fleet in
// ClickHouse as an mcp::DataSource. A request's range, host and pid/rank/device filters and the
// source's labels select windows of the fact tables; ClickHouse sums them per device
// (agent/clickhouse/fleet_profile.h) and the sums go through the same analysis and report JSON
// as the local store's ranges, so the context text reads the same. The fleet view (worst groups,
// outliers against the fleet median) comes as context sections of its own.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/context/context.h"
#include "src/fleet/query/fleet_query.h"
#include "src/mcp/data_source.h"

namespace inferscope::cli {

struct FleetSourceOptions {
  std::string url;               // clickhouse://...
  std::string credentials_path;  // --source-credentials
  std::vector<std::string> labels;
  std::string group_by = "host", rank_by = "idle";
  bool exact = false;
  size_t top = 10;          // groups the fleet section lists
  int64_t now_unix_ns = 0;  // 0: the clock
};

class FleetSource : public mcp::DataSource {
 public:
  // kInvalidArgument naming the flag on a bad URL, credentials file, label, group or metric.
  static base::StatusOr<std::unique_ptr<FleetSource>> Create(const FleetSourceOptions& options);

  std::string Describe() const override;  // "clickhouse://127.0.0.1:8123/fleet"
  bool HasTimeRanges() const override { return true; }
  base::StatusOr<std::string> ProfileJson(const mcp::ProfileRequest& request) override;

  // The fleet view of the last ProfileJson's selection, as context sections: the worst groups
  // (at most `top`, with the fleet's totals and medians) and the outliers.
  base::StatusOr<std::vector<context::ExtraSection>> ContextSections() const override;

 private:
  FleetSource() = default;

  FleetSourceOptions options_;
  fleet::ClickHouseTarget target_;
  fleet::FleetQuery base_;  // labels, group, metric, exact
  fleet::FleetQuery last_;  // base_ with the last request's range and host
};

}  // namespace inferscope::cli
