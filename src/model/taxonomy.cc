// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/model/taxonomy.h"

#include <algorithm>
#include <bitset>
#include <deque>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "src/model/kernel_names.h"
#include "src/model/name_table.h"
#include "src/model/taxonomy_rules.h"

namespace inferscope::model {
namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool IsWordChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// A subcategory is `<category>` or `<category>.<seg>[.<seg>...]` with [a-z0-9_] segments.
bool ParseCategorySpec(std::string_view spec, Category* category) {
  const size_t dot = spec.find('.');
  if (!ParseCategory(spec.substr(0, dot), category)) return false;
  if (dot == std::string_view::npos) return true;
  std::string_view rest = spec.substr(dot + 1);
  if (rest.empty() || rest.back() == '.') return false;
  for (char c : rest) {
    if (!(IsWordChar(c) || c == '_' || c == '.')) return false;
  }
  return rest.find("..") == std::string_view::npos;
}

// Bigram prefilter: a 1024-bit set of the name's hashed character pairs lets most rules be rejected
// with three bit tests instead of a substring scan (the table has ~300 rows).
using BigramSet = std::bitset<1024>;
inline size_t BigramHash(char a, char b) {
  return (static_cast<size_t>(static_cast<unsigned char>(a)) * 37u +
          static_cast<unsigned char>(b)) &
         1023u;
}
BigramSet NameBigrams(std::string_view s) {
  BigramSet set;
  for (size_t i = 1; i < s.size(); ++i) set.set(BigramHash(s[i - 1], s[i]));
  return set;
}
// Up to six bigram hashes spread over a rule's pattern (first, last and evenly between): kernel
// names share many bigrams ("ke", "er", "el"), so three probes let too many rows through to a
// substring scan once the table grew past 500 rows.
struct RuleFilter {
  uint8_t count = 0;  // 0: no filter (pattern shorter than 2)
  uint16_t h[6] = {0, 0, 0, 0, 0, 0};
};
RuleFilter MakeFilter(std::string_view pattern) {
  RuleFilter f;
  if (pattern.size() < 2) return f;
  const size_t bigrams = pattern.size() - 1;  // bigram i = pattern[i], pattern[i + 1]
  const size_t n = std::min<size_t>(6, bigrams);
  for (size_t k = 0; k < n; ++k) {
    const size_t i = n == 1 ? 0 : k * (bigrams - 1) / (n - 1);
    f.h[f.count++] = static_cast<uint16_t>(BigramHash(pattern[i], pattern[i + 1]));
  }
  return f;
}
bool MayMatch(const RuleFilter& f, const BigramSet& set) {
  for (uint8_t k = 0; k < f.count; ++k) {
    if (!set.test(f.h[k])) return false;
  }
  return true;
}

// See Classify(): how much of the demangled name the built-in rules look at.
constexpr size_t kMatchPrefixBytes = 384;

}  // namespace

bool ContainsToken(std::string_view haystack, std::string_view token) {
  if (token.empty()) return true;
  size_t pos = haystack.find(token);
  while (pos != std::string_view::npos) {
    const bool left_ok = pos == 0 || !IsWordChar(haystack[pos - 1]);
    const size_t end = pos + token.size();
    const bool right_ok = end == haystack.size() || !IsWordChar(haystack[end]);
    if (left_ok && right_ok) return true;
    pos = haystack.find(token, pos + 1);
  }
  return false;
}

bool MatchesPattern(MatchKind kind, std::string_view name, std::string_view pattern) {
  switch (kind) {
    case MatchKind::kContains:
      return name.find(pattern) != std::string_view::npos;
    case MatchKind::kToken:
      return ContainsToken(name, pattern);
    case MatchKind::kPrefix:
      return name.substr(0, pattern.size()) == pattern;
    case MatchKind::kExact:
      return name == pattern;
    case MatchKind::kRegex:
      return false;  // regexes are compiled per user rule; see UserRule
    case MatchKind::kInductorDataMovement:
      return IsInductorDataMovement(name);
  }
  return false;
}

