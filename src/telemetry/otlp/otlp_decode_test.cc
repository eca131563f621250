// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/otlp/otlp_decode.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <string>

#include "src/telemetry/otlp/otlp_test_util.h"
#include "src/telemetry/otlp/span_window.h"
#include "tests/compress.h"

namespace inferscope::telemetry::otlp {
namespace {

using testing::KvDouble;
using testing::KvInt;
using testing::KvString;
using testing::RequestBytes;
using testing::TestSpan;

constexpr std::string_view kSecret = "PROMPT-SECRET-7f3a";

const RequestIdHasher& Hasher() {
  static const RequestIdHasher h(0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull);
  return h;
}

TestSpan VllmSpan() {
  TestSpan s;
  s.attributes = {
      KvString("gen_ai.response.model", "meta-llama/Llama-3.1-8B"),
      KvString("gen_ai.request.id", "cmpl-raw-request-id-42"),
      KvInt("gen_ai.usage.prompt_tokens", 512),
      KvInt("gen_ai.usage.completion_tokens", 128),
      KvDouble("gen_ai.request.temperature", 0.7),
      KvDouble("gen_ai.request.top_p", 0.95),
      KvInt("gen_ai.request.max_tokens", 256),
      KvInt("gen_ai.request.n", 1),
      KvDouble("gen_ai.latency.time_in_queue", 0.010),
      KvDouble("gen_ai.latency.time_to_first_token", 0.120),
      KvDouble("gen_ai.latency.e2e", 0.950),
      KvDouble("gen_ai.latency.time_in_model_prefill", 0.100),
      KvDouble("gen_ai.latency.time_in_model_decode", 0.800),
      KvDouble("gen_ai.latency.time_in_model_inference", 0.900),
  };
  return s;
}

int64_t StageOf(const SpanRecord& r, Stage s) { return r.stage_ns[static_cast<size_t>(s)]; }

TEST(RequestIdHasherTest, MatchesSipHashReferenceVectors) {
  // SipHash-2-4 paper, key 00..0f: empty message and message 00..0e.
  EXPECT_EQ(Hasher().Hash(""), 0x726fdb47dd0e0e31ull);
  std::string msg;
  for (int i = 0; i < 15; ++i) msg.push_back(static_cast<char>(i));
  EXPECT_EQ(Hasher().Hash(msg), 0xa129ca6149be45e5ull);
  EXPECT_EQ(Hasher().HashHex(""), "726fdb47dd0e0e31");
  // Random keys differ per instance: the same id hashes differently in another agent.
  EXPECT_NE(RequestIdHasher().Hash("id"), RequestIdHasher().Hash("id"));
}

TEST(OtlpDecodeTest, DecodesVllmRequestSpan) {
  auto r = DecodeTracesProto(RequestBytes({VllmSpan()}, {KvString("service.name", "vllm")}), {},
                             Hasher());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->spans.size(), 1u);
  const SpanRecord& s = r->spans[0];
  EXPECT_EQ(s.role, SpanRole::kRequest);
  EXPECT_EQ(s.name, "llm_request");
  EXPECT_EQ(s.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(s.service, "vllm");
  EXPECT_EQ(s.request_hash, Hasher().HashHex("cmpl-raw-request-id-42"));
  EXPECT_EQ(s.prompt_tokens, 512);
  EXPECT_EQ(s.completion_tokens, 128);
  EXPECT_EQ(s.sampling.temperature, 0.7);
  EXPECT_EQ(s.sampling.top_p, 0.95);
  EXPECT_EQ(s.sampling.max_tokens, 256.0);
  EXPECT_FALSE(s.sampling.top_k.has_value());
  EXPECT_EQ(StageOf(s, Stage::kQueue), 10'000'000);
  EXPECT_EQ(StageOf(s, Stage::kTtft), 120'000'000);
  EXPECT_EQ(StageOf(s, Stage::kE2e), 950'000'000);  // the attribute, not the 1 s span duration
  EXPECT_EQ(StageOf(s, Stage::kPrefill), 100'000'000);
  EXPECT_EQ(StageOf(s, Stage::kDecode), 800'000'000);
  EXPECT_EQ(StageOf(s, Stage::kInference), 900'000'000);
  EXPECT_EQ(r->counters.spans_received, 1u);
}

TEST(OtlpDecodeTest, StageMappingFallbacks) {
  // No e2e attribute: the span's own duration. No inference: prefill + decode.
  TestSpan s;
  s.name = "renamed_span";  // unknown name, but gen_ai.latency.* makes it a request span
  s.attributes = {KvDouble("gen_ai.latency.time_in_model_prefill", 0.2),
                  KvDouble("gen_ai.latency.time_in_model_decode", 0.3)};
  // Newer gen_ai names for token counts; request model when no response model.
  s.attributes.push_back(KvInt("gen_ai.usage.input_tokens", 7));
  s.attributes.push_back(KvInt("gen_ai.usage.output_tokens", 9));
  s.attributes.push_back(KvString("gen_ai.request.model", "m-req"));
  auto r = DecodeTracesProto(RequestBytes({s}), {}, Hasher());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->spans.size(), 1u);
  const SpanRecord& rec = r->spans[0];
  EXPECT_EQ(rec.role, SpanRole::kRequest);
  EXPECT_EQ(rec.name, "other");
  EXPECT_EQ(StageOf(rec, Stage::kE2e), 1'000'000'000);
  EXPECT_EQ(StageOf(rec, Stage::kInference), 500'000'000);
  EXPECT_EQ(StageOf(rec, Stage::kQueue), -1);
  EXPECT_EQ(rec.prompt_tokens, 7);
  EXPECT_EQ(rec.completion_tokens, 9);
  EXPECT_EQ(rec.model, "m-req");
  // No request id: the trace id stands in, hashed.
  EXPECT_EQ(rec.request_hash, Hasher().HashHex(std::string(16, '\x11')));
}

TEST(OtlpDecodeTest, SglangSpans) {
  TestSpan root;
  root.name = " Req 1a2b3c4d";
  root.attributes = {KvString("rid", "1a2b3c4d5e6f-secret-rid")};
  TestSpan prefill;
  prefill.name = "prefill_forward";
  prefill.end_ns = prefill.start_ns + 40'000'000;
  TestSpan waiting;
  waiting.name = "prefill_waiting";
  waiting.end_ns = waiting.start_ns + 5'000'000;
  TestSpan thread;
  thread.name = "Scheduler [TP 0] (host:abcdef12 | pid:123)";
  auto r = DecodeTracesProto(RequestBytes({root, prefill, waiting, thread}), {}, Hasher());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->spans.size(), 4u);
  EXPECT_EQ(r->spans[0].role, SpanRole::kRequest);
  EXPECT_EQ(r->spans[0].name, "sglang_request");
  EXPECT_EQ(r->spans[0].request_hash, Hasher().HashHex("1a2b3c4d5e6f-secret-rid"));
  EXPECT_EQ(StageOf(r->spans[0], Stage::kE2e), 1'000'000'000);
  EXPECT_EQ(r->spans[1].role, SpanRole::kStage);
  EXPECT_EQ(StageOf(r->spans[1], Stage::kPrefill), 40'000'000);
  EXPECT_EQ(StageOf(r->spans[1], Stage::kE2e), -1);
  EXPECT_EQ(StageOf(r->spans[2], Stage::kQueue), 5'000'000);
  EXPECT_EQ(r->spans[3].role, SpanRole::kOther);
  EXPECT_EQ(r->spans[3].name, "other");
}

// Prompt and completion text in attributes, events, span names and resource attributes must not
// reach any output.
TEST(OtlpDecodeTest, AllowlistDropsContentEverywhere) {
  std::string secret(kSecret);
  TestSpan s = VllmSpan();
  s.name = "llm_request " + secret;  // an unknown name is never kept
  s.attributes.push_back(KvString("gen_ai.prompt", secret + " tell me a story"));
  s.attributes.push_back(KvString("gen_ai.completion", "COMPLETION " + secret));
  s.attributes.push_back(KvString("gen_ai.input.messages", "[{\"content\":\"" + secret + "\"}]"));
  s.attributes.push_back(KvString("user.email", secret + "@example.com"));
  // A string where a number belongs: counted, not kept.
  s.attributes.push_back(KvString("gen_ai.request.top_k", secret));
  s.events.push_back(
      testing::EventBytes("gen_ai.content.prompt", {KvString("gen_ai.prompt", secret)}));
  std::string body =
      RequestBytes({s}, {KvString("service.name", "vllm"), KvString("host.name", secret)});
  auto r = DecodeTracesProto(body, {}, Hasher());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->spans.size(), 1u);
  EXPECT_EQ(r->counters.bad_attribute_values, 1u);
  SpanWindow w;
  w.Add(r->spans[0]);
  std::string json = w.ToJson();
  std::string text;
  RenderSpanText(w, &text);
  for (const std::string& out : {json, text}) {
    EXPECT_EQ(out.find("SECRET"), std::string::npos) << out;
    EXPECT_EQ(out.find("cmpl-raw-request-id-42"), std::string::npos) << out;
    EXPECT_EQ(out.find("example.com"), std::string::npos) << out;
  }
  EXPECT_NE(json.find(Hasher().HashHex("cmpl-raw-request-id-42")), std::string::npos);
  EXPECT_EQ(r->spans[0].name, "other");
}

TEST(OtlpDecodeTest, SkipsUnknownFields) {
  using testing::LenField;
  using testing::VarintField;
  TestSpan s = VllmSpan();
  std::string span = testing::SpanBytes(s) + VarintField(99, 7) + LenField(50, "future field") +
                     testing::Fixed64Field(60, 1) + LenField(13, "link bytes");
  std::string scope = LenField(2, span) + LenField(3, "schema-url");
  std::string body = LenField(1, LenField(2, scope) + VarintField(77, 1)) + LenField(9, "x");
  auto r = DecodeTracesProto(body, {}, Hasher());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->spans.size(), 1u);
  EXPECT_EQ(r->spans[0].prompt_tokens, 512);
}

