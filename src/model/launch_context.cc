// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/launch_context.h"

#include <array>
#include <cctype>

namespace inferscope::model {
namespace {

struct OpRule {
  std::string_view pattern;
  bool prefix;  // pattern is a prefix ("sglang::"), else the whole name
  Category category;
  std::string_view subcategory;
};

// Operators whose kernels do one kind of work. Generic ops that launch many kinds of kernel
// (aten::to, aten::add, ...) are left out on purpose: their kernels keep other/other rather than
// take a guess.
constexpr std::array kOpRules = {
    OpRule{"aten::mm", false, Category::kMatmul, "matmul.other"},
    OpRule{"aten::addmm", false, Category::kMatmul, "matmul.other"},
    OpRule{"aten::bmm", false, Category::kMatmul, "matmul.other"},
    OpRule{"aten::baddbmm", false, Category::kMatmul, "matmul.other"},
    OpRule{"aten::matmul", false, Category::kMatmul, "matmul.other"},
    OpRule{"aten::linear", false, Category::kMatmul, "matmul.other"},
    OpRule{"aten::_scaled_mm", false, Category::kMatmul, "matmul.other"},
    OpRule{"aten::_scaled_dot_product_flash_attention", false, Category::kAttention,
           "attention.other"},
    OpRule{"aten::_scaled_dot_product_efficient_attention", false, Category::kAttention,
           "attention.other"},
    OpRule{"aten::_scaled_dot_product_cudnn_attention", false, Category::kAttention,
           "attention.other"},
    OpRule{"aten::scaled_dot_product_attention", false, Category::kAttention, "attention.other"},
    OpRule{"vllm::unified_attention", true, Category::kAttention, "attention.other"},
    OpRule{"aten::layer_norm", false, Category::kNormalization, "normalization.layer_norm"},
    OpRule{"aten::native_layer_norm", false, Category::kNormalization, "normalization.layer_norm"},
    OpRule{"aten::rms_norm", false, Category::kNormalization, "normalization.rms_norm"},
    OpRule{"aten::_fused_rms_norm", false, Category::kNormalization, "normalization.rms_norm"},
    OpRule{"_C::rms_norm", false, Category::kNormalization, "normalization.rms_norm"},
    OpRule{"_C::fused_add_rms_norm", false, Category::kNormalization, "normalization.rms_norm"},
    OpRule{"aten::softmax", false, Category::kNormalization, "normalization.softmax"},
    OpRule{"aten::_softmax", false, Category::kNormalization, "normalization.softmax"},
    OpRule{"_C::silu_and_mul", false, Category::kActivation, "activation.glu"},
    OpRule{"_C::gelu_and_mul", false, Category::kActivation, "activation.glu"},
    OpRule{"aten::silu", false, Category::kActivation, "activation.silu"},
    OpRule{"aten::gelu", false, Category::kActivation, "activation.gelu"},
    OpRule{"_C::rotary_embedding", false, Category::kPositional, "positional.rope"},
    OpRule{"aten::embedding", false, Category::kEmbedding, "embedding.lookup"},
    OpRule{"aten::index_select", false, Category::kEmbedding, "embedding.index_select"},
    OpRule{"aten::topk", false, Category::kSampling, "sampling.top_k_top_p"},
    OpRule{"aten::copy_", false, Category::kMemory, "memory.kernel.copy"},
    OpRule{"aten::cat", false, Category::kMemory, "memory.kernel.cat"},
    OpRule{"_C_cache_ops::", true, Category::kKvCache, "kv_cache.other"},
    OpRule{"_moe_C::", true, Category::kMoe, "moe.other"},
    OpRule{"c10d::allreduce_", false, Category::kCommunication, "communication.all_reduce"},
    OpRule{"c10d::allgather_", true, Category::kCommunication, "communication.all_gather"},
    OpRule{"c10d::reduce_scatter_", true, Category::kCommunication, "communication.reduce_scatter"},
    OpRule{"nccl:all_reduce", false, Category::kCommunication, "communication.all_reduce"},
    OpRule{"nccl:all_gather", false, Category::kCommunication, "communication.all_gather"},
    OpRule{"nccl:reduce_scatter", false, Category::kCommunication, "communication.reduce_scatter"},
};

struct RangeRule {
  std::string_view word;  // lower case; matched anywhere in the lower-cased name
  Category category;
  std::string_view subcategory;
};

// Module and annotation words, most specific first: "MoE" before "MLP" ("SparseMoeMLP" is MoE),
// norms before attention ("AttentionNorm" is a norm).
constexpr std::array kRangeRules = {
    RangeRule{"rmsnorm", Category::kNormalization, "normalization.rms_norm"},
    RangeRule{"layernorm", Category::kNormalization, "normalization.layer_norm"},
    RangeRule{"rotary", Category::kPositional, "positional.rope"},
    RangeRule{"moe", Category::kMoe, "moe.other"},
    RangeRule{"expert", Category::kMoe, "moe.other"},
    RangeRule{"attention", Category::kAttention, "attention.other"},
    RangeRule{"embedding", Category::kEmbedding, "embedding.lookup"},
    RangeRule{"sampler", Category::kSampling, "sampling.other"},
    RangeRule{"mlp", Category::kMatmul, "matmul.other"},
    RangeRule{"linear", Category::kMatmul, "matmul.other"},
    RangeRule{"lm_head", Category::kMatmul, "matmul.other"},
};

// Names longer than this are not matched: bounds the per-name work on hostile input.
constexpr size_t kMaxContextName = 512;

bool ContainsLower(std::string_view haystack, std::string_view lower_word) {
  if (lower_word.size() > haystack.size()) return false;
  for (size_t i = 0; i + lower_word.size() <= haystack.size(); ++i) {
    size_t j = 0;
    while (j < lower_word.size() &&
           std::tolower(static_cast<unsigned char>(haystack[i + j])) == lower_word[j])
      ++j;
    if (j == lower_word.size()) return true;
  }
  return false;
}

}  // namespace

Classification ClassifyOperatorContext(std::string_view op_name) {
  if (op_name.size() > kMaxContextName) return {};
  for (const OpRule& rule : kOpRules) {
    bool match = rule.prefix ? op_name.substr(0, rule.pattern.size()) == rule.pattern
                             : op_name == rule.pattern;
    if (match) return {rule.category, rule.subcategory};
  }
  // SGLang registers its custom ops as sglang::<name>; the name says little on its own, so only
  // the words the range table knows decide.
  if (op_name.substr(0, 8) == "sglang::") return ClassifyRangeContext(op_name.substr(8));
  return {};
}

Classification ClassifyRangeContext(std::string_view range_name) {
  if (range_name.size() > kMaxContextName) return {};
  for (const RangeRule& rule : kRangeRules)
    if (ContainsLower(range_name, rule.word)) return {rule.category, rule.subcategory};
  return {};
}

Classification ApplyLaunchContext(const Classification& by_name, std::string_view op_name,
                                  std::string_view range_name, ClassifiedBy* by) {
  if (by_name.category != Category::kOther || by_name.subcategory != "other") {
    *by = ClassifiedBy::kName;
    return by_name;
  }
  if (!op_name.empty()) {
    Classification c = ClassifyOperatorContext(op_name);
    if (c.category != Category::kOther) {
      *by = ClassifiedBy::kContext;
      return c;
    }
  }
  if (!range_name.empty()) {
    Classification c = ClassifyRangeContext(range_name);
    if (c.category != Category::kOther) {
      *by = ClassifiedBy::kContext;
      return c;
    }
  }
  *by = ClassifiedBy::kNone;
  return by_name;
}

}  // namespace inferscope::model
