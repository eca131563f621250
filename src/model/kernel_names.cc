// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/kernel_names.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>

namespace inferscope::model {
namespace {

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '>' || c == ']';
}

// Removes balanced <...> groups. "operator<" / "operator<<" style names keep their operator text.
// Inside a template argument list, parentheses hold expressions whose '<' and '>' are comparisons
// (SFINAE: "std::enable_if<(((8)>(0)))&&..., void>::type"), not brackets: they are skipped.
std::string StripTemplateArgs(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  int depth = 0;
  int parens = 0;  // parentheses open inside the current template argument list
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (depth == 0 && c == '<') {
      static constexpr std::string_view kOperator = "operator";
      if (out.size() >= kOperator.size() &&
          std::string_view(out).substr(out.size() - kOperator.size()) == kOperator) {
        out += c;  // operator< or operator<<: not a template argument list
        continue;
      }
    }
    if (depth > 0 && c == '(') {
      ++parens;
    } else if (depth > 0 && c == ')' && parens > 0) {
      --parens;
    } else if (depth > 0 && parens > 0) {
      // an expression inside the arguments: dropped with them
    } else if (c == '<') {
      ++depth;
    } else if (c == '>' && depth > 0) {
      --depth;
      if (depth == 0) parens = 0;
    } else if (depth == 0) {
      out += c;
    }
  }
  return depth == 0 ? out : std::string(s);  // unbalanced: leave the name alone
}

// The last space-separated word outside parentheses and braces: "std::enable_if::type
// vllm::fused_add_rms_norm_kernel" -> "vllm::fused_add_rms_norm_kernel" (the return type goes).
// "(anonymous namespace)" and "{lambda(int)#1}" keep their spaces.
std::string DropReturnType(const std::string& s) {
  int depth = 0;
  size_t last_space = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '{' || c == '[') ++depth;
    if ((c == ')' || c == '}' || c == ']') && depth > 0) --depth;
    if (c == ' ' && depth == 0) last_space = i;
  }
  if (last_space == std::string::npos || last_space + 1 >= s.size()) return s;
  return s.substr(last_space + 1);
}

void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  for (size_t pos = 0; (pos = s->find(from, pos)) != std::string::npos; pos += to.size())
    s->replace(pos, from.size(), to);
}

}  // namespace

std::string DemangleKernelName(std::string_view name) {
  // Itanium names start with _Z; some tools prefix an extra underscore (macOS style).
  size_t skip = 0;
  if (name.substr(0, 2) == "_Z") {
    skip = 0;
  } else if (name.substr(0, 3) == "__Z") {
    skip = 1;
  } else {
    return std::string(name);
  }
  const std::string mangled(name.substr(skip));
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return std::string(name);
  }
  std::string result(out);
  std::free(out);
  return result;
}

std::string ShortenKernelName(std::string_view demangled) {
  std::string s = StripTemplateArgs(demangled);
  // Trailing qualifiers after the parameter list.
  for (std::string_view q : {" const", " volatile"}) {
    if (s.size() > q.size() && std::string_view(s).substr(s.size() - q.size()) == q)
      s.resize(s.size() - q.size());
  }
  // A parameter list: a trailing (...) group that directly follows an identifier.
  bool signature = false;
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    size_t open = std::string::npos;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) {
        open = i;
        break;
      }
    }
    if (open != std::string::npos && open > 0 && IsIdentChar(s[open - 1])) {
      s.resize(open);
      signature = true;
    }
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  // A function signature's words before the name are its return type ("void", or a SFINAE
  // "std::enable_if<...>::type"); names that are not signatures ("Memcpy HtoD") keep their words.
  if (signature) s = DropReturnType(s);
  ReplaceAll(&s, "(anonymous namespace)", "(anon)");
  return s.empty() ? std::string(demangled) : s;
}

std::string DisplayKernelName(std::string_view name) {
  return ShortenKernelName(DemangleKernelName(name));
}

}  // namespace inferscope::model
