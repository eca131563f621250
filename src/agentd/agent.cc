// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agentd/agent.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <vector>

#include "src/agentd/watch_policy.h"
#include "src/base/access_token.h"
#include "src/base/decimal.h"
#include "src/base/duration.h"
#include "src/base/json_writer.h"
#include "src/base/state_dir.h"
#include "src/base/time_point.h"
#include "src/mcp/http_route.h"
#include "src/server/api_routes.h"
#include "src/server/ui/ui_routes.h"
#include "src/wire/framing.h"
#include "src/wire/window_codec.h"

namespace inferscope::agentd {
namespace {

using base::UnixNowNs;

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// How far past the agent's clock a window may start: the process reads the same clock, so only
// clock adjustments between the two reads separate them.
constexpr int64_t kMaxWindowLeadNs = 300'000'000'000;

// Bytes read from one connection per poll round, so one busy sender cannot starve the others.
constexpr size_t kMaxReadPerRound = 1u << 20;

std::string Describe(const wire::Hello& h) {
  std::string s = "pid " + std::to_string(h.pid);
  if (h.rank >= 0) s += " rank " + std::to_string(h.rank);
  if (h.world_size >= 0) s += "/" + std::to_string(h.world_size);
  if (!h.hostname.empty()) s += " on " + h.hostname;
  return s;
}

}  // namespace

struct Agent::Connection {
  int fd = -1;
  uint64_t session_id = 0;
  wire::FrameReader reader;
  bool has_hello = false;
  bool goodbye = false;
  wire::Hello hello;
  uint64_t windows = 0;
  std::string out;                     // agent -> process bytes not yet written (capture requests)
  IngestClock clock;                   // its deadlines (ingest_guard.h)
  std::vector<CaptureDevice> devices;  // its GPUs, as its latest window names them
};

// What the event loop hands to the writer thread, in arrival order.
struct Agent::WriteItem {
  enum class Kind { kHello, kWindow, kEnd, kTelemetry } kind = Kind::kWindow;
  std::vector<store::TelemetryRecord> telemetry;  // kTelemetry
  uint64_t session_id = 0;
  wire::Hello hello;            // kHello
  store::PendingWindow window;  // kWindow (process_id is resolved by the writer)
  // kWindow: the event loop's decoded copy, handed on so the store does not decode the window
  // again to fold it into the rollup tiers (~8 us of the writer's ~90 us per window). Kept only
  // while the queue is short (kKeepDecodedBelow): a burst or a backed-up queue holds the compact
  // encoding.
  std::shared_ptr<const model::ProfileWindow> decoded;
  bool goodbye = false;  // kEnd: the session ended with a goodbye
};

namespace {
// Queue length under which windows keep their decoded copy. Small on purpose: a decoded window is
// a few times its encoding (~20-60 KB), and with 64 processes sending at the same second a bound
// of 64 held ~3 MB at each burst that the allocator kept (live_load's RSS check caught it); 8
// covers a host's GPUs in steady state, a burst beyond it is decoded again by the writer.
constexpr size_t kKeepDecodedBelow = 8;
}  // namespace

Agent::Agent(AgentOptions options) : options_(std::move(options)) {
  if (!options_.log) {
    options_.log = [](std::string_view line) {
      std::fprintf(stderr, "inferscope agent: %.*s\n", static_cast<int>(line.size()), line.data());
    };
  }
}

Agent::~Agent() {
  if (started_ && !joined_) {
    Stop();
    (void)Wait();
  }
  if (stop_fd_ >= 0) ::close(stop_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void Agent::Log(const std::string& line) { options_.log(line); }

base::Status Agent::Start() {
  namespace fs = std::filesystem;
  if (started_) return base::InternalError("agent already started");
  const std::string& dir = options_.state_dir;
  if (dir.empty()) return base::InvalidArgumentError("agent: no state directory");
  RETURN_IF_ERROR(base::CreateStateDir(dir));  // refuses a directory others could change

  // One agent per state dir: the lock lives as long as the process (or this object) holds the fd,
  // so a crashed agent never leaves a stale lock behind.
  const std::string lock_path = dir + "/agent.lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd_ < 0)
    return base::UnavailableError(lock_path + ": cannot open lock file: " + std::strerror(errno));
  (void)::fchmod(lock_fd_, 0600);  // an older file may have another mode
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = {};
    const ssize_t n = ::pread(lock_fd_, pid, sizeof(pid) - 1, 0);
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK) {
      std::string owner = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
      while (!owner.empty() && (owner.back() == '\n' || owner.back() == ' ')) owner.pop_back();
      return base::AlreadyExistsError("an inferscope agent is already running for " + dir +
                                      (owner.empty() ? "" : " (pid " + owner + ")"));
    }
    return base::UnavailableError(lock_path + ": cannot lock: " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only informational (named in the "already running" message).
  }

  if (options_.http_port >= 0) {
    // The one secret of every HTTP route (docs/agent.md, "Access"), before anything listens.
    auto token = base::EnsureAccessToken(dir);
    if (!token.ok()) return token.status();
    if (!options_.metrics_token_file.empty()) {
      auto metrics = base::AccessTokenFile(options_.metrics_token_file).Current();
      if (!metrics.ok())
        return base::InvalidArgumentError("--metrics-token: " + metrics.status().message());
    }
  }

  ASSIGN_OR_RETURN(store_, store::SqliteStore::Open(dir, store::SqliteStore::Mode::kReadWrite));
  store_->set_rollups_enabled(options_.rollups);
  if (options_.make_sink) {
    ASSIGN_OR_RETURN(sink_, options_.make_sink(dir));
  }

  socket_path_ = dir + "/agent.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(addr.sun_path))
    return base::InvalidArgumentError(socket_path_ + ": socket path too long (max " +
                                      std::to_string(sizeof(addr.sun_path) - 1) +
                                      " bytes); use a shorter --state-dir");
  std::memcpy(addr.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  ::unlink(socket_path_.c_str());  // stale: we hold the lock, so no other agent owns it
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return base::UnavailableError("socket: " + std::string(std::strerror(errno)));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::chmod(socket_path_.c_str(), 0600) != 0 || ::listen(listen_fd_, 64) != 0)
    return base::UnavailableError(socket_path_ + ": cannot listen: " + std::strerror(errno));

  stop_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd_ < 0) return base::UnavailableError("eventfd: " + std::string(std::strerror(errno)));
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return base::UnavailableError("eventfd: " + std::string(std::strerror(errno)));
  captures_ = std::make_unique<CaptureManager>(dir + "/captures");

  started_unix_ns_ = UnixNowNs();
  for (int watched : options_.watch_pids) Watch(watched);
  if (options_.telemetry_enabled) {
    telemetry::TelemetryOptions t = options_.telemetry;
    if (options_.http_port < 0) t.otlp = false;  // no HTTP server to receive spans on
    if (!t.log) t.log = [this](const std::string& line) { Log(line); };
    telemetry_ = std::make_unique<telemetry::Telemetry>(t, [this](telemetry::TelemetryWindow&& w) {
      metrics_.OnTelemetry(w.gpu.get(), w.engine.get(), w.spans.get(), &w.others);
      WriteItem item;
      item.kind = WriteItem::Kind::kTelemetry;
      item.telemetry = std::move(w.records);
      Enqueue(std::move(item));
    });
    // A capture's NVML counter tracks, read on the event loop, which the telemetry outlives.
    captures_->SetGpuSamples(
        [this](int64_t from, int64_t to) { return telemetry_->GpuSamples(from, to); });
  }
  RETURN_IF_ERROR(StartHttp());
  if (telemetry_) {
    std::vector<int> roots;
    {
      std::lock_guard<std::mutex> lock(watch_mu_);
      roots = watched_;
    }
    telemetry_->SetRootPids(roots);
    telemetry_->Start();
  }

  started_ = true;
  writer_thread_ = std::thread([this] { WriterLoop(); });
  loop_thread_ = std::thread([this] { EventLoop(); });
  if (options_.verbose) Log("listening on " + socket_path_ + ", store " + store_->path());
  return base::OkStatus();
}

void Agent::Stop() {
  if (stop_fd_ < 0) return;
  const uint64_t one = 1;
  ssize_t unused = ::write(stop_fd_, &one, sizeof(one));
  (void)unused;
}

base::Status Agent::Wait() {
  if (!started_ || joined_) return writer_status_;
  loop_thread_.join();
  writer_thread_.join();
  joined_ = true;
  if (sink_) sink_->Stop();  // sends (or spools) what the writer handed it last
  if (http_) http_->Stop();
  if (!endpoints_path_.empty()) ::unlink(endpoints_path_.c_str());
  store_.reset();  // closes SQLite (checkpoints the WAL)
  if (lock_fd_ >= 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  std::lock_guard<std::mutex> lock(mu_);
  return writer_status_;
}

base::Status Agent::StartHttp() {
  if (options_.http_port < 0) return base::OkStatus();
  server::AccessOptions access;
  access.state_dir = options_.state_dir;
  access.bind_host = options_.http_host;
  access.metrics_token_file = options_.metrics_token_file;
  access_ = std::make_unique<server::AccessControl>(std::move(access));
  http_ = std::make_unique<server::HttpServer>();
  http_->SetGate(
      [this](const server::HttpRequest& req) { return access_->Check(req, req.local_port); });
  access_->AddLoginRoutes(http_.get());
  server::ApiContext api;
  api.state_dir = options_.state_dir;
  api.snapshot = [this] {
    server::AgentSnapshot s;
    s.pid = ::getpid();
    s.started_unix_ns = started_unix_ns_;
    s.counters = Counters();
    if (telemetry_) {
      s.has_telemetry = true;
      s.telemetry = telemetry_->status();
    }
    if (sink_) s.sink = sink_->stats();
    return s;
  };
  server::AddApiRoutes(http_.get(), std::move(api));
  mcp::AddMcpRoute(http_.get(), options_.state_dir);
  server::AddUiRoutes(http_.get());  // the dashboard, /ui/
  http_->Post("/api/v1/watch", [this](const server::HttpRequest& req) {
    const std::string* v = req.Param("pid");
    const std::optional<int> parsed = v == nullptr ? std::nullopt : ParsePid(*v);
    if (!parsed) return server::JsonError(400, "pid: want a process id (POST /api/v1/watch?pid=N)");
    const int pid = *parsed;
    if (const std::string why = WatchRefusal(pid, ::getpid(), ::geteuid()); !why.empty())
      return server::JsonError(403, "watch: " + why);
    Watch(pid);
    server::HttpResponse r;
    r.body = "{\"watching\": " + std::to_string(pid) + "}\n";
    return r;
  });
  AddCaptureRoutes();
  if (telemetry_ && telemetry_->spans() != nullptr) {
    telemetry::otlp::SpanCollector* spans = telemetry_->spans();
    http_->Post("/v1/traces", [spans](const server::HttpRequest& req) {
      const telemetry::otlp::OtlpHttpResult r = spans->HandleTraces(
          req.content_type, telemetry::otlp::EncodingLeftToDecode(req.content_encoding, req.body),
          req.body);
      server::HttpResponse out;
      out.status = r.status;
      out.content_type = r.content_type;
      out.body = r.body;
      // The OpenTelemetry SDKs export every 5 s on a kept-alive connection, and the listener
      // closes a connection that has sent no request for its request deadline: an export and
      // the close can cross, the SDK gets "socket hang up" and drops the batch. One connection
      // per export (every few seconds, on loopback) cannot race.
      out.close_connection = true;
      return out;
    });
  }
  http_->Get("/metrics", [this](const server::HttpRequest&) {
    server::HttpResponse r;
    r.content_type = server::MetricsExporter::kContentType;
    r.body = metrics_.Render(Counters());
    return r;
  });
  const bool default_port =
      !options_.http_port_chosen && options_.http_port == AgentOptions::kDefaultHttpPort;
  auto port = http_->Start(options_.http_host, options_.http_port, default_port);
  if (!port.ok()) {
    http_.reset();
    return base::UnavailableError("HTTP API: " + port.status().message() +
                                  "; choose another with --http-port, or --http-port -1 for none");
  }
  if (default_port && *port != options_.http_port)
    Log("port " + std::to_string(options_.http_port) + " is taken; HTTP API on port " +
        std::to_string(*port));

  // agent.json: how other commands (status, run, report) find this agent's endpoints.
  const std::string base = "http://" + options_.http_host + ":" + std::to_string(*port);
  base::JsonWriter w;
  w.BeginObject();
  w.Key("pid").Int(::getpid());
  w.Key("socket").String(socket_path_);
  // The telemetry window (`inferscope run` gives its processes the same): `report` says how long
  // until the first one when nothing is stored yet.
  w.Key("window_ns").Int(options_.telemetry.window_ns);
  w.Key("endpoints").BeginObject();
  w.Key("api").String(base + "/api/v1");
  w.Key("metrics").String(base + "/metrics");
  w.Key("otlp_http").String(base + "/v1/traces");
  w.Key("ui").String(base + "/ui/");
  w.EndObject();
  w.EndObject();
  endpoints_path_ = options_.state_dir + "/agent.json";
  // 0600 whatever the umask, replaced atomically (readers never see half a file).
  RETURN_IF_ERROR(base::WritePrivateFile(endpoints_path_, w.str() + "\n"));
  if (options_.verbose) Log("HTTP API on " + base + "/api/v1");
  return base::OkStatus();
}

void Agent::AddCaptureRoutes() {
  // POST /api/v1/capture?duration=2s[&pid=P|&rank=R][&max_bytes=N][&format=pftrace]: 202 with
  // the capture's status; 409 while one runs. GET ...?id=N (default: the latest) for its status,
  // GET /api/v1/capture/download?id=N for the trace once its state is "done".
  http_->Post("/api/v1/capture", [this](const server::HttpRequest& req) {
    CaptureSpec spec;
    if (const std::string* v = req.Param("duration")) {
      auto d = base::ParseDuration(*v);
      if (!d.ok()) return server::JsonError(400, "duration: " + d.status().message());
      spec.duration_ns = *d;
    }
    auto number = [&](const char* name, uint64_t* out) -> bool {
      const std::string* v = req.Param(name);
      if (v == nullptr) return true;
      const std::optional<uint64_t> n = base::ParseDecimal(*v);
      if (n) *out = *n;
      return n.has_value();
    };
    uint64_t pid = 0, rank = 0;
    if (!number("pid", &pid) || pid > UINT32_MAX)
      return server::JsonError(400, "pid: want a process id");
    if (!number("rank", &rank) || rank > INT32_MAX)
      return server::JsonError(400, "rank: want a rank");
    if (!number("max_bytes", &spec.max_bytes))
      return server::JsonError(400, "max_bytes: want a byte count");
    if (req.Param("pid")) spec.pid = static_cast<uint32_t>(pid);
    if (req.Param("rank")) spec.rank = static_cast<int32_t>(rank);
    if (const std::string* v = req.Param("format")) spec.format = *v;
    if (const std::string* v = req.Param("graph_nodes")) {
      if (*v != "0" && *v != "1") return server::JsonError(400, "graph_nodes: want 0 or 1");
      spec.graph_nodes = *v == "1";
    }
    auto id = captures_->Start(spec);
    if (!id.ok()) return server::JsonError(id.status());
    Wake();
    server::HttpResponse r;
    r.status = 202;
    auto status = captures_->StatusJson(*id);
    r.body = (status.ok() ? *status : std::string("{}")) + "\n";
    return r;
  });
  auto id_of = [](const server::HttpRequest& req, uint64_t* id) {
    const std::string* v = req.Param("id");
    if (v == nullptr) return true;
    const std::optional<uint64_t> n = base::ParseDecimal(*v);
    if (n) *id = *n;
    return n.has_value();
  };
  http_->Get("/api/v1/capture", [this, id_of](const server::HttpRequest& req) {
    uint64_t id = 0;
    if (!id_of(req, &id)) return server::JsonError(400, "id: want a capture id");
    auto status = captures_->StatusJson(id);
    if (!status.ok()) return server::JsonError(status.status());
    server::HttpResponse r;
    r.body = *status + "\n";
    return r;
  });
  http_->Get("/api/v1/capture/download", [this, id_of](const server::HttpRequest& req) {
    uint64_t id = 0;
    if (!id_of(req, &id)) return server::JsonError(400, "id: want a capture id");
    auto path = captures_->TracePath(id);
    if (!path.ok()) return server::JsonError(path.status());
    // Streamed from the file: a trace is several times the capture's chunk bytes, and holding it
    // whole was the agent's largest allocation of a capture.
    server::HttpResponse r;
    r.body_file = *path;
    r.content_type = "application/octet-stream";
    return r;
  });
}

server::MetricsExporter::AgentCounters Agent::Counters() const {
  const AgentStats st = stats();
  server::MetricsExporter::AgentCounters c;
  c.sessions = st.sessions;
  c.windows_received = st.windows_received;
  c.windows_stored = st.windows_stored;
  c.dropped_connections = st.dropped_connections;
  c.store_errors = st.store_errors;
  c.refused_connections = st.refused_connections;
  c.windows_rejected = st.windows_rejected;
  c.connected_processes = connected_.load();
  return c;
}

void Agent::Watch(int pid) {
  std::lock_guard<std::mutex> lock(watch_mu_);
  if (std::find(watched_.begin(), watched_.end(), pid) == watched_.end()) watched_.push_back(pid);
  roots_dirty_ = true;
}

bool Agent::AnyWatchedAlive() {
  std::lock_guard<std::mutex> lock(watch_mu_);
  // kill(pid, 0): the process exists (EPERM: it exists but is not ours). Gone ones are forgotten.
  std::erase_if(watched_, [](int pid) { return ::kill(pid, 0) != 0 && errno != EPERM; });
  return !watched_.empty();
}

AgentStats Agent::stats() const {
  AgentStats s;
  s.sessions = sessions_.load();
  s.windows_received = windows_received_.load();
  s.windows_stored = windows_stored_.load();
  s.dropped_connections = dropped_connections_.load();
  s.store_errors = store_errors_.load();
  s.refused_connections = refused_connections_.load();
  s.windows_rejected = windows_rejected_.load();
  return s;
}

bool Agent::QueueFull() {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() >= options_.max_queued_windows;
}

void Agent::Enqueue(WriteItem&& item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= kKeepDecodedBelow) item.decoded.reset();
    queue_.push_back(std::move(item));
  }
  queue_cv_.notify_one();
}

