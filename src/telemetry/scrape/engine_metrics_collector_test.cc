// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// End to end: real HTTP servers on 127.0.0.1 (ephemeral ports) in this test process, found by
// discovery from this process's own listening sockets in the real /proc.
#include "src/telemetry/scrape/engine_metrics_collector.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/temp_dir.h"

namespace inferscope::telemetry::scrape {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kT0 = 1'760'000'000 * kSecond;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string VllmSample() {
  const auto path = std::filesystem::path(INFERSCOPE_SOURCE_DIR) / ".." / "shared" / "reference" /
                    "vllm-metrics-sample.txt";
  return std::filesystem::exists(path) ? ReadFile(path) : "";
}

std::string EngineData(const std::string& name) {
  return ReadFile(std::filesystem::path(INFERSCOPE_SOURCE_DIR) / "tests/data/engine_metrics" /
                  name);
}

// An httplib server on 127.0.0.1:<ephemeral> serving fixed bodies (registered with Serve before
// Start), stopped on destruction.
class TestServer {
 public:
  void Start(const char* host = "127.0.0.1") {
    port_ = server_.bind_to_any_port(host);
    if (port_ < 0) return;
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 500 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~TestServer() { Stop(); }
  void Stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  void Serve(const std::string& path, std::string body, std::string type = "text/plain") {
    server_.Get(path, [body = std::move(body), type = std::move(type), this](
                          const httplib::Request&, httplib::Response& res) {
      ++hits_;
      res.set_content(body, type.c_str());
    });
  }
  int port() const { return port_; }
  int hits() const { return hits_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::atomic<int> hits_{0};
};

// A TCP socket that listens on loopback but never speaks (like a NCCL or ZMQ port).
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 4);
  }
  ~SilentListener() { ::close(fd_); }
  int port() const {
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    return ntohs(addr.sin_port);
  }

 private:
  int fd_;
};

EngineMetricsOptions FastOptions() {
  EngineMetricsOptions o;
  o.probe_timeout_ms = 200;
  o.fetch.connect_timeout_ms = 500;
  o.fetch.read_timeout_ms = 500;
  return o;
}

TEST(EngineMetricsCollectorTest, DiscoversTheVllmSampleFromOwnListeningSocket) {
  const std::string sample = VllmSample();
  if (sample.empty()) GTEST_SKIP() << "../shared/reference/vllm-metrics-sample.txt not found";
  SilentListener silent;  // probed first or not: either way it must not stop discovery
  TestServer json;        // an HTTP server that is not Prometheus
  json.Serve("/metrics", "{\"iterations\": []}", "application/json");
  json.Start();
  TestServer server;
  server.Serve("/metrics", sample);
  server.Start();
  ASSERT_GT(server.port(), 0);

  EngineMetricsCollector collector(FastOptions());
  collector.Poll(kT0);
  EXPECT_FALSE(collector.ok());
  EXPECT_NE(collector.health().find("no profiled processes yet"), std::string::npos)
      << collector.health();

  collector.SetRootPids({int(::getpid())});
  collector.Poll(kT0 + kSecond);
  ASSERT_TRUE(collector.ok()) << collector.health();
  EXPECT_EQ(collector.endpoint(), "http://127.0.0.1:" + std::to_string(server.port()) + "/metrics");
  EXPECT_NE(collector.health().find("ok: scraping vllm metrics"), std::string::npos);
  // Scrapes follow a grid half an interval off the interval's multiples: the next is due at
  // kT0 + 1.5 s (kT0 is a whole second), so a poll before it does not scrape.
  collector.Poll(kT0 + kSecond + kSecond / 4);
  EXPECT_EQ(server.hits(), 1);
  collector.Poll(kT0 + 2 * kSecond);
  collector.Poll(kT0 + 3 * kSecond);
  EXPECT_EQ(server.hits(), 3);
  ASSERT_TRUE(collector.ok()) << collector.health();

  const EngineMetricsWindow w = collector.TakeWindow(kT0, kT0 + 10 * kSecond);
  EXPECT_EQ(w.engine, "vllm");
  EXPECT_EQ(w.scrapes, 3u);
  EXPECT_EQ(w.covered_ns, 2 * kSecond);
  EXPECT_EQ(w.counter(CounterSignal::kRequestsFinished), 0);  // same body: no deltas
  EXPECT_EQ(w.gauge(GaugeSignal::kRunningRequests).samples, 3u);
  EXPECT_EQ(w.gauge(GaugeSignal::kRunningRequests).max, 8);
  EXPECT_EQ(w.model_names.size(), 4u);
}