bool IsInductorDataMovement(std::string_view name) {
  // Inductor names its kernels after the aten ops it fused, in order: triton_poi_fused_cat_2,
  // triton_poi_fused__unsafe_view_clone_transpose_3. Templates (triton_tem_) are GEMMs.
  std::string_view ops;
  for (std::string_view prefix : {"triton_poi_fused_", "triton_red_fused_", "triton_per_fused_"}) {
    if (name.substr(0, prefix.size()) == prefix) ops = name.substr(prefix.size());
  }
  if (ops.empty()) return false;
  // Drop the trailing "_<n>" kernel counter.
  size_t end = ops.size();
  while (end > 0 && ops[end - 1] >= '0' && ops[end - 1] <= '9') --end;
  if (end == ops.size() || end == 0 || ops[end - 1] != '_') return false;
  ops = ops.substr(0, end - 1);
  // Ops that only move or re-lay-out data (longest first where one is a prefix of another).
  static constexpr std::string_view kMovementOps[] = {"split_with_sizes",
                                                      "constant_pad_nd",
                                                      "select_scatter",
                                                      "slice_scatter",
                                                      "index_select",
                                                      "as_strided",
                                                      "lift_fresh",
                                                      "unsafe_view",
                                                      "index_put",
                                                      "new_zeros",
                                                      "unsqueeze",
                                                      "transpose",
                                                      "to_copy",
                                                      "squeeze",
                                                      "permute",
                                                      "reshape",
                                                      "scatter",
                                                      "diagonal",
                                                      "narrow",
                                                      "gather",
                                                      "expand",
                                                      "select",
                                                      "detach",
                                                      "unbind",
                                                      "repeat",
                                                      "alias",
                                                      "clone",
                                                      "index",
                                                      "slice",
                                                      "split",
                                                      "stack",
                                                      "zeros",
                                                      "empty",
                                                      "full",
                                                      "fill",
                                                      "view",
                                                      "copy",
                                                      "flip",
                                                      "roll",
                                                      "cat",
                                                      "t"};
  for (int matched_ops = 0;; ++matched_ops) {
    while (!ops.empty() && ops.front() == '_') ops.remove_prefix(1);
    if (ops.empty()) return matched_ops > 0;
    bool matched = false;
    for (std::string_view op : kMovementOps) {
      if (ops.substr(0, op.size()) == op && (ops.size() == op.size() || ops[op.size()] == '_')) {
        ops.remove_prefix(op.size());
        matched = true;
        break;
      }
    }
    if (!matched) return false;
  }
}

std::string_view CategoryName(Category category) {
  const int i = static_cast<int>(category);
  return (i >= 0 && i < kCategoryCount) ? kCategoryNames[i] : "other";
}

bool ParseCategory(std::string_view name, Category* category) {
  for (int i = 0; i < kCategoryCount; ++i) {
    if (name == kCategoryNames[i]) {
      *category = static_cast<Category>(i);
      return true;
    }
  }
  return false;
}

// A user rule: owns its strings; regex rules carry a compiled std::regex (icase).
struct UserRule {
  MatchKind kind;
  std::string pattern;  // lower-cased for non-regex kinds
  std::optional<std::regex> regex;
  Category category;
  std::string subcategory;
};

struct KernelClassifier::Impl {
  std::deque<UserRule> user_rules;  // deque: Classification string_views stay valid on append
  std::vector<RuleFilter> builtin_filters;  // parallel to BuiltinRules()

  Impl() {
    for (const BuiltinRule& rule : BuiltinRules())
      builtin_filters.push_back(MakeFilter(rule.pattern));
  }

  Classification ClassifyLowered(std::string_view lowered, std::string_view original) const {
    for (const UserRule& rule : user_rules) {
      const bool hit = rule.kind == MatchKind::kRegex
                           ? std::regex_search(original.begin(), original.end(), *rule.regex)
                           : MatchesPattern(rule.kind, lowered, rule.pattern);
      if (hit) return {rule.category, rule.subcategory};
    }
    const BigramSet bigrams = NameBigrams(lowered);
    const std::span<const BuiltinRule> rules = BuiltinRules();
    for (size_t i = 0; i < rules.size(); ++i) {
      const BuiltinRule& rule = rules[i];
      if (!MayMatch(builtin_filters[i], bigrams)) continue;
      if (MatchesPattern(rule.kind, lowered, rule.pattern) &&
          (rule.also.empty() || ContainsToken(lowered, rule.also))) {
        return {rule.category, rule.subcategory};
      }
    }
    return {};
  }
};

