// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// `inferscope status`, parsing: the agent's JSON answers (GET /api/v1/status, /processes,
// /devices) as plain structs. Fields they do not know are ignored, missing ones keep defaults.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace inferscope::cli {

// One collector as GET /api/v1/status reports it ("collectors" object). An agent too old to
// report collectors, or one that is not running, gives state "unknown" / "off" with a reason.
struct CollectorStatus {
  std::string state = "unknown";  // "on", "off", "degraded" (from the agent) or "unknown"
  std::string reason;             // empty when the agent gave none
  struct Gpu {
    int64_t index = 0;
    std::string name, uuid;
  };
  std::vector<Gpu> devices;                // nvml
  std::optional<std::string> url, engine;  // scrape
  std::optional<uint64_t> spans_received;  // otlp
};

// The agent's `--sink` as GET /api/v1/status reports it ("sink" object; docs/fleet.md).
struct SinkStatus {
  std::string url, last_error;
  bool connected = false;
  uint64_t rows_sent = 0, failures = 0, queued_rows = 0, spooled_rows = 0, spool_drained = 0,
           dropped_rows = 0;
};

// The agent's answer to GET /api/v1/status: its own fields plus the collectors.
struct AgentStatusResponse {
  int64_t pid = 0;
  std::string version;
  int64_t started_unix_ns = 0;
  uint64_t connected_processes = 0, sessions = 0, windows_received = 0, windows_stored = 0,
           dropped_connections = 0, store_errors = 0, refused_connections = 0, windows_rejected = 0;
  bool has_collectors = false;  // false: an agent from before collectors existed
  CollectorStatus nvml, scrape, otlp;
  std::optional<SinkStatus> sink;  // nullopt: no --sink (or an agent from before sinks)
};

// A process the agent saw (GET /api/v1/processes, or the store when the agent is down).
struct StatusProcess {
  std::string hostname;
  uint64_t pid = 0;
  int64_t rank = -1;
  uint64_t windows = 0;
  int64_t first_seen_unix_ns = 0, last_seen_unix_ns = 0;
  int64_t ended_unix_ns = 0;  // 0: no goodbye (running, or lost)
  // The injection library's CUPTI (from its hello): release and path, or why profiling is off.
  std::string cupti_release, cupti_path, profiling_off;
};

// "on (CUPTI 12.4, /path/libcupti.so.12)", "off: <reason>", or "on" for a library too old to say.
std::string DescribeProfiling(const StatusProcess& p);

// A (process, GPU) pair with work in the range (GET /api/v1/devices).
struct StatusDevice {
  std::string hostname;
  uint64_t pid = 0;
  int64_t rank = -1;
  uint64_t device = 0, windows = 0, kernels = 0;
  int64_t busy_ns = 0;
};

// Parsers of the agent's JSON answers. Fields they do not know are ignored and missing ones keep
// their defaults (agents of other versions); only a body that is not a JSON object is an error.
base::StatusOr<AgentStatusResponse> ParseAgentStatus(std::string_view body);
base::StatusOr<std::vector<StatusProcess>> ParseProcesses(std::string_view body);
base::StatusOr<std::vector<StatusDevice>> ParseDevices(std::string_view body);

}  // namespace inferscope::cli
