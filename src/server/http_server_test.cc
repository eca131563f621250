// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/server/http_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <simdjson.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "src/base/json_writer.h"
#include "src/net/agent_endpoints.h"
#include "src/query/range_query.h"
#include "src/report/report.h"
#include "src/server/api_routes.h"
#include "src/store/sqlite_store.h"
#include "src/telemetry/nvml/gpu_metrics_window.h"
#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"
#include "tests/temp_dir.h"

namespace inferscope::server {
namespace {

using ::inferscope::testing::TempDir;

constexpr int64_t kSec = 1'000'000'000;

simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& body) {
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(body).get(doc), simdjson::SUCCESS) << body;
  return doc;
}

TEST(HttpServerTest, RoutesErrorsAndExceptions) {
  HttpServer server;
  server.Get("/hello", [](const HttpRequest& req) {
    HttpResponse r;
    const std::string* name = req.Param("name");
    r.body = "hello " + (name ? *name : std::string("?"));
    r.content_type = "text/plain";
    return r;
  });
  server.Post("/echo", [](const HttpRequest& req) {
    HttpResponse r;
    r.body = req.content_type + "|" + req.body;
    return r;
  });
  server.Get("/throws",
             [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok()) << port.status().message();
  httplib::Client client("127.0.0.1", *port);
  auto r = client.Get("/hello?name=a%20b");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello a b");
  r = client.Post("/echo", "payload", "application/x-protobuf");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "application/x-protobuf|payload");
  r = client.Get("/throws");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("boom"), std::string::npos);
  r = client.Get("/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(r->body.find("no such endpoint"), std::string::npos);
  r = client.Get("/hello/extra");  // exact paths only
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  server.Stop();
  EXPECT_FALSE(client.Get("/hello"));
}

// docs/agent.md: every error is JSON, the ones cpp-httplib answers itself included; a known path
// asked with the wrong method is 405 with Allow, not 404.
TEST(HttpServerTest, WrongMethodIs405AndEveryErrorIsJson) {
  HttpServer server(2, /*max_body_bytes=*/100);
  server.Get("/both", [](const HttpRequest&) { return HttpResponse(); });
  server.Post("/both", [](const HttpRequest&) { return HttpResponse(); });
  server.Post("/post-only", [](const HttpRequest&) { return HttpResponse(); });
  server.Get("/fails",
             [](const HttpRequest&) { return JsonError(base::UnavailableError("store busy")); });
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok()) << port.status().message();
  httplib::Client client("127.0.0.1", *port);
  simdjson::dom::parser parser;
  auto is_json_error = [&](const httplib::Result& r) {
    simdjson::dom::element doc = Parse(parser, r->body);
    std::string_view error;
    return doc["error"].get(error) == simdjson::SUCCESS && !error.empty();
  };
  auto r = client.Get("/post-only");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  EXPECT_TRUE(is_json_error(r)) << r->body;
  r = client.Delete("/both");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "GET, POST");
  EXPECT_TRUE(is_json_error(r)) << r->body;
  r = client.Post("/both", std::string(1000, 'x'), "text/plain");  // above max_body_bytes
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(is_json_error(r)) << r->body;
  r = client.Get("/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_TRUE(is_json_error(r)) << r->body;
  // A handler's error keeps its body; the error model's code picks the status.
  r = client.Get("/fails");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find("store busy"), std::string::npos);
  server.Stop();
}

TEST(HttpServerTest, HttpStatusFollowsTheErrorModel) {
  EXPECT_EQ(HttpStatusFor(base::InvalidArgumentError("x")), 400);
  EXPECT_EQ(HttpStatusFor(base::NotFoundError("x")), 404);
  EXPECT_EQ(HttpStatusFor(base::AlreadyExistsError("x")), 409);
  EXPECT_EQ(HttpStatusFor(base::UnavailableError("x")), 503);
  EXPECT_EQ(HttpStatusFor(base::DataLossError("x")), 500);
  EXPECT_EQ(HttpStatusFor(base::InternalError("x")), 500);
}