TEST(EngineMetricsCollectorTest, FindsTrtllmServeOnPrometheusMetricsPath) {
  TestServer server;
  server.Serve("/metrics", "[{\"iter\": 1}]", "application/json");  // trtllm-serve's JSON stats
  server.Serve("/prometheus/metrics", EngineData("trtllm.txt"));
  server.Start();
  EngineMetricsCollector collector(FastOptions());
  collector.SetRootPids({int(::getpid())});
  collector.Poll(kT0);
  ASSERT_TRUE(collector.ok()) << collector.health();
  EXPECT_EQ(collector.endpoint(),
            "http://127.0.0.1:" + std::to_string(server.port()) + "/prometheus/metrics");
  EXPECT_EQ(collector.TakeWindow(kT0, kT0 + kSecond).engine, "tensorrt_llm");
}

TEST(EngineMetricsCollectorTest, SaysWhyNothingWasFound) {
  TestServer server;
  server.Serve("/metrics", "# TYPE up gauge\nup 1\n");  // Prometheus text, no engine
  server.Start();
  EngineMetricsCollector collector(FastOptions());
  collector.SetRootPids({int(::getpid())});
  collector.Poll(kT0);
  EXPECT_FALSE(collector.ok());
  const std::string health = collector.health();
  EXPECT_EQ(health.rfind("off: no engine metrics", 0), 0u) << health;
  EXPECT_NE(health.find(std::to_string(server.port())), std::string::npos) << health;
  EXPECT_NE(health.find("serves Prometheus text of no known engine"), std::string::npos) << health;
  EXPECT_NE(health.find("--metrics-url"), std::string::npos) << health;
  // No new discovery before the interval unless the pids change.
  const int hits = server.hits();
  collector.Poll(kT0 + kSecond);
  EXPECT_EQ(server.hits(), hits);
}

TEST(EngineMetricsCollectorTest, NoListeningPortsInAFakeProcTree) {
  testing::TempDir dir;
  std::filesystem::create_directories(std::filesystem::path(dir.path()) / "42" / "fd");
  std::ofstream(std::filesystem::path(dir.path()) / "42" / "stat") << "42 (x) S 1 0\n";
  EngineMetricsOptions options = FastOptions();
  options.proc_root = dir.path();
  EngineMetricsCollector collector(options);
  collector.SetRootPids({42});
  collector.Poll(kT0);
  EXPECT_EQ(collector.health(),
            "off: no listening TCP ports in pids 42; is the engine's HTTP server among the "
            "profiled processes? Otherwise pass --metrics-url");
}

