// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/status_command.h"

#include <errno.h>
#include <fmt/format.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>

#include "src/agent/http/agent_endpoints.h"
#include "src/agent/net/http_client.h"
#include "src/agent/store/sqlite_store.h"
#include "src/base/human_format.h"
#include "src/base/json_writer.h"
#include "src/base/state_dir.h"
#include "src/base/time_point.h"
#include "src/cli/cli_voice.h"
#include "src/cli/exit_codes.h"

namespace inferscope::cli {
namespace {

namespace dom = simdjson::dom;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kRecentNs = 300 * kSecond;  // "lately" = the last 5 minutes
constexpr const char* kRecentParam = "last=5m";
constexpr const char* kNotRunningReason = "the agent is not running";
constexpr const char* kOldAgentReason = "this agent does not report collectors (older version)";

// ---- JSON input ----------------------------------------------------------------------------

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

// ---- probing the agent ---------------------------------------------------------------------

// kill(pid, 0) succeeds, or fails with EPERM (it exists but belongs to another user).
bool PidAlive(int64_t pid) {
  if (pid <= 0 || pid > INT32_MAX) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// Connects to the ingest socket and hangs up at once (the agent treats a connection without a
// hello as nothing: no log line, no counter). Returns the peer's pid (SO_PEERCRED), 0 when the
// kernel does not say, nullopt when nobody answers.
std::optional<int64_t> ProbeSocket(const std::string& path) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) return std::nullopt;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  std::optional<int64_t> peer;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    peer = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;
  }
  ::close(fd);
  return peer;
}

// GET `url` + `suffix` with the timeout; the body of a 200 answer.
base::StatusOr<std::string> HttpGet(const std::string& url, const std::string& suffix,
                                    int timeout_ms) {
  ASSIGN_OR_RETURN(agent::net::HttpTarget target,
                   agent::net::ParseHttpUrl(url + suffix, "agent API URL"));
  agent::net::FetchOptions options;
  options.connect_timeout_ms = options.read_timeout_ms = timeout_ms;
  options.accept = "application/json";
  ASSIGN_OR_RETURN(agent::net::FetchResult result, agent::net::HttpGet(target, options));
  if (result.status != 200)
    return base::UnavailableError("GET " + url + suffix + ": HTTP " +
                                  std::to_string(result.status));
  if (result.truncated)
    return base::DataLossError("GET " + url + suffix + ": the answer is larger than " +
                               std::to_string(options.max_body_bytes) + " bytes");
  return std::move(result.body);
}

// Everything `status` learned, whichever way it learned it.
struct Gathered {
  std::string state_dir;
  bool running = false;
  std::optional<int64_t> pid;
  std::optional<agent::AgentEndpoints> endpoints;  // agent.json, when it names a live agent
  std::string socket_path;
  bool socket_answers = false;
  std::optional<AgentStatusResponse> agent;  // GET /api/v1/status answered
  std::string store_path;
  std::optional<agent::StoreSummary> store;
  bool processes_from_store = false;
  std::vector<StatusProcess> processes;
  std::vector<StatusDevice> devices;
  std::vector<std::string> notes;  // why something is missing; one line each
};

void ReadStore(const StatusOptions& options, int64_t now_ns, bool list_processes, Gathered* g) {
  g->store_path = options.state_dir + "/" + agent::SqliteStore::kFileName;
  auto store = agent::SqliteStore::Open(options.state_dir, agent::SqliteStore::Mode::kReadOnly);
  if (!store.ok()) {
    if (store.status().code() != base::StatusCode::kNotFound)
      g->notes.push_back(store.status().message());
    return;
  }
  auto summary = (*store)->Summary();
  if (!summary.ok()) {
    g->notes.push_back(summary.status().message());
    return;
  }
  g->store = *summary;
  if (!list_processes) return;
  agent::WindowQuery query;
  query.from_ns = now_ns - kRecentNs;
  auto processes = (*store)->ListProcesses(query, /*include_idle=*/true);
  if (!processes.ok()) {
    g->notes.push_back(processes.status().message());
    return;
  }
  g->processes_from_store = true;
  for (const agent::ProcessInfo& info : *processes) {
    const agent::StoredProcess& p = info.process;
    StatusProcess row;
    row.hostname = p.hello.hostname;
    row.pid = p.hello.pid;
    row.rank = p.hello.rank;
    row.windows = info.windows;
    row.first_seen_unix_ns = p.first_seen_ns;
    row.last_seen_unix_ns = p.last_seen_ns;
    row.ended_unix_ns = p.ended_ns;
    row.cupti_release = p.hello.cupti_release;
    row.cupti_path = p.hello.cupti_path;
    row.profiling_off = p.hello.profiling_off_reason;
    g->processes.push_back(std::move(row));
  }
}