// A route can ask the client not to reuse the connection (the OTLP receiver does: an SDK exporting
// every 5 s on a connection the server closes after 5 s idle had its export cut: "socket hang up").
TEST(HttpServerTest, CloseConnectionIsAnnounced) {
  HttpServer server;
  server.Post("/once", [](const HttpRequest&) {
    HttpResponse r;
    r.close_connection = true;
    return r;
  });
  server.Post("/kept", [](const HttpRequest&) { return HttpResponse(); });
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok()) << port.status().message();
  httplib::Client client("127.0.0.1", *port);
  client.set_keep_alive(true);
  auto r = client.Post("/once", "x", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Connection"), "close");
  r = client.Post("/kept", "x", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->get_header_value("Connection"), "close");
  server.Stop();
}

// A file body (a capture's trace) is streamed a piece at a time, byte for byte; a file that
// cannot be read is a JSON 500.
TEST(HttpServerTest, AFileBodyIsStreamedWhole) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/trace.bin";
  std::string content;
  for (int i = 0; i < (3 << 20) + 12345; ++i) content.push_back(static_cast<char>(i * 7 + i / 251));
  {
    std::ofstream f(path, std::ios::binary);
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
  }
  HttpServer server;
  server.Get("/file", [&](const HttpRequest&) {
    HttpResponse r;
    r.body_file = path;
    r.content_type = "application/octet-stream";
    return r;
  });
  server.Get("/missing", [&](const HttpRequest&) {
    HttpResponse r;
    r.body_file = dir.path() + "/nope";
    return r;
  });
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok()) << port.status().message();
  httplib::Client client("127.0.0.1", *port);
  auto r = client.Get("/file");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/octet-stream");
  ASSERT_EQ(r->body.size(), content.size());
  EXPECT_TRUE(r->body == content);
  r = client.Get("/missing");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("cannot read"), std::string::npos) << r->body;
  server.Stop();
}

TEST(HttpServerTest, TakenPortFailsOrFallsBack) {
  HttpServer first;
  auto port = first.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok());
  HttpServer strict;
  EXPECT_FALSE(strict.Start("127.0.0.1", *port, false).ok());
  HttpServer lenient;
  auto other = lenient.Start("127.0.0.1", *port, true);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *port);
}

TEST(HttpServerTest, StopRightAfterStartDoesNotHang) {
  for (int i = 0; i < 20; ++i) {
    HttpServer server;
    ASSERT_TRUE(server.Start("127.0.0.1", 0, false).ok());
    server.Stop();
  }
}

// ---- What keeps the listener alive under slow and idle clients (docs/agent.md) ----

// A raw loopback connection, for sending exactly the bytes a test wants.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // What arrives within `timeout_ms`, until the peer closes or `until` appears.
  std::string Read(int timeout_ms, const std::string& until = "") {
    std::string got;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      got.append(buf, static_cast<size_t>(n));
      if (!until.empty() && got.find(until) != std::string::npos) break;
    }
    return got;
  }
  bool closed() const { return closed_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

std::string StatusLine(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

HttpResponse Ok(const HttpRequest&) {
  HttpResponse r;
  r.body = "{\"ok\": true}";
  return r;
}

// Two connections sending a header byte every 3 s froze the listener
// (cpp-httplib 0.11: one blocking worker per connection, a per-read timeout). Slow and idle
// clients now hold no worker: with a single worker, 16 drippers and 40 silent connections, a
// request still answers at once.
TEST(HttpServerLimitsTest, SlowAndIdleClientsHoldNoWorker) {
  HttpServerOptions options;
  options.worker_threads = 1;
  HttpServer server(options);
  server.Get("/status", &Ok);
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok()) << port.status().message();
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(std::make_unique<RawClient>(*port));
    ASSERT_TRUE(slow.back()->Send("GET /status HTTP/1.1\r\nHost: x\r\nX-Slow: a"));
  }
  for (int i = 0; i < 40; ++i) slow.push_back(std::make_unique<RawClient>(*port));
  httplib::Client client("127.0.0.1", *port);
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto r = client.Get("/status");
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(took, std::chrono::milliseconds(1000));
    for (size_t j = 0; j < 16; ++j) slow[j]->Send("a");  // they keep dripping
  }
  server.Stop();
}