TEST(EngineMetricsCollectorTest, ConfiguredUrlOverridesDiscoveryAndReportsFailures) {
  TestServer server;
  server.Serve("/custom", EngineData("sglang.txt"));
  server.Start();
  EngineMetricsOptions options = FastOptions();
  options.metrics_url = "http://127.0.0.1:" + std::to_string(server.port()) + "/custom";
  EngineMetricsCollector collector(options);
  collector.Poll(kT0);  // no pids needed
  ASSERT_TRUE(collector.ok()) << collector.health();
  EXPECT_EQ(collector.endpoint(), options.metrics_url);
  server.Stop();
  for (int i = 1; i <= 4; ++i) collector.Poll(kT0 + i * kSecond);
  EXPECT_FALSE(collector.ok());
  EXPECT_EQ(collector.health().rfind("degraded: " + options.metrics_url, 0), 0u)
      << collector.health();
  EXPECT_NE(collector.health().find("(4 failures in a row); check --metrics-url"),
            std::string::npos)
      << collector.health();
  const EngineMetricsWindow w = collector.TakeWindow(kT0, kT0 + 10 * kSecond);
  EXPECT_EQ(w.engine, "sglang");
  EXPECT_EQ(w.scrapes, 1u);
  EXPECT_EQ(w.scrape_failures, 4u);

  options.metrics_url = "https://example.com/metrics";
  EngineMetricsCollector bad(options);
  bad.Poll(kT0);
  EXPECT_NE(bad.health().find("https is not supported"), std::string::npos) << bad.health();
}

