// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The agent in-process on a temporary state dir, fed by the injection library's AgentClient (and
// by raw sockets for the broken cases); the store is checked afterwards with a read-only open.

#include "src/agentd/agent.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/base/time_point.h"
#include "src/import/trace_importer.h"
#include "src/inject/agent_client.h"
#include "src/net/agent_endpoints.h"
#include "src/wire/framing.h"
#include "src/wire/test_frames.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"
#include "tests/temp_dir.h"
#include "tests/test_traces.h"

namespace inferscope::agentd {
namespace {

using wire::testing::Frame;
using wire::testing::MakeHello;

namespace fs = std::filesystem;

using ::inferscope::testing::TempDir;

// Collects the agent's log lines (written from its threads).
class LogSink {
 public:
  std::function<void(std::string_view)> Fn() {
    return [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    };
  }
  bool Contains(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& l : lines_)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string s;
    for (const auto& l : lines_) s += l + "\n";
    return s;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

AgentOptions Options(const std::string& dir, LogSink* log) {
  AgentOptions o;
  o.state_dir = dir;
  o.log = log->Fn();
  o.http_port = 0;  // any free port: tests run side by side
  return o;
}

template <typename Pred>
bool WaitFor(Pred pred, int timeout_ms = 5000) {
  for (int i = 0; i < timeout_ms / 5; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

std::string HelloFrame(const wire::Hello& h) {
  std::string payload;
  wire::EncodeHello(h, &payload);
  return Frame(wire::FrameType::kHello, payload);
}

std::string WindowFrame(const model::ProfileWindow& w) {
  std::string payload;
  wire::EncodeWindow(w, &payload);
  return Frame(wire::FrameType::kWindow, payload);
}

// One-process windows as the injection library sends them: from the first real trace found
// (1 s windows), else hand-built ones.
std::vector<model::ProfileWindow> LiveWindows() {
  std::vector<model::ProfileWindow> out;
  const std::string trace = inferscope::testing::SharedTrace("nsys-ai/h100_2gpu_1s.sqlite");
  std::error_code ec;
  if (!trace.empty() && fs::exists(trace, ec)) {
    model::NameTable names;
    model::KernelClassifier classifier;
    aggregate::AggregatorOptions options;
    options.window_ns = 100'000'000;
    aggregate::Aggregator aggregator(options, &names, &classifier, [&](model::ProfileWindow&& w) {
      if (w.processes.empty()) return;
      w.processes.resize(1);  // the first process, as if its injection library sent it
      out.push_back(std::move(w));
    });
    if (import::ImportTrace(trace, &names, &aggregator).ok()) aggregator.Finish();
  }
  if (out.empty()) {
    for (int i = 0; i < 12; ++i) {
      model::ProfileWindow w = wire::testing::FullWindow();
      w.processes.resize(1);
      w.start_ns += i * 10'000'000'000LL;
      w.end_ns += i * 10'000'000'000LL;
      out.push_back(std::move(w));
    }
  }
  return out;
}

// A raw client socket, for sending exactly the bytes a test wants.
int Connect(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

void SendAll(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    off += static_cast<size_t>(n);
  }
}

store::QueryResult ReadStore(const std::string& dir) {
  auto store = store::SqliteStore::Open(dir, store::SqliteStore::Mode::kReadOnly);
  EXPECT_TRUE(store.ok()) << store.status().message();
  if (!store.ok()) return {};
  auto all = (*store)->QueryWindows({});
  EXPECT_TRUE(all.ok()) << all.status().message();
  return all.ok() ? std::move(all).value() : store::QueryResult{};
}

TEST(AgentTest, StoresEveryWindowSentBeforeStop) {
  TempDir dir;
  LogSink log;
  Agent agent(Options(dir.path(), &log));
  ASSERT_TRUE(agent.Start().ok());
  struct stat st {};
  ASSERT_EQ(::stat(agent.socket_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const std::vector<model::ProfileWindow> windows = LiveWindows();
  const wire::Hello hello = MakeHello(windows[0].processes[0].pid, 0);
  inject::AgentClient client(agent.socket_path(), 64u << 20);
  client.SetHello(HelloFrame(hello));
  for (const model::ProfileWindow& w : windows) client.Enqueue(WindowFrame(w));
  client.Enqueue(Frame(wire::FrameType::kGoodbye, ""));
  client.FlushUntil(inject::AgentClient::MonotonicNs() + 5'000'000'000);
  ASSERT_EQ(client.queued_frames(), 0u);
  // Stop right away: the frames may still sit in the socket; the stop path must read them.
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  EXPECT_EQ(agent.stats().windows_stored, windows.size());
  EXPECT_FALSE(fs::exists(agent.socket_path()));

  const store::QueryResult stored = ReadStore(dir.path());
  ASSERT_EQ(stored.windows.size(), windows.size());
  for (size_t i = 0; i < windows.size(); ++i)
    EXPECT_EQ(wire::testing::FirstDifference(windows[i], stored.windows[i].window), "") << i;
  ASSERT_EQ(stored.processes.size(), 1u);
  const store::StoredProcess& p = stored.processes.begin()->second;
  EXPECT_EQ(p.hello, hello);
  EXPECT_GT(p.ended_ns, 0);  // the goodbye was recorded
  EXPECT_TRUE(log.Contains("session start: pid")) << log.All();
  EXPECT_TRUE(log.Contains("windows (goodbye)")) << log.All();
}

TEST(AgentTest, ConnectionKilledMidFrameLosesOnlyThePartialFrame) {
  TempDir dir;
  LogSink log;
  Agent agent(Options(dir.path(), &log));
  ASSERT_TRUE(agent.Start().ok());
  const std::vector<model::ProfileWindow> windows = LiveWindows();
  ASSERT_GE(windows.size(), 2u);

  const int fd = Connect(agent.socket_path());
  const std::string second = WindowFrame(windows[1]);
  SendAll(fd, HelloFrame(MakeHello(1, 0)) + WindowFrame(windows[0]) +
                  second.substr(0, second.size() / 2));
  ASSERT_TRUE(WaitFor([&] { return agent.stats().windows_received == 1; }));
  ::close(fd);
  ASSERT_TRUE(WaitFor([&] { return log.Contains("mid-frame"); })) << log.All();
  EXPECT_TRUE(log.Contains("connection closed)")) << log.All();

  // The agent keeps serving: a second process gets its window stored.
  const int fd2 = Connect(agent.socket_path());
  SendAll(fd2, HelloFrame(MakeHello(2, 1)) + second);
  ASSERT_TRUE(WaitFor([&] { return agent.stats().windows_received == 2; }));
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  ::close(fd2);

  const store::QueryResult stored = ReadStore(dir.path());
  ASSERT_EQ(stored.windows.size(), 2u);
  EXPECT_EQ(stored.processes.at(stored.windows[0].process_id).hello.pid, 1u);
  EXPECT_EQ(stored.processes.at(stored.windows[1].process_id).hello.pid, 2u);
  EXPECT_EQ(stored.processes.at(stored.windows[0].process_id).ended_ns, 0);  // no goodbye
}

TEST(AgentTest, BadFramesDropOnlyThatConnection) {
  TempDir dir;
  LogSink log;
  Agent agent(Options(dir.path(), &log));
  ASSERT_TRUE(agent.Start().ok());
  const std::vector<model::ProfileWindow> windows = LiveWindows();

  const int garbage = Connect(agent.socket_path());  // not a frame at all
  SendAll(garbage, std::string(64, 'z'));
  const int no_hello = Connect(agent.socket_path());  // a window before the hello
  SendAll(no_hello, WindowFrame(windows[0]));
  const int bad_window = Connect(agent.socket_path());  // a frame whose payload is not a window
  SendAll(bad_window, HelloFrame(MakeHello(3, 0)) + Frame(wire::FrameType::kWindow, "\x01\xff"));
  ASSERT_TRUE(WaitFor([&] { return agent.stats().dropped_connections == 3; })) << log.All();
  EXPECT_TRUE(log.Contains("bad window")) << log.All();
  EXPECT_TRUE(log.Contains("window before hello")) << log.All();

  const int good = Connect(agent.socket_path());
  SendAll(good, HelloFrame(MakeHello(4, 0)) + WindowFrame(windows[0]) +
                    Frame(wire::FrameType::kGoodbye, ""));
  ::close(good);
  ASSERT_TRUE(WaitFor([&] { return log.Contains("1 windows (goodbye)"); })) << log.All();
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  for (int fd : {garbage, no_hello, bad_window}) ::close(fd);
  EXPECT_EQ(ReadStore(dir.path()).windows.size(), 1u);
}

// docs/agent.md: an explicitly chosen --http-port that is taken is an error, the default port's
// number included; only the default falls back to a free port.
TEST(AgentTest, TakenChosenPortIsAnErrorEvenTheDefaultNumber) {
  // Hold the default port (or find it held already: taken either way).
  server::HttpServer holder;
  (void)holder.Start("127.0.0.1", AgentOptions::kDefaultHttpPort, false);
  TempDir dir;
  LogSink log;
  AgentOptions chosen = Options(dir.path() + "/chosen", &log);
  chosen.http_port = AgentOptions::kDefaultHttpPort;
  chosen.http_port_chosen = true;
  chosen.telemetry_enabled = false;
  Agent strict(chosen);
  const base::Status status = strict.Start();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("--http-port"), std::string::npos) << status.message();

  AgentOptions by_default = Options(dir.path() + "/default", &log);
  by_default.http_port = AgentOptions::kDefaultHttpPort;
  by_default.telemetry_enabled = false;
  Agent lenient(by_default);
  ASSERT_TRUE(lenient.Start().ok());
  EXPECT_NE(lenient.http_port(), AgentOptions::kDefaultHttpPort);
  EXPECT_GT(lenient.http_port(), 0);
  lenient.Stop();
  ASSERT_TRUE(lenient.Wait().ok());
}

TEST(AgentTest, OneAgentPerStateDir) {
  TempDir dir;
  LogSink log;
  Agent first(Options(dir.path(), &log));
  ASSERT_TRUE(first.Start().ok());
  {
    Agent second(Options(dir.path(), &log));
    const base::Status status = second.Start();
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), base::StatusCode::kAlreadyExists);
    EXPECT_NE(status.message().find("already running"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("pid " + std::to_string(::getpid())), std::string::npos)
        << status.message();
  }
  // The loser did not disturb the winner's socket.
  EXPECT_TRUE(fs::exists(first.socket_path()));
  first.Stop();
  ASSERT_TRUE(first.Wait().ok());
  Agent third(Options(dir.path(), &log));
  EXPECT_TRUE(third.Start().ok());
}

TEST(AgentTest, ExitsWhenIdle) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.exit_when_idle_ns = 300'000'000;
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  const int fd = Connect(agent.socket_path());
  SendAll(fd, HelloFrame(MakeHello(5, 0)));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_TRUE(fs::exists(agent.socket_path()));  // connected: not idle
  ::close(fd);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(agent.Wait().ok());  // returns without Stop()
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(log.Contains("exiting")) << log.All();
}

TEST(AgentTest, StaysWhileAWatchedProcessLives) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.exit_when_idle_ns = 200'000'000;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();  // until killed
    ::_exit(0);
  }
  options.watch_pids = {child};
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // > idle timeout, no process
  EXPECT_TRUE(fs::exists(agent.socket_path())) << "exited while the watched process lives";
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(agent.Wait().ok());  // returns without Stop()
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(log.Contains("exiting")) << log.All();
}

TEST(AgentTest, ServesTheHttpApiAndNamesItsEndpoints) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.telemetry.window_ns = 7'000'000'000;
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_GT(agent.http_port(), 0);
  // The window, for `report` to say how long until the first one.
  std::ifstream json(dir.path() + "/agent.json");
  const std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"window_ns\": 7000000000,"), std::string::npos) << text;
  auto endpoints = net::ReadAgentEndpoints(dir.path());
  ASSERT_TRUE(endpoints.ok()) << endpoints.status().message();
  EXPECT_EQ(endpoints->pid, ::getpid());
  EXPECT_EQ(endpoints->api, "http://127.0.0.1:" + std::to_string(agent.http_port()) + "/api/v1");
  EXPECT_EQ(endpoints->socket, agent.socket_path());

