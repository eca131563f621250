// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/status_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "src/base/human_format.h"
#include "src/base/json_writer.h"
#include "src/base/time_point.h"

namespace inferscope::cli {
namespace {

constexpr int64_t kSecond = base::kNsPerSec;
constexpr const char* kNotRunningReason = "the agent is not running";
constexpr const char* kOldAgentReason = "this agent does not report collectors (older version)";

// The collectors as shown: what the agent said, or why nothing is known.
CollectorStatus ShownCollector(const Gathered& g,
                               const CollectorStatus AgentStatusResponse::*which) {
  CollectorStatus c;
  if (!g.running) {
    c.state = "off";
    c.reason = kNotRunningReason;
  } else if (!g.agent) {
    c.reason = "the agent's API does not answer";
  } else if (!g.agent->has_collectors) {
    c.reason = kOldAgentReason;
  } else {
    c = (*g.agent).*which;
  }
  return c;
}

// ---- JSON output ---------------------------------------------------------------------------

void OptionalString(base::JsonWriter& w, const char* key, const std::optional<std::string>& v) {
  if (v)
    w.Key(key).String(*v);
  else
    w.Key(key).Null();
}

void WriteCollector(base::JsonWriter& w, const char* key, const CollectorStatus& c,
                    const char* kind) {
  w.Key(key).BeginObject();
  w.Key("state").String(c.state);
  OptionalString(w, "reason", c.reason.empty() ? std::nullopt : std::optional(c.reason));
  if (std::strcmp(kind, "nvml") == 0) {
    w.Key("devices").BeginArray();
    for (const CollectorStatus::Gpu& gpu : c.devices) {
      w.BeginObject();
      w.Key("index").Int(gpu.index);
      w.Key("name").String(gpu.name);
      w.Key("uuid").String(gpu.uuid);
      w.EndObject();
    }
    w.EndArray();
  } else if (std::strcmp(kind, "scrape") == 0) {
    OptionalString(w, "url", c.url);
    OptionalString(w, "engine", c.engine);
  } else {
    if (c.spans_received)
      w.Key("spans_received").UInt(*c.spans_received);
    else
      w.Key("spans_received").Null();
  }
  w.EndObject();
}

}  // namespace

std::string RenderStatusJson(const Gathered& g, int64_t now_ns) {
  base::JsonWriter w;
  w.BeginObject();
  w.Key("running").Bool(g.running);
  if (g.running && g.pid)
    w.Key("pid").Int(*g.pid);
  else
    w.Key("pid").Null();
  if (g.agent)
    w.Key("version").String(g.agent->version);
  else
    w.Key("version").Null();
  w.Key("state_dir").String(g.state_dir);
  if (g.agent && g.agent->started_unix_ns > 0) {
    w.Key("started_unix_ns").Int(g.agent->started_unix_ns);
    w.Key("uptime_ns").Int(std::max<int64_t>(0, now_ns - g.agent->started_unix_ns));
  } else {
    w.Key("started_unix_ns").Null();
    w.Key("uptime_ns").Null();
  }
  w.Key("socket").BeginObject();
  w.Key("path").String(g.socket_path);
  w.Key("answers").Bool(g.socket_answers);
  w.EndObject();
  w.Key("endpoints").BeginObject();
  const bool have_endpoints = g.running && g.endpoints;
  OptionalString(w, "api", have_endpoints ? std::optional(g.endpoints->api) : std::nullopt);
  OptionalString(w, "metrics", have_endpoints ? std::optional(g.endpoints->metrics) : std::nullopt);
  OptionalString(w, "otlp_http",
                 have_endpoints ? std::optional(g.endpoints->otlp_http) : std::nullopt);
  OptionalString(
      w, "ui",
      have_endpoints && !g.endpoints->ui.empty() ? std::optional(g.endpoints->ui) : std::nullopt);
  w.EndObject();
  if (g.agent) {
    w.Key("agent").BeginObject();
    w.Key("connected_processes").UInt(g.agent->connected_processes);
    w.Key("sessions").UInt(g.agent->sessions);
    w.Key("windows_received").UInt(g.agent->windows_received);
    w.Key("windows_stored").UInt(g.agent->windows_stored);
    w.Key("dropped_connections").UInt(g.agent->dropped_connections);
    w.Key("store_errors").UInt(g.agent->store_errors);
    w.Key("refused_connections").UInt(g.agent->refused_connections);
    w.Key("windows_rejected").UInt(g.agent->windows_rejected);
    w.EndObject();
  } else {
    w.Key("agent").Null();
  }
  if (g.store) {
    w.Key("store").BeginObject();
    w.Key("path").String(g.store_path);
    w.Key("windows").UInt(g.store->windows);
    w.Key("processes").UInt(g.store->processes);
    w.Key("payload_bytes").UInt(g.store->payload_bytes);
    w.Key("first_start_unix_ns").Int(g.store->first_start_ns);
    w.Key("last_end_unix_ns").Int(g.store->last_end_ns);
    w.EndObject();
  } else {
    w.Key("store").Null();
  }
  w.Key("processes").BeginArray();
  for (const StatusProcess& p : g.processes) {
    w.BeginObject();
    w.Key("hostname").String(p.hostname);
    w.Key("pid").UInt(p.pid);
    w.Key("rank").Int(p.rank);
    w.Key("windows").UInt(p.windows);
    w.Key("first_seen_unix_ns").Int(p.first_seen_unix_ns);
    w.Key("last_seen_unix_ns").Int(p.last_seen_unix_ns);
    if (p.ended_unix_ns > 0)
      w.Key("ended_unix_ns").Int(p.ended_unix_ns);
    else
      w.Key("ended_unix_ns").Null();
    w.Key("profiling").BeginObject();
    w.Key("on").Bool(p.profiling_off.empty());
    w.Key("cupti_release").String(p.cupti_release);
    w.Key("cupti_path").String(p.cupti_path);
    if (p.profiling_off.empty())
      w.Key("off_reason").Null();
    else
      w.Key("off_reason").String(p.profiling_off);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("devices").BeginArray();
  for (const StatusDevice& d : g.devices) {
    w.BeginObject();
    w.Key("hostname").String(d.hostname);
    w.Key("pid").UInt(d.pid);
    w.Key("rank").Int(d.rank);
    w.Key("device").UInt(d.device);
    w.Key("windows").UInt(d.windows);
    w.Key("kernels").UInt(d.kernels);
    w.Key("busy_ns").Int(d.busy_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("collectors").BeginObject();
  WriteCollector(w, "nvml", ShownCollector(g, &AgentStatusResponse::nvml), "nvml");
  WriteCollector(w, "scrape", ShownCollector(g, &AgentStatusResponse::scrape), "scrape");
  WriteCollector(w, "otlp", ShownCollector(g, &AgentStatusResponse::otlp), "otlp");
  w.EndObject();
  if (g.agent && g.agent->sink) {
    const SinkStatus& k = *g.agent->sink;
    w.Key("sink").BeginObject();
    w.Key("url").String(k.url);
    w.Key("connected").Bool(k.connected);
    w.Key("rows_sent").UInt(k.rows_sent);
    w.Key("failures").UInt(k.failures);
    w.Key("queued_rows").UInt(k.queued_rows);
    w.Key("spooled_rows").UInt(k.spooled_rows);
    w.Key("spool_drained").UInt(k.spool_drained);
    w.Key("dropped_rows").UInt(k.dropped_rows);
    w.Key("last_error").String(k.last_error);
    w.EndObject();
  } else {
    w.Key("sink").Null();
  }
  w.Key("notes").BeginArray();
  for (const std::string& note : g.notes) w.String(note);
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

namespace {

// ---- plain text output ---------------------------------------------------------------------

// Text from the agent or the store may hold anything; control characters would reach the
// terminal as escape sequences.
std::string Printable(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

std::string FormatSpan(int64_t ns) {
  const int64_t s = std::max<int64_t>(0, ns) / kSecond;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m {:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h {:02}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d {:02}h", s / 86400, s % 86400 / 3600);
}

constexpr size_t kWidth = 100;  // the status fits a 100-column terminal

// Appends `line`, wrapped at spaces to kWidth with continuation lines indented by `indent` (a word
// longer than the room left is broken): a GPU list or a path is never cut off.
void AppendWrapped(std::string line, size_t indent, std::string* out) {
  indent = std::min(indent, kWidth / 2);
  while (line.size() > kWidth) {
    size_t cut = line.rfind(' ', kWidth);
    if (cut == std::string::npos || cut <= indent) cut = kWidth;
    *out += line.substr(0, cut) + "\n";
    const size_t next = line.find_first_not_of(' ', cut);
    line = std::string(indent, ' ') + (next == std::string::npos ? "" : line.substr(next));
  }
  *out += line + "\n";
}

// Rows of cells, each column padded to its widest cell; indented by two spaces. A last cell too
// wide for the terminal wraps under itself.
void RenderTable(const std::vector<std::vector<std::string>>& rows, std::string* out) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line = " ";
    size_t last_start = 0;
    for (size_t i = 0; i < row.size(); ++i) {
      line += ' ';
      last_start = line.size();
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 1, ' ');
    }
    AppendWrapped(std::move(line), last_start, out);
  }
}

void Field(const char* label, const std::string& value, std::string* out) {
  AppendWrapped(fmt::format("{:<12}{}", label, value), 12, out);
}

std::string CollectorLine(const char* kind, const CollectorStatus& c) {
  std::vector<std::string> parts;
  if (std::strcmp(kind, "nvml") == 0 && !c.devices.empty()) {
    std::string gpus = fmt::format("{} GPU{}:", c.devices.size(), c.devices.size() == 1 ? "" : "s");
    for (size_t i = 0; i < c.devices.size(); ++i) {
      const CollectorStatus::Gpu& gpu = c.devices[i];
      gpus += fmt::format("{} {} {}", i == 0 ? "" : ",", gpu.index, Printable(gpu.name));
      if (!gpu.uuid.empty()) gpus += " (" + Printable(gpu.uuid) + ")";
    }
    parts.push_back(gpus);
  }
  if (std::strcmp(kind, "scrape") == 0 && c.url) {
    parts.push_back(Printable(*c.url) +
                    (c.engine && !c.engine->empty() ? " (" + Printable(*c.engine) + ")" : ""));
  }
  if (std::strcmp(kind, "otlp") == 0 && c.spans_received)
    parts.push_back(fmt::format("{} spans received", base::FormatCount(*c.spans_received)));
  if (!c.reason.empty()) parts.push_back(Printable(c.reason));
  std::string line;
  for (size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? "" : "; ") + parts[i];
  return line;
}

}  // namespace

std::string RenderStatusText(const Gathered& g, int64_t now_ns) {
  std::string out;
  if (g.running) {
    std::vector<std::string> facts;
    if (g.pid) facts.push_back(fmt::format("pid {}", *g.pid));
    if (g.agent && g.agent->started_unix_ns > 0)
      facts.push_back("up " + FormatSpan(now_ns - g.agent->started_unix_ns));
    if (g.agent && !g.agent->version.empty())
      facts.push_back("inferscope " + Printable(g.agent->version));
    std::string agent_line = "running";
    for (size_t i = 0; i < facts.size(); ++i) agent_line += (i == 0 ? " (" : ", ") + facts[i];
    if (!facts.empty()) agent_line += ")";
    Field("Agent", agent_line, &out);
  } else {
    Field("Agent", "not running", &out);
  }
  Field("State dir", g.state_dir, &out);
  Field("Socket", g.socket_path + (g.socket_answers ? " (answers)" : " (no answer)"), &out);
  if (g.running && g.endpoints) {
    Field("API", g.endpoints->api, &out);
    Field("Metrics", g.endpoints->metrics, &out);
    Field("OTLP/HTTP", g.endpoints->otlp_http, &out);
    if (!g.endpoints->ui.empty())
      Field("Dashboard", g.endpoints->ui + " (sign in: inferscope ui)", &out);
  }
  if (!g.running)
    Field("Start it", "inferscope agent  (or `inferscope run -- CMD`, which starts one)", &out);
  if (g.agent) {
    Field("Since start",
          fmt::format("{} sessions ({} connected now), {} windows stored, {} dropped "
                      "connections, {} store errors",
                      base::FormatCount(g.agent->sessions),
                      base::FormatCount(g.agent->connected_processes),
                      base::FormatCount(g.agent->windows_stored),
                      base::FormatCount(g.agent->dropped_connections),
                      base::FormatCount(g.agent->store_errors)) +
              (g.agent->refused_connections == 0
                   ? std::string()
                   : fmt::format(", {} refused connections",
                                 base::FormatCount(g.agent->refused_connections))) +
              (g.agent->windows_rejected == 0
                   ? std::string()
                   : fmt::format(", {} windows refused (future-dated)",
                                 base::FormatCount(g.agent->windows_rejected))),
          &out);
    if (g.agent->sink) {
      const SinkStatus& k = *g.agent->sink;
      std::string line = fmt::format(
          "{} ({}): {} rows sent, {} spooled now ({} drained), {} dropped, {} failures", k.url,
          k.connected ? "connected" : "not connected", base::FormatCount(k.rows_sent),
          base::FormatCount(k.spooled_rows), base::FormatCount(k.spool_drained),
          base::FormatCount(k.dropped_rows), base::FormatCount(k.failures));
      if (!k.last_error.empty()) line += "; last error: " + k.last_error;
      Field("Sink", line, &out);
    }
  }
  if (g.store) {
    std::string store = fmt::format(
        "{} windows from {} processes ({})", base::FormatCount(g.store->windows),
        base::FormatCount(g.store->processes), base::FormatBytes(g.store->payload_bytes));
    if (g.store->windows > 0)
      store += fmt::format(", {} to {}", base::FormatLocalTime(g.store->first_start_ns),
                           base::FormatLocalTime(g.store->last_end_ns));
    Field("Store", store, &out);
  } else {
    Field("Store", "none yet (" + g.store_path + " does not exist)", &out);
  }

  out += fmt::format("\nProcesses seen in the last 5 minutes{}: {}\n",
                     g.processes_from_store ? " (from the store)" : "", g.processes.size());
  if (!g.processes.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"PID", "RANK", "HOST", "PROFILING", "WINDOWS", "LAST SEEN"}};
    for (const StatusProcess& p : g.processes) {
      const std::string profiling = !p.profiling_off.empty() ? "off"
                                    : p.cupti_release.empty()
                                        ? "on"
                                        : "on, CUPTI " + Printable(p.cupti_release);
      rows.push_back({std::to_string(p.pid), p.rank < 0 ? "-" : std::to_string(p.rank),
                      Printable(p.hostname), profiling, base::FormatCount(p.windows),
                      FormatSpan(now_ns - p.last_seen_unix_ns) + " ago" +
                          (p.ended_unix_ns > 0 ? " (ended)" : "")});
    }
    RenderTable(rows, &out);
    // The whole line per process (library path, reason), which does not fit a table column.
    for (const StatusProcess& p : g.processes)
      if (!p.profiling_off.empty() || !p.cupti_path.empty())
        AppendWrapped(fmt::format("  pid {} profiling: {}", p.pid, Printable(DescribeProfiling(p))),
                      4, &out);
  }
  if (g.agent) {
    out += fmt::format("GPUs with work in the last 5 minutes: {}\n", g.devices.size());
    if (!g.devices.empty()) {
      std::vector<std::vector<std::string>> rows = {
          {"PID", "RANK", "HOST", "GPU", "WINDOWS", "KERNELS", "BUSY"}};
      for (const StatusDevice& d : g.devices) {
        rows.push_back({std::to_string(d.pid), d.rank < 0 ? "-" : std::to_string(d.rank),
                        Printable(d.hostname), std::to_string(d.device),
                        base::FormatCount(d.windows), base::FormatCount(d.kernels),
                        base::FormatDuration(d.busy_ns)});
      }
      RenderTable(rows, &out);
    }
  }

  out += "\nCollectors\n";
  std::vector<std::vector<std::string>> rows;
  const std::pair<const char*, CollectorStatus AgentStatusResponse::*> kCollectors[] = {
      {"nvml", &AgentStatusResponse::nvml},
      {"scrape", &AgentStatusResponse::scrape},
      {"otlp", &AgentStatusResponse::otlp}};
  for (const auto& [kind, member] : kCollectors) {
    const CollectorStatus c = ShownCollector(g, member);
    rows.push_back({kind, Printable(c.state), CollectorLine(kind, c)});
  }
  RenderTable(rows, &out);

  if (!g.notes.empty()) {
    out += "\nNotes\n";
    for (const std::string& note : g.notes) AppendWrapped("  - " + Printable(note), 4, &out);
  }
  return out;
}

}  // namespace inferscope::cli
