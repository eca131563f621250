// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Decode cost of a typical vLLM export (512 request spans, each with the vLLM attributes plus a
// prompt and a completion of ~1 KiB that the allowlist skips), per encoding, and HandleTraces end
// to end (decode + buffering).
#include <benchmark/benchmark.h>

#include <string>

#include "src/telemetry/otlp/otlp_decode.h"
#include "src/telemetry/otlp/otlp_test_util.h"
#include "src/telemetry/otlp/span_collector.h"

namespace inferscope::telemetry::otlp {
namespace {

using testing::KvDouble;
using testing::KvInt;
using testing::KvString;

constexpr int kSpans = 512;

testing::TestSpan Span(int i) {
  testing::TestSpan s;
  s.start_ns += static_cast<uint64_t>(i) * 1'000'000;
  s.end_ns += static_cast<uint64_t>(i) * 1'000'000;
  s.attributes = {
      KvString("gen_ai.response.model", "meta-llama/Llama-3.1-8B-Instruct"),
      KvString("gen_ai.request.id", "cmpl-" + std::to_string(i)),
      KvInt("gen_ai.usage.prompt_tokens", 512),
      KvInt("gen_ai.usage.completion_tokens", 128),
      KvDouble("gen_ai.request.temperature", 0.7),
      KvDouble("gen_ai.request.top_p", 0.95),
      KvInt("gen_ai.request.max_tokens", 256),
      KvInt("gen_ai.request.n", 1),
      KvDouble("gen_ai.latency.time_in_queue", 0.01),
      KvDouble("gen_ai.latency.time_to_first_token", 0.12),
      KvDouble("gen_ai.latency.e2e", 0.95),
      KvDouble("gen_ai.latency.time_in_model_prefill", 0.1),
      KvDouble("gen_ai.latency.time_in_model_decode", 0.8),
      KvDouble("gen_ai.latency.time_in_model_inference", 0.9),
      KvString("gen_ai.prompt", std::string(1024, 'p')),
      KvString("gen_ai.completion", std::string(1024, 'c')),
  };
  return s;
}

std::string ProtoBody() {
  std::vector<testing::TestSpan> spans;
  for (int i = 0; i < kSpans; ++i) spans.push_back(Span(i));
  return testing::RequestBytes(spans, {KvString("service.name", "vllm")});
}

std::string JsonBody() {
  std::string out = R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name",)"
                    R"("value":{"stringValue":"vllm"}}]},"scopeSpans":[{"spans":[)";
  for (int i = 0; i < kSpans; ++i) {
    if (i) out += ",";
    out += R"({"traceId":"11111111111111111111111111111111","name":"llm_request",)";
    out += R"("startTimeUnixNano":")" + std::to_string(1'700'000'000'000'000'000ull + i) +
           R"(","endTimeUnixNano":")" + std::to_string(1'700'000'001'000'000'000ull + i) +
           R"(","attributes":[)";
    out += R"({"key":"gen_ai.response.model","value":{"stringValue":"meta-llama/Llama-3.1-8B"}},)";
    out += R"({"key":"gen_ai.request.id","value":{"stringValue":"cmpl-)" + std::to_string(i) +
           R"("}},)";
    out += R"({"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"512"}},)";
    out += R"({"key":"gen_ai.usage.completion_tokens","value":{"intValue":"128"}},)";
    for (const char* k : {"time_in_queue", "time_to_first_token", "e2e", "time_in_model_prefill",
                          "time_in_model_decode", "time_in_model_inference"})
      out += std::string(R"({"key":"gen_ai.latency.)") + k + R"(","value":{"doubleValue":0.5}},)";
    out += R"({"key":"gen_ai.prompt","value":{"stringValue":")" + std::string(1024, 'p') +
           R"("}},{"key":"gen_ai.completion","value":{"stringValue":")" + std::string(1024, 'c') +
           R"("}}]})";
  }
  return out + "]}]}]}";
}

void BM_DecodeProto(benchmark::State& state) {
  std::string body = ProtoBody();
  RequestIdHasher hasher(1, 2);
  for (auto _ : state) benchmark::DoNotOptimize(DecodeTracesProto(body, {}, hasher));
  state.SetItemsProcessed(state.iterations() * kSpans);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
}
BENCHMARK(BM_DecodeProto);

void BM_DecodeJson(benchmark::State& state) {
  std::string body = JsonBody();
  RequestIdHasher hasher(1, 2);
  for (auto _ : state) benchmark::DoNotOptimize(DecodeTracesJson(body, {}, hasher));
  state.SetItemsProcessed(state.iterations() * kSpans);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
}
BENCHMARK(BM_DecodeJson);

void BM_HandleTracesAndTakeWindow(benchmark::State& state) {
  std::string body = ProtoBody();
  SpanCollector collector(SpanCollectorOptions{}, RequestIdHasher(1, 2));
  for (auto _ : state) {
    collector.HandleTraces("application/x-protobuf", "", body);
    benchmark::DoNotOptimize(
        collector.TakeWindow(1'700'000'000'000'000'000ull, 1'700'000'010'000'000'000ull));
  }
  state.SetItemsProcessed(state.iterations() * kSpans);
}
BENCHMARK(BM_HandleTracesAndTakeWindow);

}  // namespace
}  // namespace inferscope::telemetry::otlp

BENCHMARK_MAIN();
