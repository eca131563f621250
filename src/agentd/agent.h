// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The host agent: listens on <state dir>/agent.sock for injected processes (hello, window*,
// goodbye; src/wire), validates their windows and stores them in <state dir>/inferscope.db.
// docs/agent.md describes the threads, the stop path and the guarantees.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "src/agentd/capture.h"
#include "src/agentd/ingest_guard.h"
#include "src/base/status.h"
#include "src/server/access.h"
#include "src/server/http_server.h"
#include "src/server/metrics_exporter.h"
#include "src/store/sqlite_store.h"
#include "src/store/window_sink.h"
#include "src/telemetry/registry/telemetry.h"

namespace inferscope::agentd {

struct AgentOptions {
  std::string state_dir;
  int64_t retention_ns = 7LL * 86400 * 1'000'000'000;  // windows older than this are deleted
  uint64_t max_store_bytes = 1ull << 30;               // stored window bytes beyond this: oldest go
  int64_t retention_period_ns = 600'000'000'000;       // how often retention runs (also at start)
  store::RollupRetention rollup_retention;  // per rollup tier (1 min, 10 min, 1 h); >= retention_ns
  // > 0: stop once no process has been connected, and no watched pid has been alive, for this
  // long (since the last disconnect or watched exit, or since start when none ever connected).
  // `inferscope run` starts its agent this way, watching its own pid (which becomes the command).
  int64_t exit_when_idle_ns = 0;
  std::vector<int> watch_pids;  // more can be added at run time (POST /api/v1/watch?pid=N)
  // The HTTP API (JSON API, later /metrics and OTLP) on loopback. -1 = off; 0 = any free port.
  // The default port falls back to a free one when taken (a second agent with another state
  // dir); an explicitly chosen port that is taken is an error. agent.json in the state dir names
  // the bound endpoints.
  // Host telemetry (GPU metrics, engine metrics, request spans), off when !telemetry_enabled.
  bool telemetry_enabled = true;
  telemetry::TelemetryOptions telemetry;
  std::string http_host = "127.0.0.1";
  int http_port = kDefaultHttpPort;
  // Non-empty: /metrics needs this file's token too (`--metrics-token`); every other route always
  // needs the agent's own (<state dir>/agent.token, docs/agent.md "Access").
  std::string metrics_token_file;
  static constexpr int kDefaultHttpPort = 9470;
  // Fold stored windows into the rollup tiers (off only to measure what they cost:
  // store_query_benchmark --through-agent --no-rollups).
  bool rollups = true;
  // The user chose http_port (--http-port given): a taken port is an error, 9470 included.
  bool http_port_chosen = false;
  size_t max_queued_windows = 4096;  // writer queue bound; beyond it the agent stops reading
  IngestLimits ingest;               // what the ingest socket admits (ingest_guard.h)
  size_t max_batch = 256;            // windows per SQLite transaction
  bool verbose = false;
  // Makes the sink every stored window and telemetry record is also handed to (`--sink`,
  // docs/fleet.md), called by Start once the store is open (the sink may keep a spool in it);
  // empty: no sink.
  std::function<base::StatusOr<std::unique_ptr<store::WindowSink>>(const std::string& state_dir)>
      make_sink;
  // One line per session start/end and per problem; default: stderr with an "inferscope agent: "
  // prefix. Called from the agent's threads.
  std::function<void(std::string_view)> log;
};

struct AgentStats {
  uint64_t sessions = 0;             // connections that sent a valid hello
  uint64_t windows_received = 0;     // valid window frames
  uint64_t windows_stored = 0;       // committed to SQLite
  uint64_t dropped_connections = 0;  // bad frames, bad windows, deadlines, the partial-frame budget
  uint64_t refused_connections = 0;  // another user's peer, or beyond the connection cap
  uint64_t windows_rejected = 0;     // valid windows starting in the future (a bad clock)
  uint64_t store_errors = 0;
};

// One event-loop thread (poll over the listening socket, the connections and a stop eventfd) and
// one SQLite writer thread fed through a bounded queue. Guarantees: a window whose frame arrived
// whole before Stop() is committed before Wait() returns; a partial or corrupt frame costs only its
// own connection; one agent per state dir (flock on agent.lock).
class Agent {
 public:
  explicit Agent(AgentOptions options);
  ~Agent();  // stops and waits
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Takes the lock, opens the store, binds the socket and starts the threads. kUnavailable with
  // "already running" when another agent holds the state dir.
  base::Status Start();
  // Asks the agent to stop: stop accepting, read what the connections already sent, flush the
  // writer queue, close. Async-signal-safe (one write(2) to an eventfd); callable from any thread.
  void Stop();
  // Blocks until both threads have exited (after Stop() or the idle timeout). Returns the first
  // store error, if any.
  base::Status Wait();