// A request has a deadline from the moment the connection waits for it: a dripper is closed
// once it is up, however regularly it sends; so is an idle keep-alive connection.
TEST(HttpServerLimitsTest, ARequestThatDoesNotArriveInTimeIsCut) {
  HttpServerOptions options;
  options.request_deadline = std::chrono::milliseconds(400);
  HttpServer server(options);
  server.Get("/status", &Ok);
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok());
  RawClient dripper(*port);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 30 && !dripper.closed(); ++i) {
    dripper.Send("G");
    dripper.Read(50);
  }
  EXPECT_TRUE(dripper.closed());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1200));
  EXPECT_GE(server.counters().deadline_exceeded, 1u);

  RawClient kept(*port);
  ASSERT_TRUE(kept.Send("GET /status HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(StatusLine(kept.Read(1000, "}")), "HTTP/1.1 200 OK");
  kept.Read(1500);  // idle after its answer: the next request's deadline closes it
  EXPECT_TRUE(kept.closed());
  server.Stop();
}

// At the connection cap the connection that has waited longest for its request is closed to
// make room; a newcomer is served.
TEST(HttpServerLimitsTest, AtTheCapTheOldestWaitingConnectionGoesFirst) {
  HttpServerOptions options;
  options.max_connections = 4;
  HttpServer server(options);
  server.Get("/status", &Ok);
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok());
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<RawClient>(*port));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a known order
  }
  RawClient fresh(*port);
  ASSERT_TRUE(fresh.Send("GET /status HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(StatusLine(fresh.Read(1000, "}")), "HTTP/1.1 200 OK");
  idle[0]->Read(500);
  EXPECT_TRUE(idle[0]->closed());  // the oldest
  idle[1]->Read(50);
  EXPECT_FALSE(idle[1]->closed());
  EXPECT_EQ(server.counters().evicted, 1u);
  server.Stop();
}