TEST(OtlpDecodeTest, DeprecatedInstrumentationLibrarySpans) {
  using testing::LenField;
  std::string ils = LenField(2, testing::SpanBytes(VllmSpan()));
  auto r = DecodeTracesProto(LenField(1, LenField(1000, ils)), {}, Hasher());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->spans.size(), 1u);
}

TEST(OtlpDecodeTest, MalformedProtobufIsDataLoss) {
  std::string body = RequestBytes({VllmSpan()});
  for (size_t cut : {size_t{1}, body.size() / 2, body.size() - 1}) {
    auto r = DecodeTracesProto(body.substr(0, cut), {}, Hasher());
    EXPECT_FALSE(r.ok()) << cut;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), base::StatusCode::kDataLoss);
    }
  }
}

TEST(OtlpDecodeTest, BadTimestampsAreDroppedAndCounted) {
  TestSpan reversed = VllmSpan();
  std::swap(reversed.start_ns, reversed.end_ns);
  TestSpan zero = VllmSpan();
  zero.start_ns = 0;
  TestSpan two_days = VllmSpan();
  two_days.start_ns = two_days.end_ns - 2 * 86400ull * 1'000'000'000;
  auto r = DecodeTracesProto(RequestBytes({reversed, zero, two_days, VllmSpan()}), {}, Hasher());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->spans.size(), 1u);
  EXPECT_EQ(r->counters.spans_received, 4u);
  EXPECT_EQ(r->counters.spans_bad_timestamps, 3u);
}

