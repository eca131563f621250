// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/status_parse.h"

#include <simdjson.h>

#include <utility>

namespace inferscope::cli {
namespace {

namespace dom = simdjson::dom;

template <typename T>
void Get(dom::element object, const char* key, T* out) {
  T value{};
  if (object[key].get(value) == simdjson::SUCCESS) *out = value;
}

void GetString(dom::element object, const char* key, std::string* out) {
  std::string_view value;
  if (object[key].get(value) == simdjson::SUCCESS) *out = std::string(value);
}

std::optional<std::string> GetOptionalString(dom::element object, const char* key) {
  std::string_view value;
  if (object[key].get(value) != simdjson::SUCCESS) return std::nullopt;
  return std::string(value);
}

// Parses `body` into `doc` (which borrows from `parser`); an error unless it is a JSON object.
base::Status ParseObject(std::string_view body, dom::parser& parser, dom::element* doc) {
  if (parser.parse(body.data(), body.size()).get(*doc) != simdjson::SUCCESS)
    return base::DataLossError("the agent's answer is not valid JSON");
  if (!doc->is_object()) return base::DataLossError("the agent's answer is not a JSON object");
  return base::OkStatus();
}

void ParseCollector(dom::element c, CollectorStatus* out) {
  GetString(c, "state", &out->state);
  GetString(c, "reason", &out->reason);
  dom::array devices;
  if (c["devices"].get(devices) == simdjson::SUCCESS) {
    for (dom::element d : devices) {
      CollectorStatus::Gpu gpu;
      Get(d, "index", &gpu.index);
      GetString(d, "name", &gpu.name);
      GetString(d, "uuid", &gpu.uuid);
      out->devices.push_back(std::move(gpu));
    }
  }
  out->url = GetOptionalString(c, "url");
  out->engine = GetOptionalString(c, "engine");
  uint64_t spans = 0;
  if (c["spans_received"].get(spans) == simdjson::SUCCESS) out->spans_received = spans;
}

// The objects of the array `key` of a JSON object body, each read by `fill`; a body that is not an
// object is an error, a missing array or a non-object element is skipped (an older agent).
template <typename Row, typename Fill>
base::StatusOr<std::vector<Row>> ParseRows(std::string_view body, const char* key, Fill fill) {
  dom::parser parser;
  dom::element doc;
  RETURN_IF_ERROR(ParseObject(body, parser, &doc));
  std::vector<Row> out;
  dom::array rows;
  if (doc[key].get(rows) != simdjson::SUCCESS) return out;
  for (dom::element e : rows) {
    if (!e.is_object()) continue;
    Row row;
    fill(e, &row);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

base::StatusOr<AgentStatusResponse> ParseAgentStatus(std::string_view body) {
  dom::parser parser;
  dom::element doc;
  RETURN_IF_ERROR(ParseObject(body, parser, &doc));
  AgentStatusResponse r;
  Get(doc, "pid", &r.pid);
  GetString(doc, "version", &r.version);
  Get(doc, "started_unix_ns", &r.started_unix_ns);
  Get(doc, "connected_processes", &r.connected_processes);
  Get(doc, "sessions", &r.sessions);
  Get(doc, "windows_received", &r.windows_received);
  Get(doc, "windows_stored", &r.windows_stored);
  Get(doc, "dropped_connections", &r.dropped_connections);
  Get(doc, "store_errors", &r.store_errors);
  Get(doc, "refused_connections", &r.refused_connections);
  Get(doc, "windows_rejected", &r.windows_rejected);
  dom::element sink;
  if (doc["sink"].get(sink) == simdjson::SUCCESS && sink.is_object()) {
    SinkStatus k;
    GetString(sink, "url", &k.url);
    GetString(sink, "last_error", &k.last_error);
    bool connected = false;
    if (sink["connected"].get(connected) == simdjson::SUCCESS) k.connected = connected;
    Get(sink, "rows_sent", &k.rows_sent);
    Get(sink, "failures", &k.failures);
    Get(sink, "queued_rows", &k.queued_rows);
    Get(sink, "spooled_rows", &k.spooled_rows);
    Get(sink, "spool_drained", &k.spool_drained);
    Get(sink, "dropped_rows", &k.dropped_rows);
    r.sink = std::move(k);
  }
  dom::object collectors;
  if (doc["collectors"].get(collectors) == simdjson::SUCCESS) {
    r.has_collectors = true;
    dom::element c;
    // A collector the agent leaves out is one it does not have: say so instead of "unknown".
    const std::pair<const char*, CollectorStatus*> kCollectors[] = {
        {"nvml", &r.nvml}, {"scrape", &r.scrape}, {"otlp", &r.otlp}};
    for (const auto& [key, out] : kCollectors) {
      if (collectors[key].get(c) == simdjson::SUCCESS) {
        ParseCollector(c, out);
      } else {
        out->state = "off";
        out->reason = "not part of this agent";
      }
    }
  }
  return r;
}

base::StatusOr<std::vector<StatusProcess>> ParseProcesses(std::string_view body) {
  return ParseRows<StatusProcess>(body, "processes", [](dom::element p, StatusProcess* row) {
    GetString(p, "hostname", &row->hostname);
    Get(p, "pid", &row->pid);
    Get(p, "rank", &row->rank);
    Get(p, "windows", &row->windows);
    Get(p, "first_seen_unix_ns", &row->first_seen_unix_ns);
    Get(p, "last_seen_unix_ns", &row->last_seen_unix_ns);
    Get(p, "ended_unix_ns", &row->ended_unix_ns);
    dom::element profiling;
    if (p["profiling"].get(profiling) == simdjson::SUCCESS) {
      GetString(profiling, "cupti_release", &row->cupti_release);
      GetString(profiling, "cupti_path", &row->cupti_path);
      GetString(profiling, "off_reason", &row->profiling_off);
    }
  });
}

std::string DescribeProfiling(const StatusProcess& p) {
  if (!p.profiling_off.empty()) return "off: " + p.profiling_off;
  if (p.cupti_release.empty()) return "on";
  return "on (CUPTI " + p.cupti_release + (p.cupti_path.empty() ? "" : ", " + p.cupti_path) + ")";
}

base::StatusOr<std::vector<StatusDevice>> ParseDevices(std::string_view body) {
  return ParseRows<StatusDevice>(body, "devices", [](dom::element d, StatusDevice* row) {
    GetString(d, "hostname", &row->hostname);
    Get(d, "pid", &row->pid);
    Get(d, "rank", &row->rank);
    Get(d, "device", &row->device);
    Get(d, "windows", &row->windows);
    Get(d, "kernels", &row->kernels);
    Get(d, "busy_ns", &row->busy_ns);
  });
}

}  // namespace inferscope::cli
