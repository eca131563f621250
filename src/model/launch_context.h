// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The launching-context rule: a kernel whose name the KernelClassifier cannot place (other/other,
// "no evidence") takes the category of what launched it, when that says what the kernel does: the
// CPU operator (Kineto cpu_op "aten::mm", "_C::rms_norm", "vllm::unified_attention"), else the
// enclosing user annotation / NVTX range or nn.Module ("nn.Module: LlamaAttention_0"). The table is
// small and ordered (first match wins); docs/taxonomy.md, "Launching context", lists it.

#include <string_view>

#include "src/model/taxonomy.h"

namespace inferscope::model {

// How a kernel got its category: from its own name, from its launching context, or neither.
enum class ClassifiedBy : uint8_t { kName = 0, kContext, kNone };
inline constexpr const char* kClassifiedByNames[] = {"name", "context", "none"};

// The category a launching operator's name implies; other/other when the table has no entry.
// Operator names are matched exactly or by a `namespace::` prefix (the table says which).
Classification ClassifyOperatorContext(std::string_view op_name);

// The category an enclosing module or annotation name implies ("nn.Module: LlamaAttention_0",
// "LlamaMLP", "RMSNorm"): case-insensitive word patterns; other/other when none matches.
Classification ClassifyRangeContext(std::string_view range_name);

// The rule itself: the name's classification when it placed the kernel; else the operator's,
// else the range's (an empty view means "none"). `*by` says which decided.
Classification ApplyLaunchContext(const Classification& by_name, std::string_view op_name,
                                  std::string_view range_name, ClassifiedBy* by);

}  // namespace inferscope::model