// A server that counts every GET it is sent, and answers the second one after the scraper gave
// up: served = scrapes + abandoned, per target, in the windows and in targets().
TEST(EngineMetricsCollectorTest, CountsAbandonedGetsPerTarget) {
  httplib::Server server;
  std::atomic<int> hits{0};
  const std::string body = EngineData("sglang.txt");
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    if (++hits == 2) std::this_thread::sleep_for(std::chrono::milliseconds(900));
    res.set_content(body, "text/plain");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread thread([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EngineMetricsOptions options = FastOptions();  // 500 ms read timeout
  options.metrics_url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  EngineMetricsCollector collector(options);
  for (int i = 0; i < 4; ++i) collector.Poll(kT0 + i * kSecond);
  server.stop();
  thread.join();
  collector.Poll(kT0 + 4 * kSecond);  // refused: a failure, not abandoned (never sent)
  EXPECT_EQ(hits.load(), 4);
  const std::vector<ScrapeTargetStats> want = {
      {.url = options.metrics_url, .scrapes = 3, .failures = 2, .abandoned = 1}};
  EXPECT_EQ(collector.targets(), want);
  const EngineMetricsWindow w = collector.TakeWindow(kT0, kT0 + 10 * kSecond);
  EXPECT_EQ(w.scrapes, 3u);
  EXPECT_EQ(w.scrape_failures, 2u);
  EXPECT_EQ(w.scrapes_abandoned, 1u);
  EXPECT_EQ(w.abandoned_spanned, 1u);  // the third scrape's deltas span the second GET
}

// A discovery probe that connects and gets no answer (a port that does not speak HTTP) is an
// abandoned probe of that URL (and one at each rediscovery).
TEST(EngineMetricsCollectorTest, CountsAbandonedDiscoveryProbes) {
  SilentListener silent;
  EngineMetricsOptions options = FastOptions();
  options.rediscover_interval_ns = kSecond;
  EngineMetricsCollector collector(options);
  collector.SetRootPids({int(::getpid())});
  collector.Poll(kT0);
  collector.Poll(kT0 + 2 * kSecond);
  EXPECT_FALSE(collector.ok()) << collector.health();
  const std::string silent_url = "http://127.0.0.1:" + std::to_string(silent.port()) + "/metrics";
  const std::vector<ScrapeTargetStats> want = {{.url = silent_url, .probes_abandoned = 2}};
  EXPECT_EQ(collector.targets(), want);
}

TEST(EngineMetricsCollectorTest, LostEndpointIsRediscovered) {
  auto first = std::make_unique<TestServer>();
  first->Serve("/metrics", EngineData("tgi.txt"));
  first->Start();
  EngineMetricsCollector collector(FastOptions());
  collector.SetRootPids({int(::getpid())});
  collector.Poll(kT0);
  ASSERT_TRUE(collector.ok()) << collector.health();
  first.reset();  // the engine went away
  for (int i = 1; i <= 3; ++i) collector.Poll(kT0 + i * kSecond);
  EXPECT_NE(collector.health().find("off: lost the engine metrics endpoint"), std::string::npos)
      << collector.health();
  TestServer second;  // and came back on another port
  second.Serve("/metrics", EngineData("tgi.txt"));
  second.Start();
  collector.Poll(kT0 + 4 * kSecond);
  ASSERT_TRUE(collector.ok()) << collector.health();
  EXPECT_EQ(collector.endpoint(), "http://127.0.0.1:" + std::to_string(second.port()) + "/metrics");
}

TEST(EngineMetricsCollectorTest, TakeWindowAndHealthWhilePolling) {
  TestServer server;
  server.Serve("/metrics", EngineData("dynamo_frontend.txt"));
  server.Start();
  EngineMetricsOptions options = FastOptions();
  options.metrics_url = "http://127.0.0.1:" + std::to_string(server.port()) + "/metrics";
  options.scrape_interval_ns = 1;
  EngineMetricsCollector collector(options);
  std::atomic<bool> done{false};
  uint64_t scrapes = 0;
  std::thread reader([&] {
    while (!done) {
      scrapes += collector.TakeWindow(kT0, kT0 + kSecond).scrapes;
      (void)collector.health();
      (void)collector.endpoint();
    }
  });
  std::thread other_poller([&] {  // a second caller: returns at once while a poll runs
    for (int i = 0; i < 20; ++i) collector.Poll(kT0 + kSecond / 2);
  });
  // Polls that find another poll running return at once: poll until 50 scrapes happened.
  for (int i = 0; server.hits() < 50 && i < 1'000'000; ++i) collector.Poll(kT0 + 1000 * (i + 1));
  other_poller.join();
  done = true;
  reader.join();
  scrapes += collector.TakeWindow(kT0, kT0 + kSecond).scrapes;
  // Each scrape is taken exactly once, whichever thread took it.
  EXPECT_EQ(scrapes, uint64_t(server.hits()));
  EXPECT_GE(server.hits(), 50);
  EXPECT_TRUE(collector.ok()) << collector.health();
}

TEST(HttpFetchTest, ParsesMetricsUrls) {
  auto t = ParseMetricsUrl("http://127.0.0.1:8000");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, (net::HttpTarget{"127.0.0.1", 8000, "/metrics"}));
  t = ParseMetricsUrl("HTTP://[::1]:30000/prometheus/metrics");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t, (net::HttpTarget{"::1", 30000, "/prometheus/metrics"}));
  EXPECT_EQ(t->ToUrl(), "http://[::1]:30000/prometheus/metrics");
  t = ParseMetricsUrl("http://engine-host/metrics?x=1");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, (net::HttpTarget{"engine-host", 80, "/metrics?x=1"}));
  for (const char* bad :
       {"ftp://x/", "127.0.0.1:8000", "http://", "http://:80/", "http://h:0/", "http://h:99999/",
        "http://h:/", "http://u@h/", "http://[::1/", "http://h h/", "https://h/"})
    EXPECT_FALSE(ParseMetricsUrl(bad).ok()) << bad;
}

TEST(HttpFetchTest, FetchesOverIpv6Loopback) {
  TestServer server;
  server.Serve("/metrics", "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n");
  server.Start("::1");
  if (server.port() <= 0) GTEST_SKIP() << "no IPv6 loopback here";
  auto r = FetchMetrics({"::1", uint16_t(server.port()), "/metrics"}, net::FetchOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.rfind("# TYPE vllm:num_requests_running", 0), 0u);
}

TEST(HttpFetchTest, BoundsTheBodyAndReportsStatus) {
  TestServer server;
  server.Serve("/big", std::string(100000, 'x'));
  server.Start();
  net::FetchOptions options;
  options.max_body_bytes = 1000;
  auto r = FetchMetrics({"127.0.0.1", uint16_t(server.port()), "/big"}, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->body.size(), 1000u);
  r = FetchMetrics({"127.0.0.1", uint16_t(server.port()), "/missing"}, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 404);
  server.Stop();
  r = FetchMetrics({"127.0.0.1", uint16_t(server.port()), "/big"}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace inferscope::telemetry::scrape