void Agent::EventLoop() {
  std::vector<std::unique_ptr<Connection>> conns;
  uint64_t next_session = 1;
  int64_t idle_since_ns = MonotonicNs();
  bool stop = false;
  std::vector<pollfd> fds;
  int64_t accept_resume_ns = 0;  // monotonic; the listening socket rests until then
  bool out_of_fds = false;
  auto close_conn = [&](size_t i, const char* how) {
    EndSession(conns[i].get(), how);
    captures_->OnGone(conns[i]->session_id);
    ::close(conns[i]->fd);
    conns.erase(conns.begin() + static_cast<std::ptrdiff_t>(i));
    if (std::none_of(conns.begin(), conns.end(), [](const auto& c) { return c->has_hello; }))
      idle_since_ns = MonotonicNs();
    roots_dirty_ = true;
  };
  while (!stop) {
    // A full writer queue pauses reading (senders buffer on their side) instead of dropping.
    const bool full = QueueFull();
    fds.clear();
    fds.push_back({stop_fd_, POLLIN, 0});
    // Out of file descriptors, the backlog stays readable and accept fails at once: the listening
    // socket rests for a moment instead of spinning the loop.
    const bool accepting = MonotonicNs() >= accept_resume_ns;
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    fds.push_back({wake_fd_, POLLIN, 0});
    for (const auto& c : conns)
      fds.push_back(
          {full ? -1 : c->fd, static_cast<short>(POLLIN | (c->out.empty() ? 0 : POLLOUT)), 0});
    // A capture being recorded is checked for its end every 100 ms.
    const int timeout_ms = full || !accepting ? 10 : captures_->Recording() ? 100 : 1000;
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      Log("poll failed: " + std::string(std::strerror(errno)) + "; stopping");
      break;
    }
    if (fds[0].revents & POLLIN) stop = true;
    if (!stop && (fds[1].revents & POLLIN) && !AcceptAll(&conns, &next_session)) {
      if (!out_of_fds) Log("out of file descriptors: new connections wait (retried every 100 ms)");
      out_of_fds = true;
      accept_resume_ns = MonotonicNs() + 100'000'000;
    } else if (accepting) {
      out_of_fds = false;
    }
    if (fds[2].revents & POLLIN) {
      uint64_t n = 0;
      ssize_t unused = ::read(wake_fd_, &n, sizeof(n));
      (void)unused;
    }
    // Connections accepted this round are not in `fds` yet; they are polled next round.
    constexpr size_t kFixedFds = 3;
    for (size_t i = fds.size() - kFixedFds; i-- > 0;) {
      const short revents = fds[i + kFixedFds].revents;
      if (revents == 0) continue;
      if ((revents & POLLOUT) && !FlushOut(conns[i].get())) {
        close_conn(i, "connection closed");
        continue;
      }
      if ((revents & ~POLLOUT) == 0) continue;
      if (!ReadConnection(conns[i].get(), kMaxReadPerRound))
        close_conn(i, conns[i]->goodbye ? "goodbye" : "connection closed");
    }
    EnforceIngestLimits(&conns, close_conn);
    if (captures_->HasPending()) DispatchCapture(conns);
    captures_->Poll(UnixNowNs());
    // Processes, not sockets: a connection counts once its hello arrived (until its goodbye), so
    // "connected" means what a capture can select (a process just accepted, or a client that
    // never says hello, is not one yet).
    connected_.store(
        static_cast<size_t>(std::count_if(
            conns.begin(), conns.end(), [](const auto& c) { return c->has_hello && !c->goodbye; })),
        std::memory_order_relaxed);
    if (roots_dirty_.exchange(false)) UpdateRootPids(conns);
    // Only processes keep the agent busy: a client that never says hello is not one.
    const bool any_process =
        std::any_of(conns.begin(), conns.end(), [](const auto& c) { return c->has_hello; });
    if (any_process || (options_.exit_when_idle_ns > 0 && AnyWatchedAlive()))
      idle_since_ns = MonotonicNs();
    if (options_.exit_when_idle_ns > 0 && !any_process &&
        MonotonicNs() - idle_since_ns >= options_.exit_when_idle_ns) {
      Log("no process connected for " + std::to_string(options_.exit_when_idle_ns / 1'000'000'000) +
          " s; exiting");
      stop = true;
    }
  }

  // Stop path: no new connections; take what the connections already sent (frames in the socket
  // buffers, including connections still in the listen backlog), then tell the writer that
  // nothing more will come.
  (void)AcceptAll(&conns, &next_session);
  ::close(listen_fd_);
  listen_fd_ = -1;
  ::unlink(socket_path_.c_str());
  while (!conns.empty()) {
    Connection* c = conns.back().get();
    const bool finished = !ReadConnection(c, SIZE_MAX);  // false: EOF seen or bad frame
    close_conn(conns.size() - 1,
               c->goodbye ? "goodbye" : (finished ? "connection closed" : "agent stopping"));
  }
  // The telemetry's last (partial) window goes to the writer before it is told to finish.
  if (telemetry_) telemetry_->Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    loop_done_ = true;
  }
  queue_cv_.notify_one();
}

