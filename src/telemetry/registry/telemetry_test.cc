// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The telemetry threads on the real clock with only the OTLP receiver on (no NVML, no scraping):
// span windows stay open for the grace period, shutdown flushes them, drops are logged by reason.
// And with only the scraper on: a scrape in flight at shutdown is stored.

#include "src/telemetry/registry/telemetry.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "src/base/time_point.h"
#include "src/telemetry/otlp/otlp_test_util.h"

namespace inferscope::telemetry {
namespace {

using telemetry::otlp::testing::KvDouble;
using telemetry::otlp::testing::RequestBytes;
using telemetry::otlp::testing::TestSpan;

constexpr int64_t kMs = 1'000'000;

// What the telemetry emitted, from its thread.
class Sink {
 public:
  Telemetry::WindowCallback Fn() {
    return [this](TelemetryWindow&& w) {
      std::lock_guard<std::mutex> lock(mu_);
      for (store::TelemetryRecord& r : w.records) records_.push_back(std::move(r));
    };
  }
  std::function<void(const std::string&)> Log() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back(line);
    };
  }
  std::vector<store::TelemetryRecord> Spans() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<store::TelemetryRecord> out;
    for (const store::TelemetryRecord& r : records_)
      if (r.kind == telemetry::otlp::SpanKind().record_kind()) out.push_back(r);
    return out;
  }
  std::vector<std::string> LogLines() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

 private:
  std::mutex mu_;
  std::vector<store::TelemetryRecord> records_;
  std::vector<std::string> log_;
};

TelemetryOptions SpansOnly(int64_t window_ns, int64_t grace_ns) {
  TelemetryOptions o;
  o.window_ns = window_ns;
  o.nvml = false;
  o.scrape = false;
  o.otlp = true;
  o.span_grace_ns = grace_ns;
  return o;
}

// One vLLM request span ending at `end_ns`.
void SendSpan(Telemetry& t, uint64_t end_ns, char trace_byte) {
  TestSpan s;
  s.trace_id = std::string(16, trace_byte);
  s.end_ns = end_ns;
  s.start_ns = end_ns - 50 * kMs;
  s.attributes = {KvDouble("gen_ai.latency.e2e", 0.05)};
  auto r = t.spans()->HandleTraces("application/x-protobuf", "", RequestBytes({s}));
  ASSERT_EQ(r.status, 200);
}

void SleepUntil(int64_t unix_ns) {
  int64_t now = base::UnixNowNs();
  if (unix_ns > now) std::this_thread::sleep_for(std::chrono::nanoseconds(unix_ns - now));
}

// Starts `t` just after a window boundary, so the test and the telemetry thread agree on the
// current window; returns its start.
int64_t StartAfterBoundary(Telemetry& t, int64_t window_ns) {
  SleepUntil((base::UnixNowNs() / window_ns + 1) * window_ns + 10 * kMs);
  t.Start();
  return base::UnixNowNs() / window_ns * window_ns;
}

// The SDK's batch processor exports every 5 s, so spans arrive after their window's
// end. The window stays open for the grace period (spans arriving then count in it, not as late),
// and stopping the agent inside the grace period stores it instead of losing it.
TEST(TelemetryTest, SpanWindowStaysOpenForTheGraceAndStopStoresIt) {
  constexpr int64_t kWindow = 200 * kMs;
  Sink sink;
  TelemetryOptions options = SpansOnly(kWindow, 60'000 * kMs);
  options.log = sink.Log();
  Telemetry t(options, sink.Fn());
  const int64_t start = StartAfterBoundary(t, kWindow);
  const int64_t now = base::UnixNowNs();
  SendSpan(t, static_cast<uint64_t>(now), '\x01');
  // Three boundaries later, the window [start, start + kWindow) is closed but in its grace.
  SleepUntil(start + 3 * kWindow + 50 * kMs);
  EXPECT_TRUE(sink.Spans().empty()) << "a span window was taken before its grace period ended";
  SendSpan(t, static_cast<uint64_t>(start + kWindow - 1), '\x02');  // arrives late, in its grace
  t.Stop();
  std::vector<store::TelemetryRecord> spans = sink.Spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].start_ns, start);
  EXPECT_EQ(spans[0].end_ns, start + kWindow);
  auto w = telemetry::otlp::SpanWindow::FromJson(spans[0].json);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->requests, 2u);
  EXPECT_EQ(w->counters.spans_received, 2u);
  EXPECT_EQ(telemetry::otlp::DroppedSpans(w->counters), 0u);
  EXPECT_TRUE(sink.LogLines().empty());
  // After the last take, exports are refused (retryable), not acknowledged and lost.
  TestSpan late;
  late.end_ns = static_cast<uint64_t>(now);
  late.start_ns = late.end_ns - 1;
  late.attributes = {KvDouble("gen_ai.latency.e2e", 1e-9)};
  EXPECT_EQ(t.spans()->HandleTraces("application/x-protobuf", "", RequestBytes({late})).status,
            503);
}

