// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The kernel taxonomy: what the engine was doing when the GPU ran a kernel. Category names are
// fixed and used verbatim in reports, JSON, the store and metric labels.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/model/events.h"

namespace inferscope::model {

enum class Category : uint8_t {
  kAttention = 0,
  kMatmul,
  kMoe,
  kCommunication,
  kKvCache,
  kQuantization,
  kNormalization,
  kActivation,
  kPositional,
  kSampling,
  kMemory,
  kElementwise,
  kEmbedding,
  kOther,
  kCount,
};
inline constexpr int kCategoryCount = static_cast<int>(Category::kCount);
inline constexpr const char* kCategoryNames[kCategoryCount] = {
    "attention",    "matmul",        "moe",        "communication", "kv_cache",
    "quantization", "normalization", "activation", "positional",    "sampling",
    "memory",       "elementwise",   "embedding",  "other"};

std::string_view CategoryName(Category category);
// Parses a category name; returns false when `name` is not one of kCategoryNames.
bool ParseCategory(std::string_view name, Category* category);

// HTA's three-way split at the category level: communication and memory are "non-compute",
// everything else is "compute". For one classified kernel use IsComputeKernel(), which also knows
// the memory sub-categories.
inline bool IsComputeCategory(Category c) {
  return c != Category::kCommunication && c != Category::kMemory;
}

// Sub-category prefix of device-side data movement: copy/cast/cat/gather/scatter/index/fill/
// transpose kernels that run on the SMs ("memory.kernel.copy"), as opposed to copy-engine and
// memset activity ("memory.memcpy_htod", "memory.memset").
inline constexpr std::string_view kMemoryKernelPrefix = "memory.kernel";

// Whether time in this kernel counts as compute in the temporal breakdown. A memory.kernel.* copy
// occupies SMs like any other kernel and competes with compute for them (HTA, which classifies by
// name, also counts such kernels as computation), so it is compute; copy-engine memcpy/memset
// activity and communication kernels are not.
inline bool IsComputeKernel(Category c, std::string_view subcategory) {
  if (c == Category::kMemory)
    return subcategory.substr(0, kMemoryKernelPrefix.size()) == kMemoryKernelPrefix;
  return c != Category::kCommunication;
}

// The result of classifying one name. `subcategory` is a dotted refinement of the category
// ("attention.decode", "communication.all_reduce", "matmul.cublas"); it always starts with the
// category name. Strings point into the classifier's rule storage and live as long as it does.
struct Classification {
  Category category = Category::kOther;
  std::string_view subcategory = "other";
};

// An ordered rule table; the first matching rule wins. Built-in rules come first-in-priority after
// any user rules (user rules override). Matching runs on the demangled name, so mangled and
// demangled spellings of a kernel classify the same. Thread-safe for concurrent Classify() calls.
class KernelClassifier {
 public:
  // The built-in table only.
  KernelClassifier();
  ~KernelClassifier();
  KernelClassifier(const KernelClassifier&) = delete;
  KernelClassifier& operator=(const KernelClassifier&) = delete;

  // Adds the rules of a user rule file (format in docs/taxonomy.md); they take precedence over the
  // built-in ones. Errors name the file and line.
  base::Status LoadRuleFile(const std::string& path);
  base::Status LoadRuleText(std::string_view text, std::string_view origin);

  Classification Classify(std::string_view name) const;

  // Activity names for copies and memsets ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)")
  // classify as memory.*; this is also what Classify() returns for them.
  static bool IsMemoryActivityName(std::string_view name);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Classifies NameIds of one NameTable, caching the result per id: after the first sight of a kernel
// name, classification is one vector load. Not thread-safe (one per aggregator).
class CachedClassifier {
 public:
  CachedClassifier(const KernelClassifier* classifier, const class NameTable* names)
      : classifier_(classifier), names_(names) {}

  const Classification& Classify(NameId id);

 private:
  const KernelClassifier* classifier_;
  const class NameTable* names_;
  std::vector<Classification> cache_;
  std::vector<uint8_t> known_;
};

}  // namespace inferscope::model