void Agent::UpdateRootPids(const std::vector<std::unique_ptr<Connection>>& conns) {
  if (!telemetry_) return;
  std::vector<int> pids;
  {
    std::lock_guard<std::mutex> lock(watch_mu_);
    pids = watched_;
  }
  for (const auto& c : conns)
    if (c->has_hello) pids.push_back(static_cast<int>(c->hello.pid));
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  telemetry_->SetRootPids(std::move(pids));
}

bool Agent::ReadConnection(Connection* c, size_t max_bytes) {
  char buf[64 << 10];
  size_t total = 0, frames = 0;
  auto more_later = [&] {
    c->clock.OnRead(MonotonicNs(), c->reader.buffered_bytes(), frames);
    return true;
  };
  while (total < max_bytes) {
    const ssize_t n = ::recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return more_later();
    if (n <= 0) {
      if (c->reader.buffered_bytes() > 0)
        Log("session " + (c->has_hello ? Describe(c->hello) : "?") + ": connection closed " +
            "mid-frame; " + std::to_string(c->reader.buffered_bytes()) + " bytes dropped");
      return false;  // EOF or error
    }
    total += static_cast<size_t>(n);
    c->reader.Append(std::string_view(buf, static_cast<size_t>(n)));
    wire::Frame frame;
    while (c->reader.Next(&frame)) {
      ++frames;
      if (!HandleFrame(c, frame.type, std::move(frame.payload))) {
        ++dropped_connections_;
        return false;
      }
    }
    if (c->reader.failed()) {
      Log("dropping connection" + (c->has_hello ? " of " + Describe(c->hello) : std::string()) +
          ": " + c->reader.status().message());
      ++dropped_connections_;
      return false;
    }
  }
  return more_later();
}

