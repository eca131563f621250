// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/step_phase.h"

#include <optional>

namespace inferscope::model {

namespace {

// The engines' per-iteration range names (facts read from their public sources):
//  - TensorRT-LLM, PyTorch backend, tensorrt_llm/_torch/pyexecutor/py_executor.py
//    (PyExecutor._forward_step): an NVTX range per iteration named
//    "[Executor] _forward_step N: X ctx reqs, Y gen reqs" (N the iteration counter, X the
//    context (prefill) requests, Y the generation (decode) requests scheduled); older releases
//    wrote "[Executor] _forward_step: X ctx reqs, Y gen reqs" and, earlier still, without the
//    "[Executor] " tag.
//  - vLLM v1, vllm/v1/worker/gpu_worker.py (Worker.annotate_profile): around execute_model, with
//    the torch or the CUDA (NVTX) profiler on, a range
//    "execute_context_X(T)_generation_Y(U)" (X context requests of T tokens, Y generation
//    requests of U tokens).
//  - SGLang: --enable-layerwise-nvtx-marker marks modules, not iterations; its stage profiles
//    (the shared TraceLens B300 decode traces) carry "execute_B_context_X(..)_generation_Y(..)"
//    and "step[DECODE bs=B]" annotations. Its forward modes are "extend" (prefill) and "decode",
//    the words matched below. Neither is a default step prefix: `--step-range` names them.
const std::vector<std::string> kDefaultStepPrefixes = {
    "ProfilerStep#",
    "[Executor] _forward_step",
    "_forward_step",
    "execute_context_",
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The decimal number starting at `at` in `s`.
std::optional<uint64_t> NumberAt(std::string_view s, size_t at) {
  size_t end = at;
  while (end < s.size() && IsDigit(s[end])) ++end;
  if (end == at || end - at > 18) return std::nullopt;
  uint64_t v = 0;
  for (size_t i = at; i < end; ++i) v = v * 10 + static_cast<uint64_t>(s[i] - '0');
  return v;
}

// The decimal number ending right before `at` in `s` ("12 ctx reqs": the 12).
std::optional<uint64_t> NumberBefore(std::string_view s, size_t at) {
  size_t begin = at;
  while (begin > 0 && IsDigit(s[begin - 1])) --begin;
  return NumberAt(s, begin);  // its digits end at `at`
}

// Prefill (context) and decode (generation) request counts, when the name carries them.
bool RequestCounts(std::string_view name, uint64_t* context, uint64_t* generation) {
  // TensorRT-LLM: "... X ctx reqs, Y gen reqs".
  if (const size_t ctx = name.find(" ctx reqs"); ctx != std::string_view::npos) {
    const size_t gen = name.find(" gen reqs", ctx);
    if (gen == std::string_view::npos) return false;
    const auto c = NumberBefore(name, ctx);
    const auto g = NumberBefore(name, gen);
    if (!c || !g) return false;
    *context = *c;
    *generation = *g;
    return true;
  }
  // vLLM: "execute_context_X(T)_generation_Y(U)"; SGLang's stage profiles (the shared TraceLens
  // B300 decode traces) write "execute_B_context_X(..)_generation_Y(..)" (B the batch size).
  constexpr std::string_view kExecute = "execute_";
  constexpr std::string_view kContext = "context_";
  constexpr std::string_view kGeneration = "_generation_";
  if (name.starts_with(kExecute)) {
    size_t ctx = kExecute.size();
    while (ctx < name.size() && IsDigit(name[ctx])) ++ctx;
    if (ctx > kExecute.size()) {
      if (ctx >= name.size() || name[ctx] != '_') return false;
      ++ctx;
    }
    if (name.substr(ctx, kContext.size()) != kContext) return false;
    const size_t gen = name.find(kGeneration, ctx + kContext.size());
    if (gen == std::string_view::npos) return false;
    const auto c = NumberAt(name, ctx + kContext.size());
    const auto g = NumberAt(name, gen + kGeneration.size());
    if (!c || !g) return false;
    *context = *c;
    *generation = *g;
    return true;
  }
  return false;
}

bool ContainsNoCase(std::string_view text, std::string_view lower_word) {
  if (lower_word.size() > text.size()) return false;
  for (size_t i = 0; i + lower_word.size() <= text.size(); ++i) {
    size_t j = 0;
    while (j < lower_word.size()) {
      char c = text[i + j];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != lower_word[j]) break;
      ++j;
    }
    if (j == lower_word.size()) return true;
  }
  return false;
}

}  // namespace

const std::vector<std::string>& DefaultStepPrefixes() { return kDefaultStepPrefixes; }

bool IsStepName(std::string_view name, const std::vector<std::string>& prefixes) {
  for (const std::string& prefix : prefixes)
    if (!prefix.empty() && name.starts_with(prefix)) return true;
  return false;
}

Phase PhaseOfAttention(uint8_t attention_kinds) {
  switch (attention_kinds) {
    case 1:
      return Phase::kPrefill;
    case 2:
      return Phase::kDecode;
    case 3:
      return Phase::kMixed;
    default:
      return Phase::kUnknown;
  }
}

Phase PhaseOfStepName(std::string_view name) {
  uint64_t context = 0, generation = 0;
  if (RequestCounts(name, &context, &generation)) {
    if (context > 0 && generation > 0) return Phase::kMixed;
    if (context > 0) return Phase::kPrefill;
    if (generation > 0) return Phase::kDecode;
    return Phase::kUnknown;  // an empty iteration: the kernels may still tell
  }
  if (ContainsNoCase(name, "prefill") || ContainsNoCase(name, "extend")) return Phase::kPrefill;
  if (ContainsNoCase(name, "decode")) return Phase::kDecode;
  return Phase::kUnknown;
}

Phase PhaseOfStep(std::string_view name, uint8_t attention_kinds) {
  const Phase by_name = PhaseOfStepName(name);
  return by_name != Phase::kUnknown ? by_name : PhaseOfAttention(attention_kinds);
}

}  // namespace inferscope::model