  // A process sends one window; the API lists it.
  const int fd = Connect(agent.socket_path());
  model::ProfileWindow w = wire::testing::FullWindow();
  w.processes.resize(1);
  w.processes[0].pid = 5;
  SendAll(fd, HelloFrame(MakeHello(5, 0)) + WindowFrame(w));
  ASSERT_TRUE(WaitFor([&] { return agent.stats().windows_stored == 1; }));
  httplib::Client client("127.0.0.1", agent.http_port());
  EXPECT_EQ(client.Get("/api/v1/status")->status, 401);  // the token, docs/agent.md "Access"
  ASSERT_FALSE(endpoints->access_token.empty()) << endpoints->access_token_error;
  client.set_bearer_token_auth(endpoints->access_token);
  auto r = client.Get("/api/v1/status");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("\"connected_processes\": 1"), std::string::npos) << r->body;
  r = client.Get("/api/v1/windows?from=0");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"start_unix_ns\": " + std::to_string(w.start_ns)), std::string::npos)
      << r->body;
  // watch takes the user's own processes only: a child of ours, not init nor the agent itself.
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  r = client.Post("/api/v1/watch?pid=" + std::to_string(child));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  r = client.Post("/api/v1/watch?pid=1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(client.Post("/api/v1/watch?pid=" + std::to_string(::getpid()))->status, 403);
  EXPECT_EQ(client.Post("/api/v1/watch?pid=abc")->status, 400);
  EXPECT_EQ(client.Post("/api/v1/watch?pid=12x")->status, 400);
  // Capture ids are whole decimal numbers: -1 is not 2^64-1, and 1%00 is not 1.
  EXPECT_EQ(client.Get("/api/v1/capture?id=-1")->status, 400);
  EXPECT_EQ(client.Get("/api/v1/capture?id=1%00")->status, 400);
  EXPECT_EQ(client.Get("/api/v1/capture/download?id=-1")->status, 400);
  ::close(fd);
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  EXPECT_FALSE(fs::exists(dir.path() + "/agent.json"));
  EXPECT_FALSE(client.Get("/api/v1/status"));
}