bool Agent::AcceptAll(std::vector<std::unique_ptr<Connection>>* conns, uint64_t* next_session) {
  const uid_t self = ::geteuid();
  const int64_t now = MonotonicNs();
  // Counted and logged before the close: whoever sees the connection closed sees why.
  auto refuse = [&](int fd, const std::string& why) {
    ++refused_connections_;
    if (now - last_refusal_log_ns_ >= 10'000'000'000) {
      last_refusal_log_ns_ = now;
      Log("refused a connection: " + why + " (" + std::to_string(refused_connections_.load()) +
          " refused so far; logged once per 10 s)");
    }
    ::close(fd);
  };
  while (true) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM;
    }
    ucred peer{};
    socklen_t len = sizeof(peer);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
      refuse(fd, std::string("cannot read the peer's credentials: ") + std::strerror(errno));
      continue;
    }
    if (!PeerAllowed(peer.uid, self)) {
      refuse(fd, "pid " + std::to_string(peer.pid) + " runs as uid " + std::to_string(peer.uid) +
                     ", not this agent's user");
      continue;
    }
    if (conns->size() >= options_.ingest.max_connections) {
      refuse(fd, std::to_string(conns->size()) + " connections open, the most this agent takes");
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->session_id = (*next_session)++;
    c->clock.accepted_ns = now;
    conns->push_back(std::move(c));
  }
}

