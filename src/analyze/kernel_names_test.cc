// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/kernel_names.h"

#include <gtest/gtest.h>

namespace inferscope::analyze {
namespace {

TEST(KernelNamesTest, DemanglesItaniumNames) {
  EXPECT_EQ(DemangleName("_Z3fooi"), "foo(int)");
  EXPECT_EQ(DemangleName("ampere_sgemm_128x64_tn"), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(DemangleName("_Znot_really_mangled!"), "_Znot_really_mangled!");
}

TEST(KernelNamesTest, ShortensSignatures) {
  EXPECT_EQ(ShortenKernelName("void flashinfer::BatchDecodeKernel<true, 128u, Foo<int> >(Params)"),
            "flashinfer::BatchDecodeKernel");
  EXPECT_EQ(ShortenKernelName("void at::native::(anonymous namespace)::softmax_warp<float>(float*, "
                              "float const*, int)"),
            "at::native::(anonymous namespace)::softmax_warp");
  EXPECT_EQ(ShortenKernelName(
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(ShortenKernelName("Memcpy HtoD (Pageable -> Device)"),
            "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(ShortenKernelName("sm90_xmma_gemm_bf16bf16_bf16f32"),
            "sm90_xmma_gemm_bf16bf16_bf16f32");
  EXPECT_EQ(ShortenKernelName(""), "");
}

TEST(KernelNamesTest, DisplayNameOfMangledKernel) {
  // void vllm::rms_norm_kernel<c10::Half>(c10::Half*, c10::Half const*, float, int, int)
  EXPECT_EQ(DisplayKernelName("_ZN4vllm15rms_norm_kernelIN3c104HalfEEEvPT_PKS3_fii"),
            "vllm::rms_norm_kernel");
}

}  // namespace
}  // namespace inferscope::analyze