// agent.json followed the umask (0666 under umask 000). Every file the agent
// writes is 0600 and the state dir 0700 whatever the umask; a state dir others can write is
// refused.
TEST(AgentTest, EveryFileItWritesIsPrivateWhateverTheUmask) {
  TempDir dir;
  LogSink log;
  const std::string state = dir.path() + "/state";
  const mode_t old_umask = ::umask(0);
  Agent agent(Options(state, &log));
  const base::Status started = agent.Start();
  ::umask(old_umask);
  ASSERT_TRUE(started.ok()) << started.message();
  auto mode = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(state), 0700u);
  for (const char* name :
       {"agent.json", "agent.token", "agent.lock", "agent.sock", "inferscope.db"})
    EXPECT_EQ(mode(state + "/" + name) & 077, 0u) << name << " is open to others";
  EXPECT_EQ(mode(state + "/agent.json"), 0600u);
  EXPECT_EQ(mode(state + "/agent.token"), 0600u);
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());

  const std::string open_dir = dir.path() + "/open";
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  Agent refused(Options(open_dir, &log));
  const base::Status s = refused.Start();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("writable by every user"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(open_dir + "/agent.sock"));
  EXPECT_FALSE(fs::exists(open_dir + "/agent.token"));
}

}  // namespace
}  // namespace inferscope::agentd