void Agent::EnforceIngestLimits(std::vector<std::unique_ptr<Connection>>* conns,
                                const std::function<void(size_t, const char*)>& close_conn) {
  const int64_t now = MonotonicNs();
  for (size_t i = conns->size(); i-- > 0;) {
    Connection* c = (*conns)[i].get();
    const std::string why = DeadlinePassed(c->clock, c->has_hello, now, options_.ingest);
    if (why.empty()) continue;
    Log("dropping connection" + (c->has_hello ? " of " + Describe(c->hello) : std::string()) +
        ": " + why);
    ++dropped_connections_;
    close_conn(i, "connection dropped");
  }
  std::vector<size_t> buffered;
  buffered.reserve(conns->size());
  for (const auto& c : *conns) buffered.push_back(c->reader.buffered_bytes());
  std::vector<size_t> drop = OverBudget(buffered, options_.ingest);
  std::sort(drop.rbegin(), drop.rend());  // erase from the back: the indexes stay valid
  for (size_t i : drop) {
    Connection* c = (*conns)[i].get();
    Log("dropping connection" + (c->has_hello ? " of " + Describe(c->hello) : std::string()) +
        ": its partial frame of " + std::to_string(buffered[i]) +
        " bytes is the largest while partial frames exceed " +
        std::to_string(options_.ingest.max_buffered_bytes >> 20) + " MiB");
    ++dropped_connections_;
    close_conn(i, "connection dropped");
  }
}