TEST(OtlpDecodeTest, LimitsBoundSpansAttributesAndBody) {
  DecodeLimits limits;
  limits.max_spans_per_request = 2;
  limits.max_attributes_per_span = 3;
  std::string body = RequestBytes({VllmSpan(), VllmSpan(), VllmSpan(), VllmSpan()});
  auto r = DecodeTracesProto(body, limits, Hasher());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->spans.size(), 2u);
  EXPECT_EQ(r->counters.spans_received, 4u);
  EXPECT_EQ(r->counters.spans_over_limit, 2u);
  // Only the first 3 attributes of each kept span are looked at.
  EXPECT_EQ(r->counters.attributes_over_limit, 2u * (VllmSpan().attributes.size() - 3));
  EXPECT_EQ(r->spans[0].model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(r->spans[0].completion_tokens, -1);

  limits.max_body_bytes = body.size() - 1;
  auto big = DecodeTracesProto(body, limits, Hasher());
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), base::StatusCode::kInvalidArgument);
  auto big_json = DecodeTracesJson(std::string(body.size(), ' '), limits, Hasher());
  ASSERT_FALSE(big_json.ok());
  EXPECT_EQ(big_json.status().code(), base::StatusCode::kInvalidArgument);
}

TEST(OtlpDecodeTest, LongNamesAreCutAndSanitized) {
  TestSpan s = VllmSpan();
  s.attributes[0] = KvString("gen_ai.response.model", std::string(1000, 'm') + "\n");
  auto r = DecodeTracesProto(RequestBytes({s}), {}, Hasher());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->spans[0].model, std::string(kMaxNameBytes, 'm'));
  s.attributes.push_back(KvDouble("gen_ai.usage.completion_tokens", std::nan("")));
  s.attributes.push_back(KvDouble("gen_ai.usage.prompt_tokens", -3));
  r = DecodeTracesProto(RequestBytes({s}), {}, Hasher());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->counters.bad_attribute_values, 2u);  // NaN and negative token counts
  EXPECT_EQ(r->spans[0].completion_tokens, 128);    // the earlier valid value stays
  s.attributes[0] = KvString("gen_ai.response.model", "a\x01\xff");
  r = DecodeTracesProto(RequestBytes({s}), {}, Hasher());
  EXPECT_EQ(r->spans[0].model, "a??");
}

