// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/model/kernel_names.h"

#include <gtest/gtest.h>

namespace inferscope::model {
namespace {

TEST(KernelNamesTest, DemanglesItaniumNames) {
  EXPECT_EQ(DemangleKernelName("_Z3fooi"), "foo(int)");
  EXPECT_EQ(DemangleKernelName("ampere_sgemm_128x64_tn"), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(DemangleKernelName("_Znot_really_mangled!"), "_Znot_really_mangled!");
}

TEST(KernelNamesTest, ShortensSignatures) {
  EXPECT_EQ(ShortenKernelName("void flashinfer::BatchDecodeKernel<true, 128u, Foo<int> >(Params)"),
            "flashinfer::BatchDecodeKernel");
  EXPECT_EQ(ShortenKernelName("void at::native::(anonymous namespace)::softmax_warp<float>(float*, "
                              "float const*, int)"),
            "at::native::(anon)::softmax_warp");
  EXPECT_EQ(ShortenKernelName(
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(ShortenKernelName("Memcpy HtoD (Pageable -> Device)"),
            "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(ShortenKernelName("sm90_xmma_gemm_bf16bf16_bf16f32"),
            "sm90_xmma_gemm_bf16bf16_bf16f32");
  EXPECT_EQ(ShortenKernelName(""), "");
}

// vLLM's fused_add_rms_norm_kernel must not show as "std::enable_if(0)))&&v...rms_norm_kernel":
// the '>' of "(8)>(0)" does not close the template list, and the SFINAE return type goes.
TEST(KernelNamesTest, StripsReturnTypesAndSfinaeWrappers) {
  EXPECT_EQ(
      ShortenKernelName("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, "
                        "void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>("
                        "c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, "
                        "int, int)"),
      "vllm::fused_add_rms_norm_kernel");
  EXPECT_EQ(ShortenKernelName("std::enable_if<((8)<(16)), void>::type ns::k<((4)>(2))>(int)"),
            "ns::k");
  EXPECT_EQ(ShortenKernelName("int ns::foo<bar<1> >(float)"), "ns::foo");
  EXPECT_EQ(ShortenKernelName("unsigned long long ns::count(int)"), "ns::count");
  EXPECT_EQ(ShortenKernelName("void at::native::(anonymous namespace)::fill<{lambda(int)#1}>(int)"),
            "at::native::(anon)::fill");
  EXPECT_EQ(ShortenKernelName("void at::native::vectorized_elementwise_kernel<4, "
                              "at::native::(anonymous namespace)::F>(int, at::native::(anonymous "
                              "namespace)::F)"),
            "at::native::vectorized_elementwise_kernel");
  EXPECT_EQ(ShortenKernelName("void (anonymous namespace)::k(int)"), "(anon)::k");
  // Not signatures: words stay.
  EXPECT_EQ(ShortenKernelName("Memset (Device)"), "Memset (Device)");
  EXPECT_EQ(ShortenKernelName("Memcpy DtoH (Device -> Pinned)"), "Memcpy DtoH (Device -> Pinned)");
}

TEST(KernelNamesTest, DisplayNameOfMangledKernel) {
  // void vllm::rms_norm_kernel<c10::Half>(c10::Half*, c10::Half const*, float, int, int)
  EXPECT_EQ(DisplayKernelName("_ZN4vllm15rms_norm_kernelIN3c104HalfEEEvPT_PKS3_fii"),
            "vllm::rms_norm_kernel");
}

// One demangler serves classification and display: both accept the "__Z" spelling some tools
// write, and display shortening works on whatever the demangler returns.
TEST(KernelNamesTest, DemanglerAcceptsExtraUnderscoreForDisplayToo) {
  EXPECT_EQ(DemangleKernelName("__Z3fooi"), "foo(int)");
  EXPECT_EQ(DisplayKernelName("__Z3fooi"), "foo");
  EXPECT_EQ(DisplayKernelName("__ZN4vllm15rms_norm_kernelIN3c104HalfEEEvPT_PKS3_fii"),
            "vllm::rms_norm_kernel");
  // Not mangled, or too short to be: unchanged.
  EXPECT_EQ(DemangleKernelName("_Z"), "_Z");
  EXPECT_EQ(DemangleKernelName("__Z"), "__Z");
  EXPECT_EQ(DisplayKernelName("_Z"), "_Z");
}

}  // namespace
}  // namespace inferscope::model