bool Agent::HandleFrame(Connection* c, uint16_t type, std::string&& payload) {
  const std::string who = c->has_hello ? " of " + Describe(c->hello) : std::string();
  switch (static_cast<wire::FrameType>(type)) {
    case wire::FrameType::kHello: {
      if (c->has_hello) {
        Log("dropping connection" + who + ": second hello");
        return false;
      }
      auto hello = wire::DecodeHello(payload);
      if (!hello.ok()) {
        Log("dropping connection: bad hello: " + hello.status().message());
        return false;
      }
      c->has_hello = true;
      c->hello = *hello;
      roots_dirty_ = true;
      ++sessions_;
      Log("session start: " + Describe(c->hello) +
          (c->hello.tool_version.empty() ? "" : " (inferscope " + c->hello.tool_version + ")"));
      WriteItem item;
      item.kind = WriteItem::Kind::kHello;
      item.session_id = c->session_id;
      item.hello = c->hello;
      Enqueue(std::move(item));
      return true;
    }
    case wire::FrameType::kWindow: {
      if (!c->has_hello) {
        Log("dropping connection: window before hello");
        return false;
      }
      auto window = wire::DecodeWindow(payload);
      if (!window.ok()) {
        Log("dropping connection" + who + ": bad window: " + window.status().message());
        return false;
      }
      // The process and the agent read the same clock, and a window is sent after it opens: one
      // that starts well after now is a bad clock or a bad sender, and stored it would stretch
      // every range that ends at the newest window (the default report) and seal the rollups up
      // to it. (Its end may lie ahead: a process's last, partial window keeps its nominal end.)
      if (const int64_t now = UnixNowNs();
          window->start_ns > now + kMaxWindowLeadNs || window->end_ns < window->start_ns) {
        ++windows_rejected_;
        if (now - last_rejection_log_ns_ >= 10'000'000'000) {
          last_rejection_log_ns_ = now;
          Log("window" + who + " refused: it spans " + std::to_string(window->start_ns) + ".." +
              std::to_string(window->end_ns) + " ns, the agent's clock is at " +
              std::to_string(now) + " (" + std::to_string(windows_rejected_.load()) +
              " refused so far; logged once per 10 s)");
        }
        return true;  // the connection stays: its other windows may be fine
      }
      ++c->windows;
      ++windows_received_;
      // The process's GPUs (a window names those it used), for a capture's GPU tracks and their
      // NVML counters.
      bool changed = false;
      for (const auto& p : window->processes) {
        for (const auto& d : p.devices) {
          if (d.device_uuid.empty()) continue;
          auto known = std::find_if(c->devices.begin(), c->devices.end(),
                                    [&](const CaptureDevice& k) { return k.device == d.device; });
          if (known != c->devices.end() && known->uuid == d.device_uuid) continue;
          if (known == c->devices.end()) {
            c->devices.push_back(CaptureDevice{d.device, "", ""});
            known = std::prev(c->devices.end());
          }
          known->name = d.device_name;
          known->uuid = d.device_uuid;
          changed = true;
        }
      }
      if (changed) captures_->OnDevices(c->session_id, c->devices);
      auto decoded = std::make_shared<const model::ProfileWindow>(std::move(*window));
      metrics_.OnWindow(c->hello, decoded);
      if (options_.verbose)
        Log("window from " + Describe(c->hello) + ": " + std::to_string(payload.size()) + " bytes");
      WriteItem item;
      item.kind = WriteItem::Kind::kWindow;
      item.session_id = c->session_id;
      item.window.start_ns = decoded->start_ns;
      item.window.end_ns = decoded->end_ns;
      item.window.received_ns = UnixNowNs();
      item.window.encoded = std::move(payload);
      item.decoded = std::move(decoded);
      Enqueue(std::move(item));
      return true;
    }
    case wire::FrameType::kGoodbye:
      c->goodbye = true;
      return true;
    case wire::FrameType::kCaptureChunk:
    case wire::FrameType::kCaptureEnd: {
      if (!c->has_hello) {
        Log("dropping connection: capture frame before hello");
        return false;
      }
      std::string error;
      if (!captures_->OnFrame(c->session_id, type, payload, &error)) {
        Log("dropping connection" + who + ": bad capture frame: " + error);
        return false;
      }
      return true;
    }
    case wire::FrameType::kCaptureRequest:
      return true;  // the agent's own kind: a process never sends it
  }
  return true;  // unknown frame types are for newer agents: ignore
}

