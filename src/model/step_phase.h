// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The shared vocabulary of steps and forward phases: which host ranges are steps (iterations) and
// which phase a step ran. The offline steps view (src/aggregate/view_collector.cc) and the live
// windows (the Aggregator's step ranges) both use it, so a step gets one phase whichever path
// counted it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/profile.h"

namespace inferscope::model {

// Prefixes of the host range names that are steps when nothing else is asked for: Kineto's
// `ProfilerStep#N` and the engines' own per-iteration ranges (TensorRT-LLM's PyTorch executor,
// vLLM's profiler annotation; see step_phase.cc for the formats and where they come from).
const std::vector<std::string>& DefaultStepPrefixes();

// Whether `name` starts with one of `prefixes` (an empty prefix matches nothing).
bool IsStepName(std::string_view name, const std::vector<std::string>& prefixes);

// The phase of a step from the attention kernels it ran (bit 1: attention.prefill, bit 2:
// attention.decode): prefill, decode, both mixed (chunked prefill batches them), neither unknown.
Phase PhaseOfAttention(uint8_t attention_kinds);

// A step's forward phase: the engine's own words in the range name first, else the attention
// kernels it launched (PhaseOfAttention). The words, in this order:
//  - request counts per iteration (TensorRT-LLM "X ctx reqs, Y gen reqs", vLLM
//    "execute_context_X(..)_generation_Y(..)"): context requests only prefill, generation
//    requests only decode, both mixed; no requests at all say nothing;
//  - "prefill" or "extend" (SGLang's name for a prefill forward) prefill, "decode" decode,
//    case-insensitively.
Phase PhaseOfStep(std::string_view name, uint8_t attention_kinds);

// The phase a step's name alone gives (no kernels): kUnknown when the name says nothing.
Phase PhaseOfStepName(std::string_view name);

}  // namespace inferscope::model
