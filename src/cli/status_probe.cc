// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/cli/status_probe.h"

#include <errno.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "src/base/time_point.h"
#include "src/net/http_client.h"

namespace inferscope::cli {
namespace {

constexpr int64_t kSecond = base::kNsPerSec;
constexpr int64_t kRecentNs = 300 * kSecond;  // "lately" = the last 5 minutes
constexpr const char* kRecentParam = "last=5m";

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
base::StatusOr<std::string> HttpGet(const net::AgentEndpoints& agent, const std::string& suffix,
                                    int timeout_ms) {
  const std::string& url = agent.api;
  ASSIGN_OR_RETURN(net::HttpTarget target, net::ParseHttpUrl(url + suffix, "agent API URL"));
  net::FetchOptions options;
  options.connect_timeout_ms = options.read_timeout_ms = timeout_ms;
  options.accept = "application/json";
  options.bearer_token = agent.access_token;
  ASSIGN_OR_RETURN(net::FetchResult result, net::HttpGet(target, options));
  if (result.status == 401)
    return base::UnavailableError(
        "GET " + url + suffix + ": HTTP 401, the agent refused the token" +
        (agent.access_token.empty() ? " (" + agent.access_token_error + ")"
                                    : std::string(" (is this agent another user's?)")));
  if (result.status != 200)
    return base::UnavailableError("GET " + url + suffix + ": HTTP " +
                                  std::to_string(result.status));
  if (result.truncated)
    return base::DataLossError("GET " + url + suffix + ": the answer is larger than " +
                               std::to_string(options.max_body_bytes) + " bytes");
  return std::move(result.body);
}

void ReadStore(const StatusOptions& options, int64_t now_ns, bool list_processes, Gathered* g) {
  g->store_path = options.state_dir + "/" + store::SqliteStore::kFileName;
  auto store = store::SqliteStore::Open(options.state_dir, store::SqliteStore::Mode::kReadOnly);
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
  store::WindowQuery query;
  query.from_ns = now_ns - kRecentNs;
  auto processes = (*store)->ListProcesses(query, /*include_idle=*/true);
  if (!processes.ok()) {
    g->notes.push_back(processes.status().message());
    return;
  }
  g->processes_from_store = true;
  for (const store::ProcessInfo& info : *processes) {
    const store::StoredProcess& p = info.process;
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

}  // namespace

Gathered Gather(const StatusOptions& options, int64_t now_ns) {
  Gathered g;
  g.state_dir = options.state_dir;
  g.socket_path = options.state_dir + "/agent.sock";
  auto endpoints = net::ReadAgentEndpoints(options.state_dir);
  if (!endpoints.ok() && endpoints.status().code() != base::StatusCode::kNotFound)
    g.notes.push_back(endpoints.status().message() + " (ignored)");
  if (endpoints.ok() && !endpoints->socket.empty()) g.socket_path = endpoints->socket;

  const std::optional<int64_t> socket_peer = ProbeSocket(g.socket_path);
  g.socket_answers = socket_peer.has_value();

  if (endpoints.ok()) {
    const std::string file = options.state_dir + "/" + net::kAgentEndpointsFile;
    if (!PidAlive(endpoints->pid)) {
      g.notes.push_back(fmt::format(
          "{} names pid {}, which has exited: a stale file from an agent that did not stop "
          "cleanly",
          file, endpoints->pid));
    } else {
      auto body = HttpGet(*endpoints, "/status", options.timeout_ms);
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
    const net::AgentEndpoints& api = *g.endpoints;
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

}  // namespace inferscope::cli
