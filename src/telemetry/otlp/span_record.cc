// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/otlp/span_record.h"

#include <cmath>
#include <random>

namespace inferscope::telemetry::otlp {

std::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kQueue:
      return "queue";
    case Stage::kPrefill:
      return "prefill";
    case Stage::kDecode:
      return "decode";
    case Stage::kInference:
      return "inference";
    case Stage::kTtft:
      return "ttft";
    case Stage::kE2e:
      return "e2e";
  }
  return "unknown";
}

AttrSlot ClassifySpanAttribute(std::string_view key) {
  struct Entry {
    std::string_view key;
    AttrSlot slot;
  };
  // Exact keys only: a prefix rule (say gen_ai.request.*) would let new free-text attributes in.
  static constexpr Entry kAllowlist[] = {
      {"gen_ai.response.model", AttrSlot::kModel},
      {"gen_ai.request.model", AttrSlot::kRequestModel},
      {"gen_ai.request.id", AttrSlot::kRequestId},
      {"rid", AttrSlot::kRequestId},  // SGLang's root request span
      {"gen_ai.usage.prompt_tokens", AttrSlot::kPromptTokens},
      {"gen_ai.usage.input_tokens", AttrSlot::kPromptTokens},
      {"gen_ai.usage.completion_tokens", AttrSlot::kCompletionTokens},
      {"gen_ai.usage.output_tokens", AttrSlot::kCompletionTokens},
      {"gen_ai.request.temperature", AttrSlot::kTemperature},
      {"gen_ai.request.top_p", AttrSlot::kTopP},
      {"gen_ai.request.top_k", AttrSlot::kTopK},
      {"gen_ai.request.max_tokens", AttrSlot::kMaxTokens},
      {"gen_ai.request.n", AttrSlot::kN},
      {"gen_ai.request.best_of", AttrSlot::kBestOf},
      {"gen_ai.latency.time_in_queue", AttrSlot::kLatencyQueue},
      {"gen_ai.latency.time_in_model_prefill", AttrSlot::kLatencyPrefill},
      {"gen_ai.latency.time_in_model_decode", AttrSlot::kLatencyDecode},
      {"gen_ai.latency.time_in_model_inference", AttrSlot::kLatencyInference},
      {"gen_ai.latency.time_to_first_token", AttrSlot::kLatencyTtft},
      {"gen_ai.latency.e2e", AttrSlot::kLatencyE2e},
  };
  for (const Entry& e : kAllowlist) {
    if (e.key == key) return e.slot;
  }
  // Other engine latencies (time_in_scheduler, time_in_model_forward/execute, TRT-LLM's
  // kv_cache_transfer_time) are numbers too; they only mark the span as a request span.
  if (key.starts_with("gen_ai.latency.")) return AttrSlot::kLatencyOther;
  return AttrSlot::kNone;
}