namespace inferscope::agentd {
namespace {

// Records what the agent hands its sink (the store::WindowSink contract: after the commit, in
// order).
class RecordingSink : public store::WindowSink {
 public:
  void OnWindow(const wire::Hello& process, const model::ProfileWindow& window) override {
    std::lock_guard<std::mutex> lock(mu_);
    windows.push_back(window);
    hellos.push_back(process);
  }
  void OnTelemetry(const store::TelemetryRecord& record) override {
    std::lock_guard<std::mutex> lock(mu_);
    telemetry.push_back(record.kind);
  }
  store::SinkStats stats() const override {
    store::SinkStats s;
    s.url = "recording://";
    std::lock_guard<std::mutex> lock(mu_);
    s.rows_sent = windows.size();
    return s;
  }
  void Stop() override { stopped = true; }

  mutable std::mutex mu_;
  std::vector<model::ProfileWindow> windows;
  std::vector<wire::Hello> hellos;
  std::vector<std::string> telemetry;
  std::atomic<bool> stopped{false};
};

TEST(AgentTest, HandsEveryStoredWindowToItsSink) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  RecordingSink* sink = nullptr;
  options.make_sink =
      [&sink](const std::string& state_dir) -> base::StatusOr<std::unique_ptr<store::WindowSink>> {
    // The store exists by then: a sink may keep its spool in it.
    EXPECT_TRUE(fs::exists(state_dir + "/inferscope.db"));
    auto s = std::make_unique<RecordingSink>();
    sink = s.get();
    return std::unique_ptr<store::WindowSink>(std::move(s));
  };
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_NE(sink, nullptr);
  const std::vector<model::ProfileWindow> windows = LiveWindows();
  const wire::Hello hello = MakeHello(windows[0].processes[0].pid, 0);
  const int fd = Connect(agent.socket_path());
  std::string bytes = HelloFrame(hello);
  for (const model::ProfileWindow& w : windows) bytes += WindowFrame(w);
  SendAll(fd, bytes + Frame(wire::FrameType::kGoodbye, ""));
  ::close(fd);
  ASSERT_TRUE(WaitFor([&] { return agent.stats().windows_stored == windows.size(); }));
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  EXPECT_TRUE(sink->stopped);
  ASSERT_EQ(sink->windows.size(), windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    EXPECT_EQ(wire::testing::FirstDifference(windows[i], sink->windows[i]), "") << i;
    EXPECT_EQ(sink->hellos[i], hello);
  }
}

TEST(AgentTest, ASinkThatCannotStartStopsTheAgentStarting) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.make_sink = [](const std::string&) -> base::StatusOr<std::unique_ptr<store::WindowSink>> {
    return base::UnavailableError("spool: disk full");
  };
  Agent agent(options);
  const base::Status s = agent.Start();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "spool: disk full");
}