Gathered Gather(const StatusOptions& options, int64_t now_ns) {
  Gathered g;
  g.state_dir = options.state_dir;
  g.socket_path = options.state_dir + "/agent.sock";
  auto endpoints = agent::ReadAgentEndpoints(options.state_dir);
  if (!endpoints.ok() && endpoints.status().code() != base::StatusCode::kNotFound)
    g.notes.push_back(endpoints.status().message() + " (ignored)");
  if (endpoints.ok() && !endpoints->socket.empty()) g.socket_path = endpoints->socket;

  const std::optional<int64_t> socket_peer = ProbeSocket(g.socket_path);
  g.socket_answers = socket_peer.has_value();

  if (endpoints.ok()) {
    const std::string file = options.state_dir + "/" + agent::kAgentEndpointsFile;
    if (!PidAlive(endpoints->pid)) {
      g.notes.push_back(fmt::format(
          "{} names pid {}, which has exited: a stale file from an agent that did not stop "
          "cleanly",
          file, endpoints->pid));
    } else {
      auto body = HttpGet(endpoints->api, "/status", options.timeout_ms);
      base::StatusOr<AgentStatusResponse> status =
          body.ok() ? ParseAgentStatus(*body) : base::StatusOr<AgentStatusResponse>(body.status());
      if (status.ok() && status->pid != 0 && status->pid != endpoints->pid) {
        // The port now belongs to another agent (the default port falls back to a free one).
        g.notes.push_back(fmt::format("{} answers for pid {}, not for pid {} named in {}",
                                      endpoints->api, status->pid, endpoints->pid, file));
      } else if (status.ok()) {
        g.agent = std::move(*status);
        g.endpoints = *endpoints;
        g.pid = endpoints->pid;
      } else {
        g.notes.push_back(fmt::format("pid {} (from {}) is alive but its API does not answer: {}",
                                      endpoints->pid, file, status.status().message()));
        if (g.socket_answers) g.endpoints = *endpoints;
      }
    }
  }
  g.running = g.agent.has_value() || g.socket_answers;
  if (!g.pid && g.socket_answers && *socket_peer > 0) g.pid = *socket_peer;
  if (g.socket_answers && !g.agent && !endpoints.ok())
    g.notes.push_back(
        "the agent answers on its socket but has no HTTP API (started with --http-port -1?)");

  if (g.agent) {
    const std::string api = g.endpoints->api;
    auto processes = HttpGet(api, std::string("/processes?") + kRecentParam, options.timeout_ms);
    auto parsed = processes.ok() ? ParseProcesses(*processes)
                                 : base::StatusOr<std::vector<StatusProcess>>(processes.status());
    if (parsed.ok())
      g.processes = std::move(*parsed);
    else
      g.notes.push_back("processes: " + parsed.status().message());
    auto devices = HttpGet(api, std::string("/devices?") + kRecentParam, options.timeout_ms);
    auto parsed_devices = devices.ok()
                              ? ParseDevices(*devices)
                              : base::StatusOr<std::vector<StatusDevice>>(devices.status());
    if (parsed_devices.ok())
      g.devices = std::move(*parsed_devices);
    else
      g.notes.push_back("devices: " + parsed_devices.status().message());
  }
  // The store is read directly in every case: the API has no summary route, and when the agent
  // is down the store is all there is (WAL lets this read run beside the agent's writer).
  ReadStore(options, now_ns, /*list_processes=*/!g.agent, &g);
  return g;
}

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