constexpr std::string_view kJsonRequest = R"({
  "resourceSpans": [{
    "resource": {"attributes": [
      {"key": "service.name", "value": {"stringValue": "vllm"}},
      {"key": "host.name", "value": {"stringValue": "PROMPT-SECRET-7f3a"}}]},
    "scopeSpans": [{
      "scope": {"name": "vllm.llm_engine"},
      "spans": [{
        "traceId": "11111111111111111111111111111111",
        "spanId": "2222222222222222",
        "name": "llm_request",
        "kind": 2,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [
          {"key": "gen_ai.response.model", "value": {"stringValue": "meta-llama/Llama-3.1-8B"}},
          {"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": "512"}},
          {"key": "gen_ai.usage.completion_tokens", "value": {"intValue": 128}},
          {"key": "gen_ai.request.temperature", "value": {"doubleValue": 0.7}},
          {"key": "gen_ai.latency.time_in_queue", "value": {"doubleValue": 0.01}},
          {"key": "gen_ai.latency.e2e", "value": {"doubleValue": 0.95}},
          {"key": "gen_ai.latency.time_to_first_token", "value": {"doubleValue": "NaN"}},
          {"key": "gen_ai.prompt", "value": {"stringValue": "PROMPT-SECRET-7f3a"}}],
        "events": [{"name": "prompt", "attributes": [
          {"key": "text", "value": {"stringValue": "PROMPT-SECRET-7f3a"}}]}],
        "status": {"code": 1}
      }, {
        "trace_id": "33333333333333333333333333333333",
        "name": "prefill_forward",
        "start_time_unix_nano": 1700000000000000000,
        "end_time_unix_nano": 1700000000040000000
      }]
    }]
  }]
})";