  AgentStats stats() const;
  const std::string& socket_path() const { return socket_path_; }
  // The bound HTTP port (-1 when HTTP is off); valid after Start.
  int http_port() const { return http_ ? http_->port() : -1; }
  // Keeps the agent alive while `pid` runs (see AgentOptions::exit_when_idle_ns). Thread-safe.
  void Watch(int pid);
  // On-demand captures (POST /api/v1/capture); valid after Start. Thread-safe.
  CaptureManager* captures() { return captures_.get(); }

 private:
  struct Connection;
  struct WriteItem;

  void EventLoop();
  void WriterLoop();
  // Accepts what the listen backlog holds; false when out of file descriptors (the caller stops
  // polling the listening socket for a moment rather than spin on it).
  bool AcceptAll(std::vector<std::unique_ptr<Connection>>* conns, uint64_t* next_session);
  // Closes the connections past a deadline or over the partial-frame budget (ingest_guard.h).
  void EnforceIngestLimits(std::vector<std::unique_ptr<Connection>>* conns,
                           const std::function<void(size_t, const char*)>& close_conn);
  // Reads what the socket has (up to `max_bytes`, for fairness); false when the connection is
  // finished (EOF, error, bad frame).
  bool ReadConnection(Connection* c, size_t max_bytes);
  bool HandleFrame(Connection* c, uint16_t type, std::string&& payload);
  void EndSession(Connection* c, const char* how);
  // Writes what the connection has queued for its process (capture requests); false on error.
  bool FlushOut(Connection* c);
  // Sends a pending capture's requests to the connections it targets.
  void DispatchCapture(std::vector<std::unique_ptr<Connection>>& conns);
  void Wake();
  // Tells the telemetry which processes are profiled now (the scraper searches their sockets).
  void UpdateRootPids(const std::vector<std::unique_ptr<Connection>>& conns);
  void Enqueue(WriteItem&& item);
  bool QueueFull();
  void Log(const std::string& line);
  base::Status StartHttp();
  void AddCaptureRoutes();
  // stats() and the connection count, as /api/v1/status and /metrics show them.
  server::MetricsExporter::AgentCounters Counters() const;
  bool AnyWatchedAlive();

  AgentOptions options_;
  std::string socket_path_;
  int lock_fd_ = -1;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd
  int wake_fd_ = -1;  // eventfd: a capture waits to be sent out
  std::unique_ptr<CaptureManager> captures_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<server::AccessControl> access_;  // outlives http_, whose threads call it
  std::unique_ptr<server::HttpServer> http_;
  std::unique_ptr<telemetry::Telemetry> telemetry_;
  std::unique_ptr<store::WindowSink> sink_;  // fed by the writer after each commit
  server::MetricsExporter metrics_;  // thread-safe; fed by the event loop and the telemetry thread
  std::string endpoints_path_;       // <state dir>/agent.json, removed at exit
  int64_t started_unix_ns_ = 0;
  std::mutex watch_mu_;
  std::vector<int> watched_;             // guarded by watch_mu_
  std::atomic<bool> roots_dirty_{true};  // sessions or watched pids changed: UpdateRootPids
  std::thread loop_thread_;
  std::thread writer_thread_;
  bool started_ = false;
  bool joined_ = false;

  std::mutex mu_;  // guards the queue, writer_done_, writer_status_
  std::condition_variable queue_cv_;
  std::deque<WriteItem> queue_;
  bool loop_done_ = false;  // the event loop has enqueued its last item
  base::Status writer_status_;

  std::atomic<uint64_t> sessions_{0}, windows_received_{0}, windows_stored_{0},
      dropped_connections_{0}, store_errors_{0}, connected_{0}, refused_connections_{0},
      windows_rejected_{0};
  // Event loop only: refusals and rejected windows are logged once per 10 s.
  int64_t last_refusal_log_ns_ = 0, last_rejection_log_ns_ = 0;
};

}  // namespace inferscope::agentd