namespace {

// SGLang names its root span "<role> Req <first 8 chars of rid>" with role empty, "prefill" or
// "decode" (python/sglang/srt/tracing/trace.py). The name embeds request-id characters, so it is
// recognized by shape and never kept.
bool IsSglangRequestName(std::string_view name) {
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  for (std::string_view role : {"prefill ", "decode ", "null "}) {
    if (name.starts_with(role)) {
      name.remove_prefix(role.size());
      break;
    }
  }
  if (!name.starts_with("Req ")) return false;
  name.remove_prefix(4);
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

SpanNameInfo ClassifySpanName(std::string_view name) {
  struct Entry {
    std::string_view name;
    SpanRole role;
    std::optional<Stage> stage;
  };
  static const Entry kKnown[] = {
      // vLLM (and TensorRT-LLM, whose tracing is adapted from vLLM's): one span per request.
      {"llm_request", SpanRole::kRequest, std::nullopt},
      // SGLang per-stage slices (RequestStage in sglang/srt/.../req_time_stats.py).
      {"prefill_waiting", SpanRole::kStage, Stage::kQueue},
      {"prefill_forward", SpanRole::kStage, Stage::kPrefill},
      {"decode_forward", SpanRole::kStage, Stage::kDecode},
      {"decode_loop", SpanRole::kStage, Stage::kDecode},
      {"tokenize", SpanRole::kStage, std::nullopt},
      {"dispatch", SpanRole::kStage, std::nullopt},
      {"api_server_dispatch", SpanRole::kStage, std::nullopt},
      {"dc_dispatch", SpanRole::kStage, std::nullopt},
      {"dpc_dispatch", SpanRole::kStage, std::nullopt},
      {"request_process", SpanRole::kStage, std::nullopt},
      {"chunked_prefill", SpanRole::kStage, std::nullopt},
      {"prefill_prepare", SpanRole::kStage, std::nullopt},
      {"prefill_bootstrap", SpanRole::kStage, std::nullopt},
      {"prefill_transfer_kv_cache", SpanRole::kStage, std::nullopt},
      {"decode_prepare", SpanRole::kStage, std::nullopt},
      {"decode_bootstrap", SpanRole::kStage, std::nullopt},
      {"decode_waiting", SpanRole::kStage, std::nullopt},
  };
  for (const Entry& e : kKnown) {
    if (e.name == name) return {e.name, e.role, e.stage};
  }
  if (IsSglangRequestName(name)) return {"sglang_request", SpanRole::kRequest, std::nullopt};
  return {};
}

namespace {

inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct SipState {
  uint64_t v0, v1, v2, v3;
  void Round() {
    v0 += v1;
    v1 = Rotl(v1, 13);
    v1 ^= v0;
    v0 = Rotl(v0, 32);
    v2 += v3;
    v3 = Rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = Rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = Rotl(v1, 17);
    v1 ^= v2;
    v2 = Rotl(v2, 32);
  }
  void Absorb(uint64_t m) {
    v3 ^= m;
    Round();
    Round();
    v0 ^= m;
  }
};

uint64_t LoadLe64(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

RequestIdHasher::RequestIdHasher() {
  std::random_device rd;  // getrandom(2) on Linux
  k0_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  k1_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

uint64_t RequestIdHasher::Hash(std::string_view bytes) const {
  // SipHash-2-4 (Aumasson and Bernstein): a keyed PRF, so hashes cannot be precomputed for
  // guessed ids without the per-agent key.
  SipState s{k0_ ^ 0x736f6d6570736575ull, k1_ ^ 0x646f72616e646f6dull, k0_ ^ 0x6c7967656e657261ull,
             k1_ ^ 0x7465646279746573ull};
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  size_t full = n - n % 8;
  for (size_t i = 0; i < full; i += 8) s.Absorb(LoadLe64(p + i, 8));
  uint64_t last = (static_cast<uint64_t>(n & 0xff) << 56) | LoadLe64(p + full, n - full);
  s.Absorb(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.Round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

std::string RequestIdHasher::HashHex(std::string_view bytes) const {
  static constexpr char kHex[] = "0123456789abcdef";
  uint64_t h = Hash(bytes);
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHex[h & 0xf];
    h >>= 4;
  }
  return out;
}

std::string SanitizeName(std::string_view name) {
  std::string out;
  out.reserve(std::min(name.size(), kMaxNameBytes));
  for (char c : name) {
    if (out.size() >= kMaxNameBytes) break;
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  return out;
}

std::optional<int64_t> SecondsToNs(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 86400.0) return std::nullopt;
  return static_cast<int64_t>(std::llround(seconds * 1e9));
}

std::optional<double> QuantizeParam(double value) {
  if (!std::isfinite(value) || std::fabs(value) > 1e12) return std::nullopt;
  double q = std::round(value * 1e4) / 1e4;
  return q == 0 ? 0.0 : q;  // no -0
}

}  // namespace inferscope::telemetry::otlp