TEST(OtlpJsonDecodeTest, DecodesOtlpJsonMapping) {
  auto r = DecodeTracesJson(kJsonRequest, {}, Hasher());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->spans.size(), 2u);
  const SpanRecord& s = r->spans[0];
  EXPECT_EQ(s.role, SpanRole::kRequest);
  EXPECT_EQ(s.service, "vllm");
  EXPECT_EQ(s.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(s.prompt_tokens, 512);      // int64 as a string
  EXPECT_EQ(s.completion_tokens, 128);  // int64 as a number (accepted too)
  EXPECT_EQ(s.sampling.temperature, 0.7);
  EXPECT_EQ(StageOf(s, Stage::kQueue), 10'000'000);
  EXPECT_EQ(StageOf(s, Stage::kE2e), 950'000'000);
  EXPECT_EQ(StageOf(s, Stage::kTtft), -1);  // NaN is not a latency
  EXPECT_EQ(r->counters.bad_attribute_values, 1u);
  // Same trace id bytes as the protobuf tests: the same hash whichever encoding carried it.
  EXPECT_EQ(s.request_hash, Hasher().HashHex(std::string(16, '\x11')));
  // snake_case keys accepted.
  EXPECT_EQ(r->spans[1].role, SpanRole::kStage);
  EXPECT_EQ(StageOf(r->spans[1], Stage::kPrefill), 40'000'000);
  SpanWindow w;
  for (const auto& span : r->spans) w.Add(span);
  EXPECT_EQ(w.ToJson().find("SECRET"), std::string::npos);
}

TEST(OtlpJsonDecodeTest, ErrorsAndEdgeCases) {
  EXPECT_EQ(DecodeTracesJson("{", {}, Hasher()).status().code(), base::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeTracesJson("[]", {}, Hasher()).status().code(), base::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeTracesJson(R"({"resourceSpans": 5})", {}, Hasher()).status().code(),
            base::StatusCode::kDataLoss);
  EXPECT_EQ(
      DecodeTracesJson(R"({"resourceSpans": [{"scopeSpans": [{"spans": [7]}]}]})", {}, Hasher())
          .status()
          .code(),
      base::StatusCode::kDataLoss);
  auto empty = DecodeTracesJson("{}", {}, Hasher());
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->spans.empty());
  // Times that are not integers: the span is dropped as having bad timestamps.
  auto bad_time = DecodeTracesJson(
      R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request",
          "startTimeUnixNano":"12x","endTimeUnixNano":"5"}]}]}]})",
      {}, Hasher());
  ASSERT_TRUE(bad_time.ok());
  EXPECT_EQ(bad_time->counters.spans_bad_timestamps, 1u);
}

TEST(GunzipTest, InflatesGzipAndZlib) {
  std::string body = RequestBytes({VllmSpan(), VllmSpan()});
  for (int bits : {15 + 16, 15}) {
    auto out = Gunzip(::inferscope::testing::Compress(body, bits), 1 << 20);
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ(*out, body);
  }
}

TEST(GunzipTest, RefusesBombsAndCorruption) {
  std::string zeros(4 << 20, '\0');
  std::string gz = ::inferscope::testing::Gzip(zeros);
  EXPECT_LT(gz.size(), 10000u);
  auto bomb = Gunzip(gz, 1 << 20);
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.status().code(), base::StatusCode::kInvalidArgument);
  auto truncated = Gunzip(std::string_view(gz).substr(0, gz.size() / 2), 8 << 20);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), base::StatusCode::kDataLoss);
  EXPECT_FALSE(Gunzip("not gzip at all", 1 << 20).ok());
  EXPECT_FALSE(Gunzip("", 1 << 20).ok());
}

}  // namespace
}  // namespace inferscope::telemetry::otlp
