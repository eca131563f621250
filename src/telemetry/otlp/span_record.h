// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// What survives of one OTLP span once it is decoded: the privacy allowlist, the keyed request-id
// hash and the mapping from engine attributes and span names to request stages.
// docs/request-spans.md documents all three for users.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace inferscope::telemetry::otlp {

// The request stages we summarize. Durations come from engine attributes (vLLM and TensorRT-LLM
// gen_ai.latency.*) or from the span's own start/end (SGLang stage spans, e2e fallback).
enum class Stage : uint8_t { kQueue = 0, kPrefill, kDecode, kInference, kTtft, kE2e };
inline constexpr size_t kStageCount = 6;
std::string_view StageName(Stage stage);

// How a span is used: a whole request (vLLM/TRT-LLM `llm_request`, SGLang's root `Req ...`
// span), one stage of a request (SGLang's per-stage child spans), or nothing we summarize.
enum class SpanRole : uint8_t { kOther = 0, kRequest, kStage };

// Attributes that survive decoding. Anything not listed here is skipped on the wire without
// being copied (docs/request-spans.md: "The allowlist").
enum class AttrSlot : uint8_t {
  kNone = 0,
  kModel,             // gen_ai.response.model (preferred: what actually served the request)
  kRequestModel,      // gen_ai.request.model (used when no response model is reported)
  kRequestId,         // gen_ai.request.id, SGLang `rid`: hashed, never kept
  kPromptTokens,      // gen_ai.usage.prompt_tokens, gen_ai.usage.input_tokens
  kCompletionTokens,  // gen_ai.usage.completion_tokens, gen_ai.usage.output_tokens
  kTemperature,       // gen_ai.request.temperature
  kTopP,              // gen_ai.request.top_p
  kTopK,              // gen_ai.request.top_k
  kMaxTokens,         // gen_ai.request.max_tokens
  kN,                 // gen_ai.request.n
  kBestOf,            // gen_ai.request.best_of
  kLatencyQueue,      // gen_ai.latency.time_in_queue
  kLatencyPrefill,    // gen_ai.latency.time_in_model_prefill
  kLatencyDecode,     // gen_ai.latency.time_in_model_decode
  kLatencyInference,  // gen_ai.latency.time_in_model_inference
  kLatencyTtft,       // gen_ai.latency.time_to_first_token
  kLatencyE2e,        // gen_ai.latency.e2e
  kLatencyOther,      // any other gen_ai.latency.* (marks a request span; value unused)
};
AttrSlot ClassifySpanAttribute(std::string_view key);

// The canonical name a span keeps: one of a few known engine span names, "sglang_request" for
// SGLang's root span (whose real name embeds part of the request id), else "other". The role
// and, for stage spans, the stage they measure come with it.
struct SpanNameInfo {
  std::string_view canonical = "other";
  SpanRole role = SpanRole::kOther;
  std::optional<Stage> stage;
};
SpanNameInfo ClassifySpanName(std::string_view name);

// Keyed 64-bit hash (SipHash-2-4) of request identifiers. The key is random per agent, so the
// hash links spans of one request inside this agent's store but cannot be reversed or matched
// against a guessed id without the key, which never leaves memory.
class RequestIdHasher {
 public:
  RequestIdHasher();                                               // random key from the OS
  RequestIdHasher(uint64_t k0, uint64_t k1) : k0_(k0), k1_(k1) {}  // fixed key (tests)

  uint64_t Hash(std::string_view bytes) const;
  // 16 lowercase hex digits.
  std::string HashHex(std::string_view bytes) const;

 private:
  uint64_t k0_ = 0;
  uint64_t k1_ = 0;
};

// Sampling parameters, numbers only, quantized to 1e-4 so they round-trip exactly through JSON.
struct SamplingParams {
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<double> top_k;
  std::optional<double> max_tokens;
  std::optional<double> n;
  std::optional<double> best_of;

  bool operator==(const SamplingParams&) const = default;
};

// One decoded span after the allowlist: no free text survives except model and service names
// (bounded in length) and canonical span names.
struct SpanRecord {
  SpanRole role = SpanRole::kOther;
  std::string name;  // canonical (ClassifySpanName)
  uint64_t start_unix_ns = 0;
  uint64_t end_unix_ns = 0;
  std::string request_hash;  // 16 hex digits (request spans)
  std::string model;
  std::string service;
  int64_t prompt_tokens = -1;  // -1: not reported
  int64_t completion_tokens = -1;
  SamplingParams sampling;
  std::array<int64_t, kStageCount> stage_ns{-1, -1, -1, -1, -1, -1};  // -1: not measured
};

// Longest model or service name kept; longer ones are cut (names, not content, live here).
inline constexpr size_t kMaxNameBytes = 128;

// Copies a model/service name keeping printable ASCII only and at most kMaxNameBytes.
std::string SanitizeName(std::string_view name);

// Converts an attribute latency in seconds to ns; nullopt when negative, non-finite or absurd
// (more than a day).
std::optional<int64_t> SecondsToNs(double seconds);

// Rounds a sampling parameter to 1e-4 (nullopt when non-finite or out of a sane range).
std::optional<double> QuantizeParam(double value);

}  // namespace inferscope::telemetry::otlp
