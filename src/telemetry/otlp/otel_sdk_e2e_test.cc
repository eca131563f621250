// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
//
// End to end with a real OpenTelemetry SDK: starts a loopback OTLP receiver, runs
// tests/otel/send_spans.mjs (the JS SDK's BatchSpanProcessor + OTLP exporter) over protobuf,
// JSON and gzip'd protobuf, and checks that the window summarizes exactly what the client sent
// and that none of the prompt/completion text, raw request ids or resource attributes it also
// sent appears in the window JSON, the text rendering or the health line.
//
// Usage: otel_sdk_e2e_test <tests/otel dir>. Exit 77 (skip) without node or node_modules.

#include <simdjson.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "src/telemetry/otlp/otlp_test_server.h"

namespace {

using namespace inferscope::telemetry::otlp;

int failures = 0;

#define CHECK_EQ(a, b)                                                                          \
  do {                                                                                          \
    auto va = (a);                                                                              \
    auto vb = (b);                                                                              \
    if (!(va == vb)) {                                                                          \
      std::fprintf(stderr, "FAIL %s:%d: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__, #a, #b, \
                   static_cast<long long>(va), static_cast<long long>(vb));                     \
      ++failures;                                                                               \
    }                                                                                           \
  } while (0)

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Runs a command, returns its stdout and exit status.
int Run(const std::string& cmd, std::string* out) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int64_t Get(simdjson::dom::element e, std::string_view key) {
  int64_t v = -1;
  if (e[key].get_int64().get(v) != simdjson::SUCCESS) {
    std::fprintf(stderr, "FAIL: client summary lacks %.*s\n", int(key.size()), key.data());
    ++failures;
  }
  return v;
}

void CheckNoContent(const std::string& what, const std::string& text) {
  for (const char* needle : {"SECRET", "RAWID", "example.com", "poem", "roses", "HOST-"}) {
    if (text.find(needle) != std::string::npos) {
      std::fprintf(stderr, "FAIL: %s contains '%s':\n%s\n", what.c_str(), needle, text.c_str());
      ++failures;
    }
  }
}

void RunOne(const std::string& dir, const std::string& protocol, bool gzip) {
  constexpr uint64_t kSec = 1'000'000'000;
  constexpr int kCount = 40;
  std::string label = protocol + (gzip ? "+gzip" : "");
  SpanCollector collector;
  OtlpTestServer server(&collector);
  if (!server.Start().ok()) {
    std::fprintf(stderr, "FAIL: cannot start the test server\n");
    ++failures;
    return;
  }
  // Spans end inside one 10 s window a minute ago, aligned like the agent's windows.
  auto now_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  uint64_t window_start = (now_ns / (10 * kSec)) * 10 * kSec - 60 * kSec;
  std::string cmd = "node " + dir + "/send_spans.mjs --endpoint " + server.traces_url() +
                    " --protocol " + protocol + " --count " + std::to_string(kCount) +
                    " --base-ns " + std::to_string(window_start) + (gzip ? " --gzip" : "");
  std::string out;
  int rc = Run(cmd, &out);
  server.Stop();
  if (rc != 0) {
    std::fprintf(stderr, "FAIL [%s]: '%s' exited %d; stdout: %s\n", label.c_str(), cmd.c_str(), rc,
                 out.c_str());
    ++failures;
    return;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element sent;
  if (parser.parse(out).get(sent) != simdjson::SUCCESS) {
    std::fprintf(stderr, "FAIL [%s]: client printed no JSON summary: %s\n", label.c_str(),
                 out.c_str());
    ++failures;
    return;
  }
  SpanWindow w = collector.TakeWindow(window_start, window_start + 10 * kSec);
  std::fprintf(stderr, "[%s] client: %s", label.c_str(), out.c_str());
  CHECK_EQ(static_cast<int64_t>(w.requests), Get(sent, "count"));
  CHECK_EQ(static_cast<int64_t>(w.prompt_tokens), Get(sent, "prompt_tokens"));
  CHECK_EQ(static_cast<int64_t>(w.completion_tokens), Get(sent, "completion_tokens"));
  CHECK_EQ(static_cast<int64_t>(w.counters.spans_received),
           Get(sent, "count") + Get(sent, "other_spans"));
  CHECK_EQ(static_cast<int64_t>(w.counters.other_spans), Get(sent, "other_spans"));
  CHECK_EQ(static_cast<int64_t>(w.counters.requests_accepted), Get(sent, "exports"));
  CHECK_EQ(w.counters.requests_rejected, 0u);
  CHECK_EQ(w.counters.bad_attribute_values, 0u);
  simdjson::dom::element sums = sent["stage_sum_ns"];
  for (size_t s = 0; s < kStageCount; ++s) {
    auto stage = static_cast<Stage>(s);
    const LatencyHistogram& h = w.stage(stage);
    CHECK_EQ(static_cast<int64_t>(h.count()), int64_t{kCount});
    // Per-span rounding to ns on both sides: sums agree to a few ns.
    int64_t diff = h.sum_ns() - Get(sums, StageName(stage));
    if (diff < -kCount || diff > kCount) {
      std::fprintf(stderr, "FAIL [%s]: %s sum %lld vs sent\n", label.c_str(),
                   std::string(StageName(stage)).c_str(), static_cast<long long>(diff));
      ++failures;
    }
  }
  int64_t max_diff = w.stage(Stage::kE2e).max_ns() - Get(sent, "e2e_max_ns");
  CHECK(max_diff >= -1 && max_diff <= 1);
  CHECK_EQ(w.exemplars.size(), SpanWindow::kDefaultExemplars);
  if (!w.exemplars.empty()) {
    CHECK_EQ(w.exemplars[0].e2e_ns(), w.stage(Stage::kE2e).max_ns());
    CHECK(w.exemplars[0].model == "meta-llama/Llama-3.1-8B-Instruct");
    CHECK(w.exemplars[0].service == "vllm-otel-test");
    CHECK_EQ(w.exemplars[0].request_hash.size(), 16u);
  }
  CHECK_EQ(w.requests_per_model.count("meta-llama/Llama-3.1-8B-Instruct"), 1u);
  std::string json = w.ToJson();
  std::string text;
  RenderSpanText(w, &text);
  CheckNoContent("[" + label + "] window JSON", json);
  CheckNoContent("[" + label + "] text", text);
  CheckNoContent("[" + label + "] health", collector.health().message);
  auto back = SpanWindow::FromJson(json);
  CHECK(back.ok() && *back == w);
  std::fprintf(stderr, "[%s] %s", label.c_str(), text.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <tests/otel dir>\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  std::string version;
  if (Run("node --version 2>/dev/null", &version) != 0) {
    std::printf("SKIP: node is not installed (needed for the OpenTelemetry JS SDK client)\n");
    return 77;
  }
  if (!Exists(dir + "/node_modules/@opentelemetry/exporter-trace-otlp-proto")) {
    std::printf("SKIP: run `npm ci --prefix tests/otel` to install the OpenTelemetry SDK client\n");
    return 77;
  }
  RunOne(dir, "proto", false);
  RunOne(dir, "json", false);
  RunOne(dir, "proto", true);
  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf(
      "OK: protobuf, JSON and gzip exports from the OpenTelemetry JS SDK summarized, no "
      "content leaked\n");
  return 0;
}
