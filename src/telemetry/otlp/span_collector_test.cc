// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/otlp/span_collector.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <zlib.h>

#include <atomic>
#include <thread>

#include "src/telemetry/otlp/otlp_test_server.h"
#include "src/telemetry/otlp/otlp_test_util.h"
#include "src/wire/wire_buffer.h"
#include "tests/compress.h"

namespace inferscope::telemetry::otlp {
namespace {

using testing::KvDouble;
using testing::KvInt;
using testing::KvString;
using testing::RequestBytes;
using testing::TestSpan;

constexpr uint64_t kSec = 1'000'000'000;
constexpr uint64_t kT0 = 1'700'000'000 * kSec;  // a window boundary (multiple of 10 s)

TestSpan SpanEndingAt(uint64_t end_ns, double e2e_s) {
  TestSpan s;
  s.end_ns = end_ns;
  s.start_ns = end_ns - static_cast<uint64_t>(e2e_s * 1e9);
  s.attributes = {KvDouble("gen_ai.latency.e2e", e2e_s), KvInt("gen_ai.usage.prompt_tokens", 10),
                  KvString("gen_ai.prompt", "PROMPT-SECRET-7f3a")};
  return s;
}

using ::inferscope::testing::Gzip;

SpanCollector MakeCollector(SpanCollectorOptions o = {}) {
  return SpanCollector(o, RequestIdHasher(1, 2));
}

TEST(SpanCollectorTest, AnswersPerOtlpHttpSpec) {
  SpanCollector c = MakeCollector();
  std::string body = RequestBytes({SpanEndingAt(kT0 + kSec, 0.5)});
  auto ok = c.HandleTraces("application/x-protobuf", "", body);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.content_type, "application/x-protobuf");
  EXPECT_EQ(ok.body, "");  // an empty ExportTraceServiceResponse
  auto ok_json = c.HandleTraces("application/json; charset=utf-8", "identity", "{}");
  EXPECT_EQ(ok_json.status, 200);
  EXPECT_EQ(ok_json.body.substr(0, 2), "{}");
  EXPECT_EQ(c.HandleTraces("text/plain", "", body).status, 415);
  EXPECT_EQ(c.HandleTraces("application/x-protobuf", "br", body).status, 415);
  auto bad = c.HandleTraces("application/x-protobuf", "", body.substr(0, body.size() - 3));
  EXPECT_EQ(bad.status, 400);
  // google.rpc.Status{1: code=3 INVALID_ARGUMENT, 2: message}
  wire::WireReader r(bad.body);
  wire::WireField f;
  ASSERT_TRUE(r.NextField(&f));
  EXPECT_EQ(f.number, 1u);
  EXPECT_EQ(f.value, 3u);
  ASSERT_TRUE(r.NextField(&f));
  EXPECT_NE(std::string(f.bytes).find("malformed"), std::string::npos);
  auto bad_json = c.HandleTraces("application/json", "", "{nope");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_NE(bad_json.body.find("\"code\": 3"), std::string::npos);
  auto gz = c.HandleTraces("application/x-protobuf", "gzip", Gzip(body));
  EXPECT_EQ(gz.status, 200);
  EXPECT_EQ(c.HandleTraces("application/x-protobuf", "gzip", "garbage").status, 400);
  SpanCounters t = c.totals();
  EXPECT_EQ(t.requests_accepted, 3u);
  EXPECT_EQ(t.requests_rejected, 5u);
  EXPECT_EQ(t.request_spans, 2u);
}

// At shutdown the agent takes its last windows: an export after that would be acknowledged and
// never stored. Closed, the receiver answers 503 (retryable in OTLP/HTTP) and keeps nothing.
TEST(SpanCollectorTest, ClosedRefusesWith503AndKeepsNothing) {
  SpanCollector c = MakeCollector();
  const std::string body = RequestBytes({SpanEndingAt(kT0 + kSec, 0.5)});
  ASSERT_EQ(c.HandleTraces("application/x-protobuf", "", body).status, 200);
  c.Close();
  auto proto = c.HandleTraces("application/x-protobuf", "", body);
  EXPECT_EQ(proto.status, 503);
  EXPECT_EQ(proto.content_type, "application/x-protobuf");
  auto json = c.HandleTraces("application/json", "", "{}");
  EXPECT_EQ(json.status, 503);
  EXPECT_NE(json.body.find("\"code\": 14"), std::string::npos) << json.body;
  EXPECT_NE(json.body.find("shutting down"), std::string::npos) << json.body;
  EXPECT_EQ(c.pending_spans(), 1u);  // the first export only
  EXPECT_EQ(c.totals().spans_received, 1u);
  EXPECT_EQ(c.totals().requests_accepted, 1u);
  EXPECT_EQ(c.TakeWindow(kT0, kT0 + 10 * kSec).requests, 1u);
}

TEST(SpanCollectorTest, HealthSaysHowManyWereDropped) {
  SpanCollector c = MakeCollector();
  ASSERT_EQ(c.HandleTraces(
                 "application/x-protobuf", "",
                 RequestBytes({SpanEndingAt(kT0 + kSec, 0.5), SpanEndingAt(kT0 + 11 * kSec, 0.5)}))
                .status,
            200);
  EXPECT_EQ(c.health().message, "ok: 2 request spans received");
  c.TakeWindow(kT0 + 10 * kSec, kT0 + 20 * kSec);  // the first span's window is past: late
  EXPECT_TRUE(c.health().ok);
  EXPECT_EQ(c.health().message,
            "ok: 2 request spans received, 1 dropped (reasons: inferscope report, agent log)");
}

TEST(SpanCollectorTest, TooLargeIs413) {
  SpanCollectorOptions o;
  o.limits.max_body_bytes = 1000;
  SpanCollector c = MakeCollector(o);
  EXPECT_EQ(c.HandleTraces("application/x-protobuf", "", std::string(1001, '\0')).status, 413);
  // A small gzip that inflates past the limit.
  EXPECT_EQ(c.HandleTraces("application/json", "gzip", Gzip(std::string(5000, ' '))).status, 413);
  CollectorHealth h = c.health();
  EXPECT_FALSE(h.ok);
  EXPECT_NE(h.message.find("rejected"), std::string::npos) << h.message;
}

TEST(SpanCollectorTest, PartialSuccessWhenSpansAreDropped) {
  SpanCollectorOptions o;
  o.limits.max_spans_per_request = 1;
  SpanCollector c = MakeCollector(o);
  std::string body = RequestBytes({SpanEndingAt(kT0 + kSec, 0.5), SpanEndingAt(kT0 + kSec, 0.6)});
  auto r = c.HandleTraces("application/x-protobuf", "", body);
  EXPECT_EQ(r.status, 200);
  // ExportTraceServiceResponse{1: ExportTracePartialSuccess{1: rejected_spans = 1}}
  wire::WireReader outer(r.body);
  wire::WireField f;
  ASSERT_TRUE(outer.NextField(&f));
  EXPECT_EQ(f.number, 1u);
  wire::WireReader inner(f.bytes);
  ASSERT_TRUE(inner.NextField(&f));
  EXPECT_EQ(f.number, 1u);
  EXPECT_EQ(f.value, 1u);
  EXPECT_EQ(c.totals().dropped_over_limit, 1u);
}

TEST(SpanCollectorTest, WindowsByEndTime) {
  SpanCollector c = MakeCollector();
  std::string body = RequestBytes({
      SpanEndingAt(kT0 + 1 * kSec, 0.5),     // window 0
      SpanEndingAt(kT0 + 9 * kSec, 2.0),     // window 0
      SpanEndingAt(kT0 + 10 * kSec, 0.25),   // window 1 (end is exclusive)
      SpanEndingAt(kT0 + 7200 * kSec, 1.0),  // far future: dropped when window 1 is taken
  });
  ASSERT_EQ(c.HandleTraces("application/x-protobuf", "", body).status, 200);
  EXPECT_EQ(c.pending_spans(), 4u);
  SpanWindow w0 = c.TakeWindow(kT0, kT0 + 10 * kSec);
  EXPECT_EQ(w0.requests, 2u);
  EXPECT_EQ(w0.stage(Stage::kE2e).count(), 2u);
  EXPECT_EQ(w0.stage(Stage::kE2e).max_ns(), 2'000'000'000);
  EXPECT_EQ(w0.prompt_tokens, 20u);
  EXPECT_EQ(w0.counters.spans_received, 4u);  // receive counters go to the next taken window
  EXPECT_EQ(w0.counters.request_spans, 4u);
  ASSERT_EQ(w0.exemplars.size(), 2u);
  EXPECT_EQ(w0.exemplars[0].e2e_ns(), 2'000'000'000);
  EXPECT_EQ(w0.counters.dropped_future, 1u);  // far beyond the window being taken
  SpanWindow w1 = c.TakeWindow(kT0 + 10 * kSec, kT0 + 20 * kSec);
  EXPECT_EQ(w1.requests, 1u);
  EXPECT_EQ(w1.counters.dropped_future, 0u);
  EXPECT_EQ(w1.counters.spans_received, 0u);
  EXPECT_EQ(c.pending_spans(), 0u);
  // A span for an already-taken window is late.
  c.HandleTraces("application/x-protobuf", "", RequestBytes({SpanEndingAt(kT0 + kSec, 0.5)}));
  SpanWindow w2 = c.TakeWindow(kT0 + 20 * kSec, kT0 + 30 * kSec);
  EXPECT_EQ(w2.requests, 0u);
  EXPECT_EQ(w2.counters.dropped_late, 1u);
  EXPECT_EQ(w2.ToJson().find("SECRET"), std::string::npos);
}

TEST(SpanCollectorTest, BufferIsBounded) {
  SpanCollectorOptions o;
  o.max_pending_spans = 3;
  SpanCollector c = MakeCollector(o);
  std::vector<TestSpan> spans(5, SpanEndingAt(kT0 + kSec, 0.1));
  c.HandleTraces("application/x-protobuf", "", RequestBytes(spans));
  EXPECT_EQ(c.pending_spans(), 3u);
  EXPECT_EQ(c.totals().dropped_buffer_full, 2u);
  EXPECT_FALSE(c.health().ok);
  SpanWindow w = c.TakeWindow(kT0, kT0 + 10 * kSec);
  EXPECT_EQ(w.requests, 3u);
  EXPECT_EQ(w.counters.dropped_buffer_full, 2u);
}

TEST(SpanCollectorTest, HealthSaysWhatToDo) {
  SpanCollector c = MakeCollector();
  CollectorHealth h = c.health();
  EXPECT_FALSE(h.ok);
  EXPECT_NE(h.message.find("no OTLP export received"), std::string::npos);
  TestSpan unknown;
  unknown.name = "GET /health";
  c.HandleTraces("application/x-protobuf", "", RequestBytes({unknown}));
  h = c.health();
  EXPECT_FALSE(h.ok);
  EXPECT_NE(h.message.find("none is an engine request span"), std::string::npos);
  EXPECT_EQ(c.pending_spans(), 0u);  // "other" spans are not buffered
  c.HandleTraces("application/x-protobuf", "", RequestBytes({SpanEndingAt(kT0, 0.1)}));
  h = c.health();
  EXPECT_TRUE(h.ok) << h.message;
  c.HandleTraces("text/html", "", "");
  EXPECT_FALSE(c.health().ok);
}

// Run under TSan: exports from several HTTP-like threads while the agent thread takes windows.
TEST(SpanCollectorTest, ConcurrentExportsAndWindows) {
  SpanCollector c = MakeCollector();
  constexpr int kThreads = 4, kExports = 50;
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&c, t] {
      for (int i = 0; i < kExports; ++i) {
        auto s = SpanEndingAt(kT0 + static_cast<uint64_t>(i % 30) * kSec + 1, 0.01 * (t + 1));
        c.HandleTraces(t % 2 ? "application/x-protobuf" : "application/x-protobuf", "",
                       RequestBytes({s, s}));
      }
    });
  }
  uint64_t requests = 0, received = 0;
  std::thread taker([&] {
    // Takes only windows before the spans so nothing is consumed until the threads finish.
    while (!done.load()) {
      SpanWindow w = c.TakeWindow(kT0 - 1000 * kSec, kT0 - 999 * kSec);
      requests += w.requests;
      received += w.counters.spans_received;
      (void)c.health();
    }
  });
  for (auto& th : threads) th.join();
  done = true;
  taker.join();
  SpanWindow rest = c.TakeWindow(kT0, kT0 + 30 * kSec);
  EXPECT_EQ(requests, 0u);
  EXPECT_EQ(rest.requests, uint64_t{kThreads} * kExports * 2);
  EXPECT_EQ(received + rest.counters.spans_received, uint64_t{kThreads} * kExports * 2);
}

TEST(OtlpTestServerTest, ServesTracesOverHttp) {
  SpanCollector c = MakeCollector();
  OtlpTestServer server(&c);
  ASSERT_TRUE(server.Start().ok());
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(server.traces_url(),
            "http://127.0.0.1:" + std::to_string(server.port()) + "/v1/traces");
  httplib::Client client("127.0.0.1", server.port());
  std::string body = RequestBytes({SpanEndingAt(kT0 + kSec, 0.5)});
  auto res = client.Post("/v1/traces", body, "application/x-protobuf");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  httplib::Headers gzip_header{{"Content-Encoding", "gzip"}};
  res = client.Post("/v1/traces", gzip_header, Gzip(body), "application/x-protobuf");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  res = client.Post("/v1/traces", "x", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 415);
  // A gzip bomb: 64 MiB of zeros in ~64 KiB, past the 8 MiB body limit once inflated.
  res = client.Post("/v1/traces", gzip_header, Gzip(std::string(64 << 20, '\0')),
                    "application/x-protobuf");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  server.Stop();
  SpanWindow w = c.TakeWindow(kT0, kT0 + 10 * kSec);
  EXPECT_EQ(w.requests, 2u);
}

}  // namespace
}  // namespace inferscope::telemetry::otlp