void Agent::Wake() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  ssize_t unused = ::write(wake_fd_, &one, sizeof(one));
  (void)unused;
}

bool Agent::FlushOut(Connection* c) {
  while (!c->out.empty()) {
    const ssize_t n = ::send(c->fd, c->out.data(), c->out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      c->out.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
  return true;
}

void Agent::DispatchCapture(std::vector<std::unique_ptr<Connection>>& conns) {
  std::vector<CaptureTarget> targets;
  for (const auto& c : conns) {
    if (!c->has_hello || c->goodbye) continue;
    CaptureTarget t;
    t.session_id = c->session_id;
    t.pid = c->hello.pid;
    t.rank = c->hello.rank;
    t.world_size = c->hello.world_size;
    t.profiling = c->hello.profiling_off_reason.empty();
    t.devices = c->devices;
    targets.push_back(t);
  }
  std::vector<std::pair<uint64_t, std::string>> frames;
  captures_->Dispatch(targets, UnixNowNs(), &frames);
  for (auto& [session, frame] : frames) {
    for (auto& c : conns) {
      if (c->session_id != session) continue;
      // A request is ~40 bytes; a process that never reads (an older library) only fills its
      // socket buffer. Bounded anyway.
      if (c->out.size() < (64u << 10)) c->out += frame;
      (void)FlushOut(c.get());  // a failure shows as EOF on the next read
    }
  }
  Log("capture: asked " + std::to_string(frames.size()) + " process(es)");
}

void Agent::EndSession(Connection* c, const char* how) {
  if (!c->has_hello) return;
  metrics_.OnProcessEnd(c->hello);
  Log("session end: " + Describe(c->hello) + ": " + std::to_string(c->windows) + " windows (" +
      how + ")");
  WriteItem item;
  item.kind = WriteItem::Kind::kEnd;
  item.session_id = c->session_id;
  item.goodbye = c->goodbye;
  Enqueue(std::move(item));
}

void Agent::WriterLoop() {
  std::map<uint64_t, int64_t> process_of_session;
  std::map<uint64_t, wire::Hello> hello_of_session;  // for the sink (kept while the session lives)
  // Hands a committed item to the sink (encoding only: it never waits on the sink's server).
  auto to_sink = [&](const WriteItem& item) {
    if (!sink_) return;
    if (item.kind == WriteItem::Kind::kEnd) {
      // Here, not in apply: a batch applies its items before handing them over, and a session's
      // last windows often share a batch with its end.
      hello_of_session.erase(item.session_id);
      return;
    }
    if (item.kind == WriteItem::Kind::kTelemetry) {
      for (const store::TelemetryRecord& r : item.telemetry) sink_->OnTelemetry(r);
      return;
    }
    if (item.kind != WriteItem::Kind::kWindow) return;
    auto hello = hello_of_session.find(item.session_id);
    if (hello == hello_of_session.end()) return;
    if (item.decoded) {
      sink_->OnWindow(hello->second, *item.decoded);
    } else if (auto w = wire::DecodeWindow(item.window.encoded); w.ok()) {
      sink_->OnWindow(hello->second, *w);
    }
  };
  int64_t next_retention_ns = MonotonicNs();  // once at start, then every period
  uint64_t bytes_since_retention = 0;         // window bytes written since retention last ran
  auto apply = [&](const WriteItem& item) -> base::Status {
    switch (item.kind) {
      case WriteItem::Kind::kHello: {
        ASSIGN_OR_RETURN(int64_t id, store_->UpsertProcess(item.hello, UnixNowNs()));
        process_of_session[item.session_id] = id;
        if (sink_) hello_of_session[item.session_id] = item.hello;
        return base::OkStatus();
      }
      case WriteItem::Kind::kWindow: {
        auto it = process_of_session.find(item.session_id);
        if (it == process_of_session.end())
          return base::InternalError("window of a session whose hello was not stored");
        store::PendingWindow w = item.window;
        w.process_id = it->second;
        return store_->AppendWindow(w, item.decoded.get());
      }
      case WriteItem::Kind::kEnd: {
        auto it = process_of_session.find(item.session_id);
        if (it == process_of_session.end()) return base::OkStatus();
        const int64_t id = it->second;
        process_of_session.erase(it);
        return item.goodbye ? store_->MarkProcessEnded(id, UnixNowNs()) : base::OkStatus();
      }
      case WriteItem::Kind::kTelemetry: {
        for (const store::TelemetryRecord& r : item.telemetry)
          RETURN_IF_ERROR(store_->AppendTelemetry(r));
        return base::OkStatus();
      }
    }
    return base::OkStatus();
  };
  auto fail = [&](const base::Status& status) {
    ++store_errors_;
    Log("store error: " + status.message());
    std::lock_guard<std::mutex> lock(mu_);
    if (writer_status_.ok()) writer_status_ = status;
  };

  while (true) {
    std::vector<WriteItem> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      queue_cv_.wait_for(lock, std::chrono::seconds(1),
                         [&] { return !queue_.empty() || loop_done_; });
      if (queue_.empty() && loop_done_) break;
      while (!queue_.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    if (!batch.empty()) {
      // One transaction per batch; if it fails, the items are retried one by one so a single
      // bad item does not cost its neighbours.
      base::Status status = store_->Begin();
      for (size_t i = 0; status.ok() && i < batch.size(); ++i) status = apply(batch[i]);
      if (status.ok()) status = store_->Commit();
      uint64_t stored = 0;
      for (const WriteItem& item : batch) bytes_since_retention += item.window.encoded.size();
      if (status.ok()) {
        for (const WriteItem& item : batch) {
          stored += item.kind == WriteItem::Kind::kWindow;
          to_sink(item);
        }
      } else {
        (void)store_->Rollback();
        for (const WriteItem& item : batch) {
          const base::Status one = apply(item);
          if (!one.ok()) {
            fail(one);
            continue;
          }
          stored += item.kind == WriteItem::Kind::kWindow;
          to_sink(item);
        }
      }
      windows_stored_ += stored;
    }
    // The size cap holds on write too: a flood of windows runs retention as soon as it has
    // written a sixteenth of the cap, not at the next period (the store stays within 1/16 of it).
    const uint64_t early = std::max<uint64_t>(options_.max_store_bytes / 16, 1u << 20);
    if (MonotonicNs() >= next_retention_ns || bytes_since_retention >= early) {
      bytes_since_retention = 0;
      auto r = store_->ApplyRetention(options_.retention_ns, options_.max_store_bytes, UnixNowNs(),
                                      options_.rollup_retention);
      if (!r.ok()) {
        fail(r.status());
      } else if (r->deleted_windows > 0 && options_.verbose) {
        Log("retention: deleted " + std::to_string(r->deleted_windows) + " windows");
      }
      next_retention_ns = MonotonicNs() + options_.retention_period_ns;
    }
  }
}

}  // namespace inferscope::agentd