// True when the agent closed the connection (EOF within `timeout_ms`), false when it is still open.
bool ClosedByAgent(int fd, int timeout_ms = 5000) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return false;
  char c;
  return ::recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

TEST(AgentTest, DropsAConnectionThatNeverSaysHello) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.ingest.hello_deadline_ns = 200'000'000;
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  const int silent = Connect(agent.socket_path());
  const int talks = Connect(agent.socket_path());
  SendAll(talks, HelloFrame(MakeHello(7, 0)));
  EXPECT_TRUE(ClosedByAgent(silent)) << log.All();
  EXPECT_TRUE(log.Contains("no hello within 200 ms")) << log.All();
  EXPECT_FALSE(ClosedByAgent(talks, 300));  // a process that said hello has no such deadline
  EXPECT_EQ(agent.stats().dropped_connections, 1u);
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  ::close(silent);
  ::close(talks);
}

TEST(AgentTest, ASilentConnectionDoesNotKeepAnIdleAgentAlive) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.exit_when_idle_ns = 300'000'000;
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  const int silent = Connect(agent.socket_path());  // connects, never says hello
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(agent.Wait().ok());  // exits on its own, the silent connection still open
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(log.Contains("exiting")) << log.All();
  ::close(silent);
}

TEST(AgentTest, DropsAFrameThatStallsHalfway) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.ingest.frame_stall_ns = 300'000'000;
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  const std::vector<model::ProfileWindow> windows = LiveWindows();
  const int fd = Connect(agent.socket_path());
  const std::string frame = WindowFrame(windows[0]);
  SendAll(fd, HelloFrame(MakeHello(8, 0)) + frame.substr(0, frame.size() / 2));
  EXPECT_TRUE(ClosedByAgent(fd)) << log.All();
  EXPECT_TRUE(log.Contains("still incomplete")) << log.All();
  // A sender that completes its frames is untouched.
  const int good = Connect(agent.socket_path());
  SendAll(good, HelloFrame(MakeHello(9, 0)) + frame);
  ASSERT_TRUE(WaitFor([&] { return agent.stats().windows_received == 1; }));
  EXPECT_FALSE(ClosedByAgent(good, 500));
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  ::close(fd);
  ::close(good);
}

