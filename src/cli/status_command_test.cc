// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// `inferscope status` against a real in-process agent (HTTP on a free port, and HTTP off), a
// stand-in HTTP agent that reports collectors, and the not-running cases (no agent.json, a stale
// one, a live pid whose API is silent), in both output formats.

#include "src/cli/status_command.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <simdjson.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "src/agentd/agent.h"
#include "src/base/time_point.h"
#include "src/cli/exit_codes.h"
#include "src/store/sqlite_store.h"
#include "src/wire/framing.h"
#include "src/wire/test_frames.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"
#include "tests/temp_dir.h"

namespace inferscope::cli {
namespace {

using wire::testing::Frame;

namespace dom = simdjson::dom;
using ::inferscope::testing::TempDir;

constexpr int64_t kSec = 1'000'000'000;

struct Result {
  int code = -1;
  std::string out, err;
};

Result Status(const std::string& dir, bool json, int64_t now_ns = 0) {
  StatusOptions options;
  options.state_dir = dir;
  options.json = json;
  options.now_unix_ns = now_ns;
  std::ostringstream out, err;
  Result r;
  r.code = RunStatus(options, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The keys docs/cli.md promises, present in every answer whatever the agent's state.
void ExpectDocumentedKeys(dom::element doc) {
  for (const char* key :
       {"running", "pid", "version", "state_dir", "started_unix_ns", "uptime_ns", "socket",
        "endpoints", "agent", "store", "processes", "devices", "collectors", "notes"})
    EXPECT_EQ(doc[key].error(), simdjson::SUCCESS) << "missing key " << key;
  for (const char* key : {"api", "metrics", "otlp_http", "ui"})
    EXPECT_EQ(doc["endpoints"][key].error(), simdjson::SUCCESS) << "endpoints." << key;
  for (const char* key : {"nvml", "scrape", "otlp"}) {
    std::string_view state;
    ASSERT_EQ(doc["collectors"][key]["state"].get(state), simdjson::SUCCESS) << key;
    EXPECT_TRUE(state == "on" || state == "off" || state == "degraded" || state == "unknown")
        << key << ": " << state;
    EXPECT_EQ(doc["collectors"][key]["reason"].error(), simdjson::SUCCESS) << key;
  }
  EXPECT_EQ(doc["collectors"]["nvml"]["devices"].error(), simdjson::SUCCESS);
  EXPECT_EQ(doc["collectors"]["scrape"]["url"].error(), simdjson::SUCCESS);
  EXPECT_EQ(doc["collectors"]["scrape"]["engine"].error(), simdjson::SUCCESS);
  EXPECT_EQ(doc["collectors"]["otlp"]["spans_received"].error(), simdjson::SUCCESS);
}

bool IsNull(dom::element e) { return e.is_null(); }

bool NotesContain(dom::element doc, std::string_view text) {
  dom::array notes;
  if (doc["notes"].get(notes) != simdjson::SUCCESS) return false;
  for (dom::element n : notes) {
    std::string_view s;
    if (n.get(s) == simdjson::SUCCESS && s.find(text) != std::string_view::npos) return true;
  }
  return false;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
}

void WriteAgentJson(const std::string& dir, int64_t pid, int port) {
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  WriteFile(dir + "/agent.json", "{\"pid\": " + std::to_string(pid) + ", \"socket\": \"" + dir +
                                     "/agent.sock\", \"endpoints\": {\"api\": \"" + base +
                                     "/api/v1\", \"metrics\": \"" + base +
                                     "/metrics\", \"otlp_http\": \"" + base + "/v1/traces\"}}\n");
}

// A loopback port nobody listens on (bound, then released).
int ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

template <typename Pred>
bool WaitFor(Pred pred) {
  for (int i = 0; i < 1000 && !pred(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return pred();
}

// A process (pid 4242, rank 1, host node-s) that sends one window ending now, as the injection
// library would.
void SendOneWindow(const std::string& socket_path) {
  wire::Hello hello;
  hello.pid = 4242;
  hello.rank = 1;
  hello.world_size = 2;
  hello.hostname = "node-s";
  hello.tool_version = "test";
  std::string hello_payload;
  wire::EncodeHello(hello, &hello_payload);
  model::ProfileWindow w = wire::testing::FullWindow();
  w.processes.resize(1);  // one process per connection, as the injection library sends
  const int64_t shift = base::UnixNowNs() - w.end_ns;
  w.start_ns += shift;
  w.end_ns += shift;
  std::string window_payload;
  wire::EncodeWindow(w, &window_payload);
  const std::string bytes = Frame(wire::FrameType::kHello, hello_payload) +
                            Frame(wire::FrameType::kWindow, window_payload) +
                            Frame(wire::FrameType::kGoodbye, "");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path.c_str());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

agentd::AgentOptions QuietAgent(const std::string& dir, int http_port) {
  agentd::AgentOptions o;
  o.state_dir = dir;
  o.http_port = http_port;
  o.log = [](std::string_view) {};
  return o;
}

TEST(StatusCommandTest, RunningAgentBothFormats) {
  TempDir dir;
  agentd::Agent agent(QuietAgent(dir.path(), 0));
  ASSERT_TRUE(agent.Start().ok());
  SendOneWindow(agent.socket_path());
  ASSERT_TRUE(WaitFor([&] { return agent.stats().windows_stored == 1; }));

  const Result json = Status(dir.path(), /*json=*/true);
  EXPECT_EQ(json.code, kExitOk) << json.err;
  dom::parser parser;
  dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  ExpectDocumentedKeys(doc);
  EXPECT_TRUE(doc["running"].get_bool().value());
  EXPECT_EQ(doc["pid"].get_int64().value(), ::getpid());
  EXPECT_FALSE(doc["version"].get_string().value().empty());
  EXPECT_EQ(doc["state_dir"].get_string().value(), dir.path());
  EXPECT_GE(doc["uptime_ns"].get_int64().value(), 0);
  EXPECT_TRUE(doc["socket"]["answers"].get_bool().value());
  const std::string origin = "http://127.0.0.1:" + std::to_string(agent.http_port());
  EXPECT_EQ(doc["endpoints"]["api"].get_string().value(), origin + "/api/v1");
  EXPECT_EQ(doc["endpoints"]["metrics"].get_string().value(), origin + "/metrics");
  EXPECT_EQ(doc["endpoints"]["otlp_http"].get_string().value(), origin + "/v1/traces");
  EXPECT_EQ(doc["endpoints"]["ui"].get_string().value(), origin + "/ui/");
  EXPECT_EQ(doc["agent"]["sessions"].get_uint64().value(), 1u);
  EXPECT_EQ(doc["agent"]["windows_stored"].get_uint64().value(), 1u);
  EXPECT_EQ(doc["store"]["windows"].get_uint64().value(), 1u);
  EXPECT_EQ(doc["store"]["processes"].get_uint64().value(), 1u);
  EXPECT_GT(doc["store"]["payload_bytes"].get_uint64().value(), 0u);
  dom::array processes = doc["processes"].get_array().value();
  ASSERT_EQ(processes.size(), 1u) << json.out;
  EXPECT_EQ(processes.at(0)["pid"].get_uint64().value(), 4242u);
  EXPECT_EQ(processes.at(0)["rank"].get_int64().value(), 1);
  EXPECT_EQ(processes.at(0)["hostname"].get_string().value(), "node-s");
  EXPECT_EQ(processes.at(0)["windows"].get_uint64().value(), 1u);
  dom::array devices = doc["devices"].get_array().value();
  ASSERT_FALSE(devices.size() == 0) << json.out;
  for (dom::element d : devices) {
    EXPECT_EQ(d["pid"].get_uint64().value(), 4242u);
    EXPECT_EQ(d["windows"].get_uint64().value(), 1u);
  }

  const Result text = Status(dir.path(), /*json=*/false);
  EXPECT_EQ(text.code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("running (pid " + std::to_string(::getpid()) + ", up "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(origin + "/api/v1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(origin + "/v1/traces"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Dashboard"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(origin + "/ui/"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1 windows from 1 processes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Processes seen in the last 5 minutes: 1"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("4242"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("node-s"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(ended)"), std::string::npos) << text.out;  // it said goodbye
  EXPECT_NE(
      text.out.find("GPUs with work in the last 5 minutes: " + std::to_string(devices.size())),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Collectors"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("not running"), std::string::npos) << text.out;

  // Probing the socket left no trace in the agent's counters.
  EXPECT_EQ(agent.stats().dropped_connections, 0u);
  EXPECT_EQ(agent.stats().sessions, 1u);
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());

  // Stopped cleanly: agent.json is gone, so: not running, and the store is still shown.
  const Result after = Status(dir.path(), /*json=*/true);
  EXPECT_EQ(after.code, kExitNotFound);
  ASSERT_EQ(parser.parse(after.out).get(doc), simdjson::SUCCESS) << after.out;
  EXPECT_FALSE(doc["running"].get_bool().value());
  EXPECT_EQ(doc["store"]["windows"].get_uint64().value(), 1u);
  EXPECT_EQ(doc["processes"].get_array().value().size(), 1u);
}

TEST(StatusCommandTest, NotRunningWithoutAgentJsonOrStore) {
  TempDir dir;
  const Result text = Status(dir.path(), false);
  EXPECT_EQ(text.code, kExitNotFound);
  EXPECT_TRUE(text.err.empty()) << text.err;
  EXPECT_NE(text.out.find("not running"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("inferscope agent"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("inferscope run -- CMD"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("none yet"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("the agent is not running"), std::string::npos) << text.out;

  const Result json = Status(dir.path(), true);
  EXPECT_EQ(json.code, kExitNotFound);
  dom::parser parser;
  dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  ExpectDocumentedKeys(doc);
  EXPECT_FALSE(doc["running"].get_bool().value());
  EXPECT_TRUE(IsNull(doc["pid"].value()));
  EXPECT_TRUE(IsNull(doc["version"].value()));
  EXPECT_TRUE(IsNull(doc["endpoints"]["api"].value()));
  EXPECT_TRUE(IsNull(doc["endpoints"]["metrics"].value()));
  EXPECT_TRUE(IsNull(doc["endpoints"]["otlp_http"].value()));
  EXPECT_TRUE(IsNull(doc["store"].value()));
  EXPECT_FALSE(doc["socket"]["answers"].get_bool().value());
  EXPECT_EQ(doc["collectors"]["nvml"]["state"].get_string().value(), "off");
  EXPECT_EQ(doc["collectors"]["otlp"]["reason"].get_string().value(), "the agent is not running");
}

TEST(StatusCommandTest, NotRunningStillShowsTheStore) {
  TempDir dir;
  const int64_t now = base::UnixNowNs();
  {
    auto store = store::SqliteStore::Open(dir.path(), store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    wire::Hello hello;
    hello.pid = 777;
    hello.rank = 3;
    hello.hostname = "node-z";
    auto id = (*store)->UpsertProcess(hello, now - 60 * kSec);
    ASSERT_TRUE(id.ok());
    // An old process, out of the 5 minute listing but in the store's totals.
    hello.pid = 778;
    ASSERT_TRUE((*store)->UpsertProcess(hello, now - 3600 * kSec).ok());
  }
  const Result json = Status(dir.path(), true, now);
  EXPECT_EQ(json.code, kExitNotFound);
  dom::parser parser;
  dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  ExpectDocumentedKeys(doc);
  EXPECT_EQ(doc["store"]["processes"].get_uint64().value(), 2u);
  EXPECT_EQ(doc["store"]["windows"].get_uint64().value(), 0u);
  dom::array processes = doc["processes"].get_array().value();
  ASSERT_EQ(processes.size(), 1u) << json.out;
  EXPECT_EQ(processes.at(0)["pid"].get_uint64().value(), 777u);

  const Result text = Status(dir.path(), false, now);
  EXPECT_NE(text.out.find("0 windows from 2 processes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(from the store): 1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1m 00s ago"), std::string::npos) << text.out;
}

TEST(StatusCommandTest, StaleAgentJsonIsNotRunning) {
  TempDir dir;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  WriteAgentJson(dir.path(), child, ClosedPort());

  const Result json = Status(dir.path(), true);
  EXPECT_EQ(json.code, kExitNotFound);
  dom::parser parser;
  dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  ExpectDocumentedKeys(doc);
  EXPECT_FALSE(doc["running"].get_bool().value());
  EXPECT_TRUE(IsNull(doc["endpoints"]["api"].value()));
  EXPECT_TRUE(NotesContain(doc, "which has exited")) << json.out;

  const Result text = Status(dir.path(), false);
  EXPECT_EQ(text.code, kExitNotFound);
  EXPECT_NE(text.out.find("stale"), std::string::npos) << text.out;
}

TEST(StatusCommandTest, LivePidWithSilentApiIsNotRunning) {
  TempDir dir;
  WriteAgentJson(dir.path(), ::getpid(), ClosedPort());  // alive, but nobody on the port
  const Result json = Status(dir.path(), true);
  EXPECT_EQ(json.code, kExitNotFound);
  dom::parser parser;
  dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  EXPECT_FALSE(doc["running"].get_bool().value());
  EXPECT_TRUE(NotesContain(doc, "is alive but its API does not answer")) << json.out;
}

TEST(StatusCommandTest, AgentWithoutHttpIsFoundThroughItsSocket) {
  TempDir dir;
  agentd::Agent agent(QuietAgent(dir.path(), -1));
  ASSERT_TRUE(agent.Start().ok());
  const Result json = Status(dir.path(), true);
  EXPECT_EQ(json.code, kExitOk) << json.out;
  dom::parser parser;
  dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  ExpectDocumentedKeys(doc);
  EXPECT_TRUE(doc["running"].get_bool().value());
  EXPECT_EQ(doc["pid"].get_int64().value(), ::getpid());  // SO_PEERCRED
  EXPECT_TRUE(IsNull(doc["endpoints"]["api"].value()));
  EXPECT_TRUE(NotesContain(doc, "no HTTP API")) << json.out;
  agent.Stop();
  ASSERT_TRUE(agent.Wait().ok());
}

// Stands in for an agent's HTTP API with canned answers (collectors the real agent may not
// report yet), named by an agent.json with this process's pid.
class FakeApi {
 public:
  FakeApi(const std::string& dir, std::string status_body) : status_body_(std::move(status_body)) {
    server_.Get("/api/v1/status", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(status_body_, "application/json");
    });
    server_.Get("/api/v1/processes", [](const httplib::Request& req, httplib::Response& res) {
      EXPECT_EQ(req.get_param_value("last"), "5m");
      res.set_content(
          R"({"processes": [{"hostname": "gpu-box", "pid": 31, "rank": 0, "windows": 12,
              "first_seen_unix_ns": 1, "last_seen_unix_ns": 1700000000000000000,
              "ended_unix_ns": null, "unknown_future_field": [1, 2]}]})",
          "application/json");
    });
    server_.Get("/api/v1/devices", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"devices": [{"hostname": "gpu-box", "pid": 31, "rank": 0, "device": 5,
                          "windows": 12, "kernels": 98765, "busy_ns": 2500000000}]})",
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    WriteAgentJson(dir, ::getpid(), port_);
  }
  ~FakeApi() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  std::string status_body_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

constexpr int64_t kNow = 1'700'000'010'000'000'000;  // 10 s after the fake process's last_seen

std::string FakeStatus(const std::string& collectors) {
  return "{\"version\": \"9.9.9\", \"pid\": " + std::to_string(::getpid()) +
         ", \"started_unix_ns\": " + std::to_string(kNow - 3725 * kSec) +
         ", \"connected_processes\": 2, \"sessions\": 5, \"windows_stored\": 40" + collectors + "}";
}

TEST(StatusCommandTest, ShowsCollectorsTheAgentReports) {
  TempDir dir;
  FakeApi api(dir.path(), FakeStatus(R"(, "collectors": {
      "nvml": {"state": "on", "reason": "", "devices": [
          {"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-aaaa"},
          {"index": 1, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-bbbb"}]},
      "scrape": {"state": "degraded", "reason": "last scrape timed out after 1 s",
                 "url": "http://127.0.0.1:8000/metrics", "engine": "vllm"},
      "otlp": {"state": "off", "reason": "no spans received yet", "spans_received": 0}})"));

  const Result json = Status(dir.path(), true, kNow);
  EXPECT_EQ(json.code, kExitOk) << json.out;
  dom::parser parser;
  dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  ExpectDocumentedKeys(doc);
  EXPECT_EQ(doc["version"].get_string().value(), "9.9.9");
  EXPECT_EQ(doc["uptime_ns"].get_int64().value(), 3725 * kSec);
  EXPECT_FALSE(doc["socket"]["answers"].get_bool().value());
  dom::element c = doc["collectors"];
  EXPECT_EQ(c["nvml"]["state"].get_string().value(), "on");
  EXPECT_TRUE(IsNull(c["nvml"]["reason"].value()));  // "" means no reason
  ASSERT_EQ(c["nvml"]["devices"].get_array().value().size(), 2u);
  EXPECT_EQ(c["nvml"]["devices"].at(1)["uuid"].get_string().value(), "GPU-bbbb");
  EXPECT_EQ(c["scrape"]["state"].get_string().value(), "degraded");
  EXPECT_EQ(c["scrape"]["url"].get_string().value(), "http://127.0.0.1:8000/metrics");
  EXPECT_EQ(c["scrape"]["engine"].get_string().value(), "vllm");
  EXPECT_EQ(c["otlp"]["spans_received"].get_uint64().value(), 0u);
  EXPECT_EQ(c["otlp"]["reason"].get_string().value(), "no spans received yet");
  EXPECT_EQ(doc["processes"].at(0)["pid"].get_uint64().value(), 31u);
  EXPECT_TRUE(IsNull(doc["processes"].at(0)["ended_unix_ns"].value()));
  EXPECT_EQ(doc["devices"].at(0)["device"].get_uint64().value(), 5u);
  EXPECT_EQ(doc["devices"].at(0)["kernels"].get_uint64().value(), 98765u);

  const Result text = Status(dir.path(), false, kNow);
  EXPECT_EQ(text.code, kExitOk);
  for (const char* want :
       {"up 1h 02m", "inferscope 9.9.9", "5 sessions (2 connected now)", "10s ago", "gpu-box",
        "98,765", "2.50 s", "2 GPUs: 0 NVIDIA H100 80GB HBM3 (GPU-aaaa), 1 NVIDIA H100",
        "degraded  http://127.0.0.1:8000/metrics (vllm); last scrape timed out after 1 s",
        "off       0 spans received; no spans received yet"})
    EXPECT_NE(text.out.find(want), std::string::npos) << "want '" << want << "' in\n" << text.out;
}

// `status` fits 100 columns; a long GPU list wraps under its column, nothing is cut.
TEST(StatusCommandTest, FitsOneHundredColumnsWithoutCuttingValues) {
  TempDir dir;
  std::string devices;
  for (int i = 0; i < 8; ++i)
    devices += std::string(i ? ", " : "") + "{\"index\": " + std::to_string(i) +
               ", \"name\": \"NVIDIA H100 80GB HBM3\", \"uuid\": "
               "\"GPU-5f1c4a7e-0000-4000-8000-00000000000" +
               std::to_string(i) + "\"}";
  FakeApi api(dir.path(), FakeStatus(R"(, "collectors": {"nvml": {"state": "on", "reason": "",)"
                                     R"( "devices": [)" +
                                     devices + R"(]}})"));
  const Result text = Status(dir.path(), false, kNow);
  EXPECT_EQ(text.code, kExitOk);
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  for (int i = 0; i < 8; ++i)
    EXPECT_NE(text.out.find("GPU-5f1c4a7e-0000-4000-8000-00000000000" + std::to_string(i)),
              std::string::npos)
        << text.out;
}

TEST(StatusCommandTest, OlderAgentWithoutCollectors) {
  TempDir dir;
  FakeApi api(dir.path(), FakeStatus(""));
  const Result json = Status(dir.path(), true, kNow);
  EXPECT_EQ(json.code, kExitOk);
  dom::parser parser;
  dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  ExpectDocumentedKeys(doc);
  for (const char* key : {"nvml", "scrape", "otlp"}) {
    EXPECT_EQ(doc["collectors"][key]["state"].get_string().value(), "unknown");
    EXPECT_NE(doc["collectors"][key]["reason"].get_string().value().find("older version"),
              std::string_view::npos);
  }
}

TEST(StatusCommandTest, AnotherAgentOnThePortIsNotOurs) {
  TempDir dir;
  FakeApi api(dir.path(), "{\"pid\": 1, \"version\": \"x\"}");  // answers for another pid
  const Result json = Status(dir.path(), true);
  EXPECT_EQ(json.code, kExitNotFound) << json.out;
  dom::parser parser;
  dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  EXPECT_TRUE(NotesContain(doc, "answers for pid 1")) << json.out;
}

TEST(StatusCommandTest, ParsersRejectNonObjectsAndTolerateOddFields) {
  EXPECT_FALSE(ParseAgentStatus("not json").ok());
  EXPECT_FALSE(ParseAgentStatus("[1, 2]").ok());
  EXPECT_FALSE(ParseProcesses("").ok());
  EXPECT_FALSE(ParseDevices("42").ok());
  auto s = ParseAgentStatus(
      R"({"pid": "12", "sessions": -1, "collectors": {"nvml": 7, "scrape": {"state": 3}}})");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->pid, 0);        // wrong type: default kept
  EXPECT_EQ(s->sessions, 0u);  // negative: not a count
  EXPECT_TRUE(s->has_collectors);
  EXPECT_EQ(s->nvml.state, "unknown");
  EXPECT_EQ(s->otlp.state, "off");  // left out: the agent has no such collector
  auto p = ParseProcesses(R"({"processes": [1, {"pid": 9}]})");
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), 1u);  // the non-object is skipped
  EXPECT_EQ((*p)[0].pid, 9u);
  auto d = ParseDevices(R"({"devices": {"not": "an array"}})");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->empty());
}

}  // namespace
}  // namespace inferscope::cli