std::string RenderJson(const Gathered& g, int64_t now_ns) {
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
  w.EndObject();
  if (g.agent) {
    w.Key("agent").BeginObject();
    w.Key("connected_processes").UInt(g.agent->connected_processes);
    w.Key("sessions").UInt(g.agent->sessions);
    w.Key("windows_received").UInt(g.agent->windows_received);
    w.Key("windows_stored").UInt(g.agent->windows_stored);
    w.Key("dropped_connections").UInt(g.agent->dropped_connections);
    w.Key("store_errors").UInt(g.agent->store_errors);
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
  w.Key("notes").BeginArray();
  for (const std::string& note : g.notes) w.String(note);
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

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
    parts.push_back(fmt::format("{} spans received", *c.spans_received));
  if (!c.reason.empty()) parts.push_back(Printable(c.reason));
  std::string line;
  for (size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? "" : "; ") + parts[i];
  return line;
}

std::string RenderText(const Gathered& g, int64_t now_ns) {
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
  }
  if (!g.running)
    Field("Start it", "inferscope agent  (or `inferscope run -- CMD`, which starts one)", &out);
  if (g.agent) {
    Field("Since start",
          fmt::format("{} sessions ({} connected now), {} windows stored, {} dropped "
                      "connections, {} store errors",
                      g.agent->sessions, g.agent->connected_processes, g.agent->windows_stored,
                      g.agent->dropped_connections, g.agent->store_errors),
          &out);
  }
  if (g.store) {
    std::string store = fmt::format("{} windows from {} processes ({})", g.store->windows,
                                    g.store->processes, base::FormatBytes(g.store->payload_bytes));
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
                      Printable(p.hostname), profiling, std::to_string(p.windows),
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
                        Printable(d.hostname), std::to_string(d.device), std::to_string(d.windows),
                        std::to_string(d.kernels),
                        fmt::format("{:.1f} s", static_cast<double>(d.busy_ns) / kSecond)});
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

namespace {

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

int RunStatus(const StatusOptions& options, std::ostream& out, std::ostream& err) {
  return RunGuarded(
      [&] {
        const int64_t now_ns = options.now_unix_ns != 0 ? options.now_unix_ns : base::UnixNowNs();
        const Gathered g = Gather(options, now_ns);
        out << (options.json ? RenderJson(g, now_ns) : RenderText(g, now_ns));
        out.flush();
        if (!out) {
          err << "inferscope: error: cannot write the status\n";
          return kExitError;
        }
        return g.running ? kExitOk : kExitNotFound;
      },
      err);
}

StatusCommand::StatusCommand(CLI::App* app) {
  cmd_ = app->add_subcommand(
      "status", "Show whether the agent runs, its endpoints, what it sees and its collectors");
  cmd_->footer(
      "\nFinds the agent through <state-dir>/agent.json (pid and endpoint URLs) and asks its API\n"
      "(1 s timeout); also tries the ingest socket <state-dir>/agent.sock. Shows the endpoints,\n"
      "what the store holds, the processes and GPUs seen in the last 5 minutes, and the state\n"
      "of each collector (nvml, scrape, otlp: on, off or degraded, with the reason). When the\n"
      "agent is down it says how to start it and still shows the store.\n"
      "JSON keys are documented in docs/cli.md.\n\n"
      "Exit codes: 0 the agent runs, 1 error, 2 usage error, 3 the agent is not running.\n\n"
      "Examples:\n"
      "  inferscope status\n"
      "  inferscope status --format json | jq .endpoints.otlp_http\n");
  cmd_->add_option("--state-dir", state_dir_,
                   "Agent socket and store directory (default: $INFERSCOPE_STATE_DIR, else\n"
                   "$XDG_STATE_HOME/inferscope, else ~/.local/state/inferscope)")
      ->type_name("DIR");
  cmd_->add_option("-f,--format", format_, "Output format: text or json")
      ->capture_default_str()
      ->type_name("FORMAT")
      ->check(OneOf({"text", "json"}));
}

std::optional<int> StatusCommand::RunIfParsed() {
  if (!cmd_->parsed()) return std::nullopt;
  StatusOptions options;
  options.state_dir =
      state_dir_.empty()
          ? base::DefaultStateDir([](const char* n) -> const char* { return std::getenv(n); })
          : state_dir_;
  options.json = format_ == "json";
  return RunStatus(options, std::cout, std::cerr);
}

}  // namespace inferscope::cli