KernelClassifier::KernelClassifier() : impl_(std::make_unique<Impl>()) {}
KernelClassifier::~KernelClassifier() = default;

base::Status KernelClassifier::LoadRuleFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return base::NotFoundError("cannot open rule file " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return LoadRuleText(buffer.str(), path);
}

base::Status KernelClassifier::LoadRuleText(std::string_view text, std::string_view origin) {
  // Parse everything first so that a bad file adds no rules at all.
  std::vector<UserRule> parsed;
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    line = Trim(line);
    if (line.empty() || line.front() == '#') continue;
    auto error = [&](const std::string& what) {
      return base::InvalidArgumentError(std::string(origin) + ":" + std::to_string(line_no) + ": " +
                                        what);
    };
    const size_t first_space = line.find_first_of(" \t");
    const size_t last_space = line.find_last_of(" \t");
    if (first_space == std::string_view::npos || first_space == last_space) {
      return error("expected '<contains|token|prefix|exact|regex> <pattern> <category>[.<sub>]'");
    }
    const std::string_view kind_text = line.substr(0, first_space);
    const std::string_view pattern = Trim(line.substr(first_space, last_space - first_space));
    const std::string_view spec = line.substr(last_space + 1);
    UserRule rule;
    if (kind_text == "contains") {
      rule.kind = MatchKind::kContains;
    } else if (kind_text == "token") {
      rule.kind = MatchKind::kToken;
    } else if (kind_text == "prefix") {
      rule.kind = MatchKind::kPrefix;
    } else if (kind_text == "exact") {
      rule.kind = MatchKind::kExact;
    } else if (kind_text == "regex") {
      rule.kind = MatchKind::kRegex;
    } else {
      return error("unknown match kind '" + std::string(kind_text) +
                   "' (want contains, token, prefix, exact or regex)");
    }
    if (pattern.empty()) return error("empty pattern");
    if (!ParseCategorySpec(spec, &rule.category)) {
      return error("invalid category '" + std::string(spec) +
                   "' (want one of attention, matmul, moe, communication, kv_cache, "
                   "quantization, normalization, activation, positional, sampling, memory, "
                   "elementwise, embedding, other, optionally followed by .<sub>)");
    }
    rule.subcategory = std::string(spec);
    if (rule.kind == MatchKind::kRegex) {
      try {
        rule.regex.emplace(std::string(pattern),
                           std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
      } catch (const std::regex_error& e) {
        return error("invalid regex '" + std::string(pattern) + "': " + e.what());
      }
      rule.pattern = std::string(pattern);
    } else {
      rule.pattern = ToLower(pattern);
    }
    parsed.push_back(std::move(rule));
  }
  // Later files take precedence over earlier ones: prepend in file order.
  for (auto it = parsed.rbegin(); it != parsed.rend(); ++it) {
    impl_->user_rules.push_front(std::move(*it));
  }
  return base::OkStatus();
}

Classification KernelClassifier::Classify(std::string_view name) const {
  const std::string demangled = DemangleKernelName(name);
  // Only the head of the name is matched: the kernel's own name and its leading template arguments
  // (functors, tile shapes) carry the meaning; the long tail is parameter types, which repeat the
  // template and would make every rule scan kilobytes (ATen names reach 5 KB).
  const std::string lowered = ToLower(std::string_view(demangled).substr(0, kMatchPrefixBytes));
  return impl_->ClassifyLowered(lowered, demangled);
}

bool KernelClassifier::IsMemoryActivityName(std::string_view name) {
  const std::string lowered = ToLower(name.substr(0, 32));
  for (std::string_view prefix :
       {"memcpy ", "memset (", "[cuda memcpy", "[cuda memset", "cuda memcpy", "cuda memset"}) {
    if (std::string_view(lowered).substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

const Classification& CachedClassifier::Classify(NameId id) {
  static const Classification kUnknown{};
  const size_t index = static_cast<size_t>(id);
  if (id == kNoName || index >= names_->size()) return kUnknown;  // never grow for bogus ids
  if (index >= known_.size()) {
    const size_t size = std::max(index + 1, known_.size() * 2);
    known_.resize(size, 0);
    cache_.resize(size);
  }
  if (!known_[index]) {
    cache_[index] = classifier_->Classify(names_->Get(id));
    known_[index] = 1;
  }
  return cache_[index];
}

}  // namespace inferscope::model