TEST(AgentTest, RefusesConnectionsBeyondTheCap) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.ingest.max_connections = 3;
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  std::vector<int> fds;
  for (uint32_t i = 0; i < 3; ++i) {
    fds.push_back(Connect(agent.socket_path()));
    SendAll(fds.back(), HelloFrame(MakeHello(20 + i, 0)));
  }
  ASSERT_TRUE(WaitFor([&] { return agent.stats().sessions == 3; }));
  const int fourth = Connect(agent.socket_path());
  EXPECT_TRUE(ClosedByAgent(fourth)) << log.All();
  EXPECT_EQ(agent.stats().refused_connections, 1u);
  EXPECT_TRUE(log.Contains("the most this agent takes")) << log.All();
  // A slot freed is a slot taken again.
  ::close(fds.back());
  fds.pop_back();
  ASSERT_TRUE(WaitFor([&] { return agent.stats().sessions == 3 && log.Contains("session end"); }));
  const int again = Connect(agent.socket_path());
  SendAll(again, HelloFrame(MakeHello(30, 0)));
  ASSERT_TRUE(WaitFor([&] { return agent.stats().sessions == 4; })) << log.All();
  EXPECT_EQ(agent.stats().refused_connections, 1u);
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  for (int fd : fds) ::close(fd);
  ::close(fourth);
  ::close(again);
}

TEST(AgentTest, PartialFramesShareOneBudget) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.ingest.max_buffered_bytes = 1u << 20;
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  // Frames that announce 4 MiB each, sent in part: 700 KiB, then 500 KiB (1.2 MiB together).
  const std::string big = Frame(wire::FrameType::kWindow, std::string(4u << 20, 'x'));
  const int larger = Connect(agent.socket_path());
  SendAll(larger, HelloFrame(MakeHello(40, 0)) + big.substr(0, 700u << 10));
  const int smaller = Connect(agent.socket_path());
  SendAll(smaller, HelloFrame(MakeHello(41, 0)) + big.substr(0, 500u << 10));
  EXPECT_TRUE(ClosedByAgent(larger)) << log.All();
  EXPECT_TRUE(log.Contains("is the largest while partial frames exceed 1 MiB")) << log.All();
  EXPECT_FALSE(ClosedByAgent(smaller, 300));  // within the budget once the larger one went
  EXPECT_EQ(agent.stats().dropped_connections, 1u);
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  ::close(larger);
  ::close(smaller);
}

