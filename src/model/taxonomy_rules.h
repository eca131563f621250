// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The built-in kernel classification rules (internal to the taxonomy; see docs/taxonomy.md).

#include <span>
#include <string_view>

#include "src/model/taxonomy.h"

namespace inferscope::model {

// How a rule's pattern is compared with the lower-cased, demangled kernel name.
enum class MatchKind : uint8_t {
  kContains,  // substring anywhere
  kToken,     // substring whose neighbours are not [a-z0-9] ("top_k" does not match "stop_k1")
  kPrefix,    // the name starts with the pattern
  kExact,     // the whole name equals the pattern
  kRegex,     // ECMAScript regex search (user rules only; never in the built-in table)
  // An Inductor kernel (triton_{poi,red,per}_fused_<ops>_<n>) whose ops are all data movement
  // (cat, clone, _to_copy, index, view, ...). Built-in only; the pattern is unused.
  kInductorDataMovement,
};

// One row of the built-in table. Patterns are lower-case. `also`, when not empty, is a token that
// must also be present (kToken semantics), e.g. {kPrefix "triton_", also "rsqrt"}.
struct BuiltinRule {
  MatchKind kind;
  std::string_view pattern;
  std::string_view also;
  Category category;
  std::string_view subcategory;
  std::string_view why;
};

// The ordered built-in table: first match wins.
std::span<const BuiltinRule> BuiltinRules();

// Case-sensitive matching helpers over an already lower-cased name (exposed for tests).
bool ContainsToken(std::string_view haystack, std::string_view token);
bool MatchesPattern(MatchKind kind, std::string_view lowered_name, std::string_view pattern);
// True for a lower-cased Inductor name whose fused op list is made only of data-movement ops.
bool IsInductorDataMovement(std::string_view lowered_name);

}  // namespace inferscope::model
