// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/launch_context.h"

#include <gtest/gtest.h>

#include <string>

#include "src/model/taxonomy.h"

namespace inferscope::model {
namespace {

TEST(LaunchContextTest, OperatorTable) {
  EXPECT_EQ(ClassifyOperatorContext("aten::mm").category, Category::kMatmul);
  EXPECT_EQ(ClassifyOperatorContext("aten::addmm").subcategory, "matmul.other");
  EXPECT_EQ(ClassifyOperatorContext("aten::_scaled_dot_product_flash_attention").category,
            Category::kAttention);
  EXPECT_EQ(ClassifyOperatorContext("vllm::unified_attention_with_output").category,
            Category::kAttention);
  EXPECT_EQ(ClassifyOperatorContext("_C::rms_norm").subcategory, "normalization.rms_norm");
  EXPECT_EQ(ClassifyOperatorContext("_C::silu_and_mul").subcategory, "activation.glu");
  EXPECT_EQ(ClassifyOperatorContext("_moe_C::topk_softmax").category, Category::kMoe);
  EXPECT_EQ(ClassifyOperatorContext("c10d::allreduce_").category, Category::kCommunication);
  EXPECT_EQ(ClassifyOperatorContext("aten::copy_").subcategory, "memory.kernel.copy");
  EXPECT_EQ(ClassifyOperatorContext("sglang::moe_fused_gate").category, Category::kMoe);
  // Exact names: a longer operator is not the short one.
  EXPECT_EQ(ClassifyOperatorContext("aten::mm_backward").category, Category::kOther);
  // Operators that launch many kinds of kernel say nothing.
  EXPECT_EQ(ClassifyOperatorContext("aten::to").category, Category::kOther);
  EXPECT_EQ(ClassifyOperatorContext("").category, Category::kOther);
}

TEST(LaunchContextTest, RangeTable) {
  EXPECT_EQ(ClassifyRangeContext("nn.Module: LlamaAttention_0").category, Category::kAttention);
  EXPECT_EQ(ClassifyRangeContext("nn.Module: LlamaMLP_3").category, Category::kMatmul);
  EXPECT_EQ(ClassifyRangeContext("nn.Module: LlamaRMSNorm_1").subcategory,
            "normalization.rms_norm");
  EXPECT_EQ(ClassifyRangeContext("nn.Module: Qwen2MoeSparseMoeBlock_0").category, Category::kMoe);
  EXPECT_EQ(ClassifyRangeContext("nn.Module: Dropout_0").category, Category::kOther);
  EXPECT_EQ(ClassifyRangeContext(std::string(4096, 'a') + "attention").category, Category::kOther);
}

TEST(LaunchContextTest, OnlyWhereTheNameHasNoEvidence) {
  KernelClassifier classifier;
  ClassifiedBy by;
  Classification unknown = classifier.Classify("my_custom_kernel_123");
  ASSERT_EQ(unknown.category, Category::kOther);
  ASSERT_EQ(unknown.subcategory, "other");

  EXPECT_EQ(ApplyLaunchContext(unknown, "aten::mm", "", &by).category, Category::kMatmul);
  EXPECT_EQ(by, ClassifiedBy::kContext);
  // No operator entry: the enclosing module decides.
  EXPECT_EQ(ApplyLaunchContext(unknown, "aten::to", "nn.Module: LlamaAttention_0", &by).category,
            Category::kAttention);
  EXPECT_EQ(by, ClassifiedBy::kContext);
  // The operator comes before the module.
  EXPECT_EQ(ApplyLaunchContext(unknown, "aten::mm", "nn.Module: LlamaAttention_0", &by).category,
            Category::kMatmul);
  EXPECT_EQ(ApplyLaunchContext(unknown, "aten::to", "", &by).category, Category::kOther);
  EXPECT_EQ(by, ClassifiedBy::kNone);

  // A kernel the name classifier placed keeps its category under a misleading operator.
  Classification nccl = classifier.Classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  ASSERT_EQ(nccl.category, Category::kCommunication);
  EXPECT_EQ(ApplyLaunchContext(nccl, "aten::mm", "nn.Module: LlamaAttention_0", &by).category,
            Category::kCommunication);
  EXPECT_EQ(by, ClassifiedBy::kName);
  // So does a name placed in `other` with a subcategory (evidence, not "no evidence").
  Classification other_ssm{Category::kOther, "other.ssm"};
  EXPECT_EQ(ApplyLaunchContext(other_ssm, "aten::mm", "", &by).subcategory, "other.ssm");
  EXPECT_EQ(by, ClassifiedBy::kName);
}

}  // namespace
}  // namespace inferscope::model
