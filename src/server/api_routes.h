// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The agent's JSON API on loopback (docs/agent.md, "HTTP API"): hosts, processes, devices and
// windows of a time range, and the merged profile of a range in the report's own formats.
// Every route reads the store through its own read-only connection, so requests never wait for
// the writer (WAL) and never touch the ingest path.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "src/server/http_server.h"
#include "src/server/metrics_exporter.h"
#include "src/store/window_sink.h"
#include "src/telemetry/registry/telemetry.h"

namespace inferscope::server {

// What the agent knows of itself, for /api/v1/status.
struct AgentSnapshot {
  int64_t pid = 0;
  int64_t started_unix_ns = 0;
  MetricsExporter::AgentCounters counters;  // the same counters /metrics shows
  bool has_telemetry = false;               // false: telemetry disabled, `collectors` says so
  telemetry::TelemetryStatus telemetry;
  std::optional<store::SinkStats> sink;  // the `--sink` (docs/fleet.md); nullopt: none
};

struct ApiContext {
  std::string state_dir;
  std::function<AgentSnapshot()> snapshot;  // called on a server thread
  std::function<int64_t()> now_unix_ns;     // the clock (tests pin it); default: real time
};

// Registers GET /api/v1, /api/v1/status, /api/v1/hosts, /api/v1/processes, /api/v1/devices,
// /api/v1/windows and /api/v1/profile. Range parameters everywhere: `from`/`to` (the forms of
// `inferscope report --from`), else `last` (a duration, default 5m, open-ended like --last);
// filters `pid`, `rank`, `device`.
void AddApiRoutes(HttpServer* server, ApiContext context);

}  // namespace inferscope::server