// A window is taken once its grace is over, with its own bounds (not those of the GPU window
// closing at the same time); spans arriving after that are dropped as late: logged with the
// reason and counted in the window being taken.
TEST(TelemetryTest, SpansAfterTheGraceAreDroppedLoggedAndCounted) {
  constexpr int64_t kWindow = 200 * kMs;
  constexpr int64_t kGrace = 400 * kMs;
  Sink sink;
  TelemetryOptions options = SpansOnly(kWindow, kGrace);
  options.log = sink.Log();
  Telemetry t(options, sink.Fn());
  const int64_t start = StartAfterBoundary(t, kWindow);
  const int64_t now = base::UnixNowNs();
  SendSpan(t, static_cast<uint64_t>(now), '\x01');
  // Taken at the first boundary at or after end + grace.
  SleepUntil(start + kWindow + kGrace + 100 * kMs);
  std::vector<store::TelemetryRecord> spans = sink.Spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].start_ns, start);
  EXPECT_EQ(spans[0].end_ns, start + kWindow);
  // Its window is stored: this one can only be dropped.
  SendSpan(t, static_cast<uint64_t>(start + kWindow / 2), '\x02');
  t.Stop();
  spans = sink.Spans();
  uint64_t late = 0, requests = 0;
  for (const store::TelemetryRecord& r : spans) {
    auto w = telemetry::otlp::SpanWindow::FromJson(r.json);
    ASSERT_TRUE(w.ok());
    late += w->counters.dropped_late;
    requests += w->requests;
  }
  EXPECT_EQ(requests, 1u);
  EXPECT_EQ(late, 1u);
  std::vector<std::string> log = sink.LogLines();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("request spans dropped"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("1 late: arrived after their window's grace period"), std::string::npos)
      << log[0];
}

// Stop() while a scrape's GET is in flight: the scrape thread finishes it before the last window
// is closed, so the scrape the engine served is stored (it used to be left behind when the sample
// thread closed the last window first: the engine counted a GET the agent never stored).
TEST(TelemetryTest, AScrapeInFlightAtShutdownIsStored) {
  std::ifstream in(std::filesystem::path(INFERSCOPE_SOURCE_DIR) / "tests/data/engine_metrics" /
                   "sglang.txt");
  std::stringstream body;
  body << in.rdbuf();
  httplib::Server server;
  std::atomic<int> hits{0};
  std::atomic<bool> second_started{false};
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    if (++hits == 2) {
      second_started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(400));  // < the 2 s read timeout
    }
    res.set_content(body.str(), "text/plain");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread thread([&] { server.listen_after_bind(); });

  TelemetryOptions options;
  options.window_ns = 10'000 * kMs;  // the shutdown closes the only window
  options.nvml = false;
  options.otlp = false;
  options.scrape = true;
  options.metrics_url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  options.scrape_interval_ns = 100 * kMs;
  std::mutex mu;
  uint64_t scrapes = 0, failures = 0;
  Telemetry t(options, [&](TelemetryWindow&& w) {
    std::lock_guard<std::mutex> lock(mu);
    if (w.engine) {
      scrapes += w.engine->scrapes;
      failures += w.engine->scrape_failures;
    }
  });
  t.Start();
  const int64_t deadline = base::UnixNowNs() + 5'000 * kMs;
  while (!second_started && base::UnixNowNs() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(second_started) << "the scraper never made a second GET";
  t.Stop();  // the second GET is being answered
  server.stop();
  thread.join();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(hits.load(), 2);
  EXPECT_EQ(scrapes, 2u);
  EXPECT_EQ(failures, 0u);
  const TelemetryStatus status = t.status();
  ASSERT_EQ(status.scrape_targets.size(), 1u);
  EXPECT_EQ(status.scrape_targets[0].url, options.metrics_url);
  EXPECT_EQ(status.scrape_targets[0].scrapes, 2u);
}

}  // namespace
}  // namespace inferscope::telemetry