TEST(HttpServerLimitsTest, HeaderCountAndSizeAreCapped) {
  HttpServer server;
  server.Get("/status", &Ok);
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok());
  std::string many = "GET /status HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 150; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  RawClient a(*port);
  ASSERT_TRUE(a.Send(many + "\r\n"));
  const std::string answer = a.Read(1000, "}");
  EXPECT_EQ(StatusLine(answer), "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_NE(answer.find("\"error\""), std::string::npos) << answer;
  RawClient b(*port);
  ASSERT_TRUE(
      b.Send("GET /status HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(40000, 'b') + "\r\n\r\n"));
  EXPECT_EQ(StatusLine(b.Read(1000, "}")), "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_EQ(server.counters().too_large, 2u);
  server.Stop();
}

// A refused request's unread body does not reset the connection before the client has read the
// answer; a client that waits for 100 Continue gets it.
TEST(HttpServerLimitsTest, RefusedBodiesAndExpectContinue) {
  HttpServer server;
  server.SetGate([](const HttpRequest& req) -> std::optional<HttpResponse> {
    if (req.Header("authorization") == nullptr) return JsonError(401, "no");
    return std::nullopt;
  });
  server.Post("/upload", [](const HttpRequest& req) {
    HttpResponse r;
    r.body = std::to_string(req.body.size());
    return r;
  });
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok());
  const std::string body(2u << 20, 'x');
  RawClient refused(*port);
  ASSERT_TRUE(refused.Send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n"));
  refused.Send(body);  // the server reads none of it
  EXPECT_EQ(StatusLine(refused.Read(2000, "}")), "HTTP/1.1 401 Unauthorized");

  RawClient curl(*port);
  ASSERT_TRUE(
      curl.Send("POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: y\r\n"
                "Expect: 100-continue\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n"));
  EXPECT_EQ(StatusLine(curl.Read(500, "\r\n\r\n")), "HTTP/1.1 100 Continue");
  ASSERT_TRUE(curl.Send(body));
  const std::string answer = curl.Read(2000, std::to_string(body.size()));
  EXPECT_NE(answer.find("HTTP/1.1 200 OK"), std::string::npos) << answer.substr(0, 200);
  server.Stop();
}

TEST(HttpServerLimitsTest, TargetsAreDecoded) {
  std::string path;
  std::multimap<std::string, std::string> params;
  ASSERT_TRUE(http_internal::ParseTarget("/a%20b?x=1&y=a+b%2Bc&flag&=v&z=%zz", &path, &params));
  EXPECT_EQ(path, "/a b");
  EXPECT_EQ(params.find("x")->second, "1");
  EXPECT_EQ(params.find("y")->second, "a b+c");
  EXPECT_EQ(params.find("flag")->second, "");
  EXPECT_EQ(params.find("")->second, "v");
  EXPECT_EQ(params.find("z")->second, "%zz");
  EXPECT_FALSE(http_internal::ParseTarget("http://example.com/", &path, &params));
  EXPECT_FALSE(http_internal::ParseTarget("", &path, &params));
  HttpRequest r;
  EXPECT_EQ(http_internal::ParseRequest("GET /p?q=1 HTTP/1.1\r\nHoSt: h\r\n\r\n",
                                        HttpServerOptions{}, &r),
            200);
  EXPECT_EQ(r.path, "/p");
  EXPECT_EQ(*r.Header("host"), "h");
  EXPECT_EQ(http_internal::ParseRequest("GET /p HTTP/1.1\r\nHost:", HttpServerOptions{}, &r), 0);
  EXPECT_EQ(http_internal::ParseRequest("BAD\r\n\r\n", HttpServerOptions{}, &r), 400);
}

// A store with two processes (ranks 0 and 1), three windows each.
class ApiRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::SqliteStore::Open(dir_.path(), store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    for (int rank = 0; rank < 2; ++rank) {
      wire::Hello hello;
      hello.pid = 100 + rank;
      hello.rank = rank;
      hello.world_size = 2;
      hello.hostname = "gpu-node-1";
      hello.process_start_unix_ns = kStart;
      auto id = (*store)->UpsertProcess(hello, kStart);
      ASSERT_TRUE(id.ok());
      for (int i = 0; i < 3; ++i) {
        model::ProfileWindow w = wire::testing::FullWindow();
        w.processes.resize(1);
        w.processes[0].pid = hello.pid;
        w.processes[0].rank = rank;
        w.start_ns = kStart + i * 10 * kSec;
        w.end_ns = w.start_ns + 10 * kSec;
        store::PendingWindow p;
        p.process_id = *id;
        p.start_ns = w.start_ns;
        p.end_ns = w.end_ns;
        p.received_ns = w.end_ns + kSec;
        wire::EncodeWindow(w, &p.encoded);
        ASSERT_TRUE((*store)->AppendWindow(p).ok());
      }
    }
    ApiContext ctx;
    ctx.state_dir = dir_.path();
    ctx.now_unix_ns = [] { return kStart + 60 * kSec; };
    ctx.snapshot = [] {
      AgentSnapshot s;
      s.pid = 42;
      s.counters.windows_stored = 6;
      return s;
    };
    AddApiRoutes(&server_, ctx);
    // The routes the agent adds beside the API (src/agentd/agent.cc).
    server_.Post("/api/v1/watch", [](const HttpRequest&) { return HttpResponse(); });
    server_.Get("/metrics", [](const HttpRequest&) { return HttpResponse(); });
    server_.Post("/v1/traces", [](const HttpRequest&) { return HttpResponse(); });
    auto port = server_.Start("127.0.0.1", 0, false);
    ASSERT_TRUE(port.ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
  }

  std::string Get(const std::string& path, int want_status = 200) {
    auto r = client_->Get(path.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, want_status) << path << ": " << r->body;
    return r->body;
  }

  static constexpr int64_t kStart = 1'800'000'000 * kSec;
  TempDir dir_;
  HttpServer server_;
  std::unique_ptr<httplib::Client> client_;
  simdjson::dom::parser parser_;
};

TEST_F(ApiRoutesTest, ListsProcessesHostsWindowsAndDevices) {
  auto doc = Parse(parser_, Get("/api/v1/processes?last=1h"));
  simdjson::dom::array processes = doc["processes"];
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(int64_t(processes.at(0)["pid"]), 100);
  EXPECT_EQ(int64_t(processes.at(1)["rank"]), 1);
  EXPECT_EQ(int64_t(processes.at(1)["windows"]), 3);
  EXPECT_EQ(std::string_view(processes.at(0)["hostname"]), "gpu-node-1");

  doc = Parse(parser_, Get("/api/v1/hosts?last=1h"));
  simdjson::dom::array hosts = doc["hosts"];
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(int64_t(hosts.at(0)["processes"]), 2);
  EXPECT_EQ(int64_t(hosts.at(0)["windows"]), 6);

  // The second window of each process only: [start+10 s, start+20 s).
  const std::string range =
      "from=" + std::to_string(kStart / kSec + 10) + "&to=" + std::to_string(kStart / kSec + 20);
  doc = Parse(parser_, Get("/api/v1/windows?" + range));
  simdjson::dom::array windows = doc["windows"];
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(int64_t(windows.at(0)["start_unix_ns"]), kStart + 10 * kSec);
  EXPECT_FALSE(bool(doc["truncated"]));
  doc = Parse(parser_, Get("/api/v1/windows?last=1h&rank=1&limit=2"));
  EXPECT_EQ(simdjson::dom::array(doc["windows"]).size(), 2u);
  EXPECT_TRUE(bool(doc["truncated"]));

  doc = Parse(parser_, Get("/api/v1/devices?last=1h&pid=101"));
  simdjson::dom::array devices = doc["devices"];
  ASSERT_EQ(devices.size(), 2u);  // FullWindow's process has two devices
  EXPECT_EQ(int64_t(devices.at(0)["windows"]), 3);
  EXPECT_EQ(int64_t(devices.at(0)["rank"]), 1);
}

TEST_F(ApiRoutesTest, ProfileIsTheReportOfTheRange) {
  const std::string body = Get("/api/v1/profile?last=1h&top=5");
  auto store = store::SqliteStore::Open(dir_.path(), store::SqliteStore::Mode::kReadOnly);
  ASSERT_TRUE(store.ok());
  query::RangeQuery q;
  q.from_ns = kStart + 60 * kSec - 3600 * kSec;
  q.now_ns = kStart + 60 * kSec;  // the API's clock: the open-ended range is reported up to it
  q.top = 5;
  auto profile = query::QueryRangeProfile(**store, q, "store:" + dir_.path());
  ASSERT_TRUE(profile.ok());
  EXPECT_EQ(profile->windows, 6u);
  EXPECT_EQ(body, query::RenderRangeReport(*profile, report::ReportFormat::kJson));
  EXPECT_NE(body.find("\"gpu_metrics\": null"), std::string::npos);  // none collected
  const std::string text = Get("/api/v1/profile?last=1h&format=text");
  EXPECT_NE(text.find("ranks: 4 (processes 2)"), std::string::npos) << text.substr(0, 400);
  Get("/api/v1/profile?from=" + std::to_string(kStart / kSec - 100) +
          "&to=" + std::to_string(kStart / kSec - 50),
      404);
}

// A filter matching nothing answered 200 with a "healthy" report (the range's GPU
// metrics made it non-empty). Now 404 with a JSON error and what the range does hold.
TEST_F(ApiRoutesTest, ProfileMatchingNoGpuActivityIs404WithWhatTheRangeHolds) {
  {
    auto store = store::SqliteStore::Open(dir_.path(), store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    telemetry::GpuMetricsWindow g;
    g.start_unix_ns = kStart;
    g.end_unix_ns = kStart + 10 * kSec;
    telemetry::GpuDeviceWindow& d = g.devices.emplace_back();
    d.index = 0;
    d.uuid = "GPU-0";
    d.samples = 10;
    base::JsonWriter w;
    g.WriteJson(w);
    ASSERT_TRUE(
        (*store)->AppendTelemetry({"gpu", kStart, kStart + 10 * kSec, kStart, w.str()}).ok());
  }
  for (const std::string filter : {"rank=7", "device=5", "pid=1"}) {
    const std::string body = Get("/api/v1/profile?last=1h&" + filter, 404);
    auto doc = Parse(parser_, body);
    std::string want = "no GPU activity matched " + filter + " in the range";
    want[want.find('=')] = ' ';
    EXPECT_EQ(std::string_view(doc["error"]), want) << body;
    simdjson::dom::array holds = doc["range_holds"];
    ASSERT_EQ(holds.size(), 3u) << body;
    EXPECT_EQ(std::string_view(holds.at(0))
                  .rfind("pid 100, rank 0 on gpu-node-1: GPU 0, 1; 3 "
                         "windows, ",
                         0),
              0u)
        << body;
    EXPECT_EQ(std::string_view(holds.at(2)), "host telemetry: GPU metrics of GPU 0") << body;
  }
  // A filter that matches still reports, its GPU metrics limited to the matched GPUs.
  const std::string body = Get("/api/v1/profile?last=1h&rank=0&device=1");
  EXPECT_NE(body.find("\"gpu_metrics\": null"), std::string::npos);  // GPU 1 has none
}

TEST_F(ApiRoutesTest, BadParametersAre400AndStatusWorks) {
  EXPECT_NE(Get("/api/v1/windows?last=abc", 400).find("last"), std::string::npos);
  EXPECT_NE(Get("/api/v1/windows?from=yesterday", 400).find("from"), std::string::npos);
  EXPECT_NE(Get("/api/v1/windows?pid=x", 400).find("pid"), std::string::npos);
  EXPECT_NE(Get("/api/v1/profile?format=xml", 400).find("format"), std::string::npos);
  Get("/api/v1/windows?from=200&to=100", 400);
  auto doc = Parse(parser_, Get("/api/v1/status"));
  EXPECT_EQ(int64_t(doc["pid"]), 42);
  EXPECT_EQ(int64_t(doc["windows_stored"]), 6);
  doc = Parse(parser_, Get("/api/v1"));
  EXPECT_GE(simdjson::dom::array(doc["endpoints"]).size(), 6u);
}

// The API's `top` takes what `--top` takes (1..kMaxTop), no less.
TEST_F(ApiRoutesTest, TopLimitsMatchTheCli) {
  Get("/api/v1/profile?last=1h&top=5000");
  Get("/api/v1/profile?last=1h&top=" + std::to_string(query::kMaxTop));
  EXPECT_NE(Get("/api/v1/profile?last=1h&top=0", 400).find("top"), std::string::npos);
  EXPECT_NE(
      Get("/api/v1/profile?last=1h&top=" + std::to_string(query::kMaxTop + 1), 400).find("top"),
      std::string::npos);
}

// The index lists every route the server has, the ones added beside the API routes too.
TEST_F(ApiRoutesTest, IndexListsEveryEndpoint) {
  simdjson::dom::element doc = Parse(parser_, Get("/api/v1"));
  std::set<std::string> listed;
  for (simdjson::dom::element e : simdjson::dom::array(doc["endpoints"]))
    listed.insert(std::string(std::string_view(e)));
  for (const char* want : {"GET /api/v1", "GET /api/v1/status", "GET /api/v1/hosts",
                           "GET /api/v1/processes", "GET /api/v1/devices", "GET /api/v1/windows",
                           "GET /api/v1/profile", "GET /api/v1/timeseries", "GET /api/v1/compare",
                           "POST /api/v1/watch", "GET /metrics", "POST /v1/traces"})
    EXPECT_EQ(listed.count(want), 1u) << want;
  EXPECT_EQ(listed.size(), 12u);
}

// GPU metrics rows at 0 s and 5 s (one step of 10 s) and 10 s (the next): each step holds the
// merge of the rows starting in it; a device filter keeps that GPU.
TEST_F(ApiRoutesTest, TimeseriesMergesTheTelemetryRowsOfEachStep) {
  {
    auto store = store::SqliteStore::Open(dir_.path(), store::SqliteStore::Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    int value = 10;
    for (int64_t at : {0, 5, 10}) {
      telemetry::GpuMetricsWindow w;
      w.start_unix_ns = kStart + at * kSec;
      w.end_unix_ns = w.start_unix_ns + 5 * kSec;
      for (int32_t index : {0, 1}) {
        telemetry::GpuDeviceWindow& d = w.devices.emplace_back();
        d.index = index;
        d.uuid = "GPU-" + std::to_string(index);
        d.samples = 1;
        d.metrics["power_w"].unit = "W";
        d.metrics["power_w"].Add(value + index);
      }
      value += 10;
      store::TelemetryRecord r;
      r.kind = "gpu";
      r.start_ns = w.start_unix_ns;
      r.end_ns = w.end_unix_ns;
      r.received_ns = r.end_ns;
      base::JsonWriter jw;
      w.WriteJson(jw);
      r.json = jw.str();
      ASSERT_TRUE((*store)->AppendTelemetry(r).ok());
    }
  }
  const std::string from = std::to_string(kStart / kSec), to = std::to_string(kStart / kSec + 30);
  simdjson::dom::element doc =
      Parse(parser_, Get("/api/v1/timeseries?from=" + from + "&to=" + to + "&steps=3"));
  EXPECT_EQ(int64_t(doc["step_ns"]), 10 * kSec);
  EXPECT_EQ(int64_t(doc["from_unix_ns"]), kStart);
  EXPECT_EQ(uint64_t(doc["rows"]), 3u);
  simdjson::dom::array steps = doc["steps"];
  ASSERT_EQ(steps.size(), 3u);
  auto power = [](simdjson::dom::element step, size_t device) {
    return simdjson::dom::array(step["gpu_metrics"]["devices"]).at(device)["metrics"]["power_w"];
  };
  EXPECT_EQ(int64_t(steps.at(0)["start_unix_ns"]), kStart);
  EXPECT_EQ(uint64_t(power(steps.at(0), 0)["samples"]), 2u);  // the rows at 0 s and 5 s
  EXPECT_EQ(double(power(steps.at(0), 0)["sum"]), 30.0);
  EXPECT_EQ(double(power(steps.at(0), 1)["max"]), 21.0);
  EXPECT_EQ(uint64_t(power(steps.at(1), 0)["samples"]), 1u);
  EXPECT_EQ(double(power(steps.at(1), 0)["sum"]), 30.0);
  EXPECT_TRUE(steps.at(2)["gpu_metrics"].is_null());
  EXPECT_TRUE(steps.at(0)["engine"].is_null());
  // Idle causes: each 10 s step holds one window of each of the two processes.
  model::IdleCauseStats want;
  const model::ProfileWindow full = wire::testing::FullWindow();  // outlives the loop
  for (const model::DeviceProfile& d : full.processes[0].devices) want.Merge(d.idle_causes);
  ASSERT_GT(want.total_ns(), 0);
  for (size_t step = 0; step < 3; ++step)
    for (size_t c = 0; c < model::kIdleCauseCount; ++c)
      EXPECT_EQ(int64_t(steps.at(step)["idle_causes_ns"][model::kIdleCauseNames[c]]),
                2 * want.ns[c])
          << step << " " << model::kIdleCauseNames[c];
  simdjson::dom::parser other;
  simdjson::dom::element one =
      Parse(other, Get("/api/v1/timeseries?from=" + from + "&to=" + to + "&steps=3&device=1"));
  simdjson::dom::array devices = simdjson::dom::array(one["steps"]).at(0)["gpu_metrics"]["devices"];
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(int64_t(devices.at(0)["index"]), 1);
  Get("/api/v1/timeseries?steps=0", 400);
  Get("/api/v1/timeseries?steps=1001", 400);
}

// Compare is `diff` over two store ranges: the same windows on both sides change nothing.
TEST_F(ApiRoutesTest, CompareJudgesTwoRanges) {
  const int64_t s = kStart / kSec;
  auto range = [&](int64_t a, int64_t b) {
    return std::to_string(s + a) + "&to=" + std::to_string(s + b);
  };
  simdjson::dom::element doc =
      Parse(parser_, Get("/api/v1/compare?from=" + range(0, 30) + "&b_from=" + std::to_string(s) +
                         "&b_to=" + std::to_string(s + 30)));
  EXPECT_EQ(int64_t(doc["baseline"]["from_unix_ns"]), kStart);
  EXPECT_EQ(int64_t(doc["candidate"]["to_unix_ns"]), kStart + 30 * kSec);
  simdjson::dom::element c = doc["comparison"];
  EXPECT_FALSE(bool(c["regression"]));
  EXPECT_GT(simdjson::dom::array(c["changes"]).size(), 0u);
  for (simdjson::dom::element m : simdjson::dom::array(c["changes"]))
    EXPECT_FALSE(bool(m["significant"])) << std::string_view(m["key"]);
  Get("/api/v1/compare?from=" + range(0, 30), 400);  // no baseline
  Get("/api/v1/compare?from=" + range(0, 30) + "&b_from=" + std::to_string(s - 600) +
          "&b_to=" + std::to_string(s - 300),
      404);  // nothing in the baseline
  Get("/api/v1/compare?from=" + range(0, 30) + "&b_from=1&b_to=2&device=0", 400);
}

// The price per GPU-hour of /api/v1/profile fills the report's cost section.
TEST_F(ApiRoutesTest, ProfileCostWithAPrice) {
  simdjson::dom::element doc = Parse(parser_, Get("/api/v1/profile?last=10m&gpu_hourly_cost=2"));
  EXPECT_EQ(double(doc["cost"]["usd_per_hour"]), 4.0);  // 2 GPUs
  simdjson::dom::parser other;
  EXPECT_TRUE(Parse(other, Get("/api/v1/profile?last=10m"))["cost"].is_null());
  Get("/api/v1/profile?last=10m&gpu_hourly_cost=abc", 400);
  Get("/api/v1/profile?last=10m&gpu_hourly_cost=-1", 400);
}

TEST(ApiRoutesNoStoreTest, MissingStoreIs404) {
  TempDir dir;
  HttpServer server;
  ApiContext ctx;
  ctx.state_dir = dir.path() + "/none";
  AddApiRoutes(&server, ctx);
  auto port = server.Start("127.0.0.1", 0, false);
  ASSERT_TRUE(port.ok());
  httplib::Client client("127.0.0.1", *port);
  auto r = client.Get("/api/v1/processes");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

// URL splitting moved to the shared client: src/net/http_client_test.cc.
TEST(AgentEndpointsTest, MissingFileIsNotFound) {
  TempDir dir;
  EXPECT_EQ(net::ReadAgentEndpoints(dir.path()).status().code(), base::StatusCode::kNotFound);
}

}  // namespace
}  // namespace inferscope::server
