// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/step_phase.h"

#include <gtest/gtest.h>

namespace inferscope::model {
namespace {

// The range names below are the formats the engines write (src/model/step_phase.cc says where
// in their sources): TensorRT-LLM's PyTorch executor and vLLM v1's profiler annotation.
TEST(StepPhaseTest, TensorRtLlmRequestCounts) {
  EXPECT_EQ(PhaseOfStep("[Executor] _forward_step 17: 3 ctx reqs, 0 gen reqs", 0), Phase::kPrefill);
  EXPECT_EQ(PhaseOfStep("[Executor] _forward_step 18: 0 ctx reqs, 64 gen reqs", 0), Phase::kDecode);
  EXPECT_EQ(PhaseOfStep("[Executor] _forward_step 19: 1 ctx reqs, 63 gen reqs", 0), Phase::kMixed);
  // Older releases: no iteration number, no tag.
  EXPECT_EQ(PhaseOfStep("[Executor] _forward_step: 2 ctx reqs, 0 gen reqs", 0), Phase::kPrefill);
  EXPECT_EQ(PhaseOfStep("_forward_step: 0 ctx reqs, 5 gen reqs", 0), Phase::kDecode);
  // The name wins over the kernels: a decode iteration whose attention kernel the taxonomy calls
  // prefill-shaped is still decode.
  EXPECT_EQ(PhaseOfStep("[Executor] _forward_step 20: 0 ctx reqs, 8 gen reqs", 1), Phase::kDecode);
  // An empty iteration says nothing: the kernels decide.
  EXPECT_EQ(PhaseOfStep("[Executor] _forward_step 21: 0 ctx reqs, 0 gen reqs", 2), Phase::kDecode);
  EXPECT_EQ(PhaseOfStep("[Executor] _forward_step 21: 0 ctx reqs, 0 gen reqs", 0), Phase::kUnknown);
}

TEST(StepPhaseTest, VllmRequestCounts) {
  EXPECT_EQ(PhaseOfStep("execute_context_1(2048)_generation_0(0)", 0), Phase::kPrefill);
  EXPECT_EQ(PhaseOfStep("execute_context_0(0)_generation_32(32)", 0), Phase::kDecode);
  EXPECT_EQ(PhaseOfStep("execute_context_1(512)_generation_31(31)", 2), Phase::kMixed);
  EXPECT_EQ(PhaseOfStep("execute_context_0(0)_generation_0(0)", 3), Phase::kMixed);
  // SGLang's stage profile (the shared TraceLens B300 decode trace's annotation).
  EXPECT_EQ(
      PhaseOfStep("execute_16_context_0(sq0sk0sqsq0sqsk0)_generation_16(sq16sk8209sqsq16sqsk8209)",
                  0),
      Phase::kDecode);
  EXPECT_EQ(PhaseOfStep("step[DECODE bs=16]", 0), Phase::kDecode);
  // Malformed counts say nothing.
  EXPECT_EQ(PhaseOfStep("execute_context_x(0)_generation_1(1)", 0), Phase::kUnknown);
  EXPECT_EQ(PhaseOfStep("[Executor] _forward_step: ctx reqs, 1 gen reqs", 0), Phase::kUnknown);
  EXPECT_EQ(PhaseOfStep("execute_16context_1(1)_generation_0(0)", 0), Phase::kUnknown);
}

TEST(StepPhaseTest, WordsThenAttention) {
  EXPECT_EQ(PhaseOfStep("forward_prefill", 2), Phase::kPrefill);
  EXPECT_EQ(PhaseOfStep("Forward EXTEND batch", 0), Phase::kPrefill);
  EXPECT_EQ(PhaseOfStep("decode_step", 1), Phase::kDecode);
  EXPECT_EQ(PhaseOfStep("ProfilerStep#3", 1), Phase::kPrefill);
  EXPECT_EQ(PhaseOfStep("ProfilerStep#3", 2), Phase::kDecode);
  EXPECT_EQ(PhaseOfStep("ProfilerStep#3", 3), Phase::kMixed);
  EXPECT_EQ(PhaseOfStep("ProfilerStep#3", 0), Phase::kUnknown);
  EXPECT_EQ(PhaseOfStepName("ProfilerStep#3"), Phase::kUnknown);
}

TEST(StepPhaseTest, DefaultStepPrefixes) {
  const auto& prefixes = DefaultStepPrefixes();
  EXPECT_TRUE(IsStepName("ProfilerStep#12", prefixes));
  EXPECT_TRUE(IsStepName("[Executor] _forward_step 18: 0 ctx reqs, 64 gen reqs", prefixes));
  EXPECT_TRUE(IsStepName("_forward_step: 0 ctx reqs, 5 gen reqs", prefixes));
  EXPECT_TRUE(IsStepName("execute_context_0(0)_generation_32(32)", prefixes));
  EXPECT_FALSE(IsStepName("gpu_model_runner: forward", prefixes));
  EXPECT_FALSE(IsStepName("aten::mm", prefixes));
  EXPECT_FALSE(IsStepName("", prefixes));
  EXPECT_FALSE(IsStepName("anything", {""}));  // an empty prefix matches nothing
}

}  // namespace
}  // namespace inferscope::model