TEST(AgentTest, RefusesAWindowFromTheFuture) {
  TempDir dir;
  LogSink log;
  Agent agent(Options(dir.path(), &log));
  ASSERT_TRUE(agent.Start().ok());
  model::ProfileWindow future = LiveWindows()[0];
  const int64_t length = future.end_ns - future.start_ns;
  future.start_ns = base::UnixNowNs() + 86'400'000'000'000;  // tomorrow
  future.end_ns = future.start_ns + length;
  model::ProfileWindow now = LiveWindows()[0];
  now.end_ns = base::UnixNowNs();
  now.start_ns = now.end_ns - length;
  // A process's last, partial window keeps its nominal end, which may lie ahead: it is taken.
  model::ProfileWindow last = now;
  last.start_ns = now.end_ns;
  last.end_ns = last.start_ns + 1'000'000'000'000'000;  // a 1,000,000 s window
  const int fd = Connect(agent.socket_path());
  SendAll(fd, HelloFrame(MakeHello(50, 0)) + WindowFrame(future) + WindowFrame(now) +
                  WindowFrame(last));
  ASSERT_TRUE(WaitFor([&] { return agent.stats().windows_received == 2; })) << log.All();
  EXPECT_EQ(agent.stats().windows_rejected, 1u);
  EXPECT_EQ(agent.stats().dropped_connections, 0u);  // the connection's other windows count
  EXPECT_TRUE(log.Contains("refused: it spans")) << log.All();
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  ::close(fd);
  const store::QueryResult stored = ReadStore(dir.path());
  ASSERT_EQ(stored.windows.size(), 2u);
  EXPECT_EQ(stored.windows[0].window.start_ns, now.start_ns);
  EXPECT_EQ(stored.windows[1].window.start_ns, last.start_ns);
}

// --max-store holds on write: a flood runs retention as it goes, not only at the next period.
TEST(AgentTest, TheSizeCapHoldsDuringAFlood) {
  TempDir dir;
  LogSink log;
  AgentOptions options = Options(dir.path(), &log);
  options.max_store_bytes = 1u << 20;
  options.retention_period_ns = 3'600'000'000'000;  // the periodic run never comes in the test
  Agent agent(options);
  ASSERT_TRUE(agent.Start().ok());
  const int fd = Connect(agent.socket_path());
  SendAll(fd, HelloFrame(MakeHello(60, 0)));
  // Windows whose kernel names differ, so that they do not compress to nothing: 16 MiB encoded.
  model::ProfileWindow w = wire::testing::FullWindow(/*top_kernels=*/100);
  w.processes.resize(1);
  const int64_t length = w.end_ns - w.start_ns;
  size_t sent = 0, windows = 0;
  std::mt19937_64 rng(7);
  while (sent < (16u << 20)) {
    for (auto& d : w.processes[0].devices)
      for (auto& k : d.top_kernels) k.name = std::to_string(rng()) + std::to_string(rng());
    w.start_ns += length;
    w.end_ns += length;
    const std::string frame = WindowFrame(w);
    SendAll(fd, frame);
    sent += frame.size();
    ++windows;
  }
  ASSERT_TRUE(WaitFor([&] { return agent.stats().windows_stored == windows; }, 30000))
      << agent.stats().windows_stored << " of " << windows;
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
  ::close(fd);
  const store::QueryResult stored = ReadStore(dir.path());
  ASSERT_FALSE(stored.windows.empty());
  EXPECT_LT(stored.windows.size(), windows);  // the oldest went while the flood went on
  EXPECT_EQ(stored.windows.back().window.start_ns, w.start_ns);  // the newest stays
  // What the cap counts (stored, compressed payload bytes): within it plus the sixteenth (here
  // the 1 MiB floor) written between two runs.
  auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadOnly);
  ASSERT_TRUE(store.ok());
  auto summary = (*store)->Summary();
  ASSERT_TRUE(summary.ok());
  EXPECT_LE(summary->payload_bytes, (2u << 20) + sent / windows) << stored.windows.size();
}

}  // namespace
}  // namespace inferscope::agentd
