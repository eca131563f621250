// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/model/taxonomy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "src/model/kernel_names.h"
#include "src/model/name_table.h"
#include "src/model/taxonomy_rules.h"

namespace inferscope::model {
namespace {

struct LabelledName {
  std::string category;
  std::string subcategory;  // "-" = not checked
  std::string source;
  std::string name;
  int line = 0;
};

std::vector<LabelledName> ReadCorpus(const std::string& file) {
  std::vector<LabelledName> rows;
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/taxonomy/" + file);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() != 4) {
      ADD_FAILURE() << file << ":" << line_no << ": expected 4 tab-separated columns";
      continue;
    }
    rows.push_back({cols[0], cols[1], cols[2], cols[3], line_no});
  }
  return rows;
}

std::string Cat(const KernelClassifier& c, std::string_view name) {
  return std::string(CategoryName(c.Classify(name).category));
}
std::string Sub(const KernelClassifier& c, std::string_view name) {
  return std::string(c.Classify(name).subcategory);
}

TEST(Taxonomy, CategoryNamesRoundTrip) {
  for (int i = 0; i < kCategoryCount; ++i) {
    Category c;
    ASSERT_TRUE(ParseCategory(kCategoryNames[i], &c));
    EXPECT_EQ(static_cast<int>(c), i);
    EXPECT_EQ(CategoryName(c), kCategoryNames[i]);
  }
  Category c;
  EXPECT_FALSE(ParseCategory("gemm", &c));
}

TEST(Taxonomy, BuiltinRowsAreWellFormed) {
  for (const BuiltinRule& rule : BuiltinRules()) {
    const std::string cat(CategoryName(rule.category));
    EXPECT_EQ(rule.subcategory.substr(0, cat.size() + 1), cat + ".") << rule.pattern;
    EXPECT_NE(rule.kind, MatchKind::kRegex) << rule.pattern;
    for (char ch : rule.pattern) EXPECT_FALSE(ch >= 'A' && ch <= 'Z') << rule.pattern;
  }
}

// The rules were written from this file: every checked subcategory must match, and the top level
// may miss only names that carry no hint of what they do (bare "convert_kernel", "gatherOutput").
TEST(Taxonomy, DevSet) {
  const std::vector<LabelledName> rows = ReadCorpus("dev_kernels.tsv");
  ASSERT_GT(rows.size(), 1000u);
  KernelClassifier classifier;
  int wrong = 0;
  for (const LabelledName& row : rows) {
    const Classification got = classifier.Classify(row.name);
    if (CategoryName(got.category) != row.category) {
      ++wrong;
      std::printf("dev miss want=%s got=%s  %s\n", row.category.c_str(),
                  std::string(got.subcategory).c_str(), row.name.substr(0, 160).c_str());
    }
    if (row.subcategory != "-") {
      EXPECT_EQ(got.subcategory, row.subcategory)
          << "dev_kernels.tsv:" << row.line << " " << row.name.substr(0, 160);
    }
  }
  EXPECT_LE(wrong, static_cast<int>(rows.size()) / 100) << "more than 1% of dev names misfiled";
}

// Top-level accuracy on a labelled file the rules were not written from; prints the misses and a
// per-category table (the figures in docs/taxonomy.md come from this output).
double HeldOutAccuracy(const std::string& file, std::map<std::string, double>* per_category_out) {
  const std::vector<LabelledName> rows = ReadCorpus(file);
  KernelClassifier classifier;
  int correct = 0, sub_checked = 0, sub_correct = 0;
  std::map<std::string, std::pair<int, int>> per_category;  // category -> (right, total)
  for (const LabelledName& row : rows) {
    const Classification got = classifier.Classify(row.name);
    ++per_category[row.category].second;
    if (CategoryName(got.category) == row.category) {
      ++correct;
      ++per_category[row.category].first;
    } else {
      std::printf("MISCLASSIFIED want=%s got=%s  %s\n", row.category.c_str(),
                  std::string(got.subcategory).c_str(), row.name.substr(0, 160).c_str());
    }
    if (row.subcategory != "-") {
      ++sub_checked;
      if (got.subcategory == row.subcategory) ++sub_correct;
    }
  }
  const double accuracy =
      rows.empty() ? 0 : static_cast<double>(correct) / static_cast<double>(rows.size());
  std::printf("%s top-level accuracy: %d/%zu = %.2f%%; subcategory %d/%d\n", file.c_str(), correct,
              rows.size(), 100.0 * accuracy, sub_correct, sub_checked);
  for (const auto& [category, counts] : per_category) {
    const double share = static_cast<double>(counts.first) / counts.second;
    std::printf("  %-14s %3d/%3d = %.1f%%\n", category.c_str(), counts.first, counts.second,
                100.0 * share);
    (*per_category_out)[category] = share;
  }
  return accuracy;
}

// Held-out batch 1: split from the corpus before the current rules were written. Its misses were
// looked at after its one measurement, so it is no longer unseen; it stays as a regression guard.
TEST(Taxonomy, HeldOutAccuracy) {
  std::map<std::string, double> per_category;
  EXPECT_GE(HeldOutAccuracy("heldout_kernels.tsv", &per_category), 0.97);
  for (const auto& [category, share] : per_category) EXPECT_GE(share, 0.90) << category;
}

// Held-out batch 5: kernels of two code bases the rules never saw (ROCm aiter's Triton kernels,
// DeepSpeed's CUDA kernels), sampled by hash from their sources after the last rule change. Its
// figure is the one docs/taxonomy.md publishes for names from unseen engines; the assertion is a
// regression guard, not the 97% goal.
TEST(Taxonomy, HeldOut5Accuracy) {
  std::map<std::string, double> per_category;
  EXPECT_GE(HeldOutAccuracy("heldout5_kernels.tsv", &per_category), 0.0);
}

TEST(Taxonomy, MangledEqualsDemangled) {
  KernelClassifier c;
  const std::vector<std::string> mangled = {
      "_ZN10flashinfer8sampling30TopKTopPSamplingFromProbKernelILj1024EEEvPfPi",
      "_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE",
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
      "11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_"
      "T1_",
      "_ZN4vllm15rms_norm_kernelIN3c104HalfEEEvPT_PKS3_S6_fii",
  };
  for (const std::string& m : mangled) {
    const std::string d = DemangleKernelName(m);
    ASSERT_NE(d, m) << "failed to demangle " << m;
    EXPECT_EQ(Sub(c, m), Sub(c, d)) << d;
    EXPECT_NE(Cat(c, m), "other") << d;
  }
  EXPECT_EQ(Sub(c, mangled[0]), "sampling.top_k_top_p");
  EXPECT_EQ(Sub(c, mangled[1]), "communication.send_recv");
  EXPECT_EQ(Sub(c, mangled[3]), "normalization.rms_norm");
  EXPECT_EQ(DemangleKernelName("nvjet_tst_64x8_64x16_4x1_v_bz_TNT"),
            "nvjet_tst_64x8_64x16_4x1_v_bz_TNT");
  EXPECT_EQ(DemangleKernelName("_Znot a real mangled name"), "_Znot a real mangled name");
}

TEST(Taxonomy, OpLevelBeatsLibraryLevel) {
  KernelClassifier c;
  EXPECT_EQ(Sub(c, "void flashinfer::sampling::TopPSamplingFromProbKernel<1024u>(float*)"),
            "sampling.top_k_top_p");
  EXPECT_EQ(Sub(c,
                "void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::"
                "PosEncodingMode)0>(flashinfer::paged_kv_t<half, int>)"),
            "attention.decode");
  EXPECT_EQ(Sub(c, "void flashinfer::BatchPrefillWithPagedKVCacheKernel<>()"), "attention.prefill");
  EXPECT_EQ(Sub(c, "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*)"),
            "communication.custom_all_reduce");
  EXPECT_EQ(Sub(c, "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>()"),
            "communication.custom_all_reduce");
  EXPECT_EQ(Sub(c, "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "communication.all_gather");
  EXPECT_EQ(Sub(c, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"),
            "communication.send_recv");
  EXPECT_EQ(Sub(c, "void vllm::moe::topkGatingSoftmax<8, 128>(float const*)"), "moe.routing");
  EXPECT_EQ(Sub(c, "void vllm::concat_and_cache_mla_kernel<>()"), "kv_cache.store");
  EXPECT_EQ(Sub(c, "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64>()"),
            "matmul.cutlass");
  EXPECT_EQ(Sub(c, "void vllm::rms_norm_static_fp8_quant_kernel<c10::BFloat16>()"),
            "normalization.rms_norm");
  EXPECT_EQ(Sub(c, "void marlin::gptq_marlin_repack_kernel<256, 4, false>()"),
            "quantization.repack");
}

TEST(Taxonomy, InductorNames) {
  KernelClassifier c;
  EXPECT_EQ(Sub(c, "triton_poi_fused_silu_mul_0"), "activation.glu");  // SwiGLU
  EXPECT_EQ(Sub(c, "triton_poi_fused_silu_0"), "activation.silu");
  EXPECT_EQ(Sub(c, "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0"), "normalization.rms_norm");
  EXPECT_EQ(Sub(c, "triton_red_fused__to_copy_add_embedding_mean_mul_pow_rsqrt_0"),
            "normalization.rms_norm");
  EXPECT_EQ(Sub(c, "triton_tem_fused_mm_0"), "matmul.triton");
  EXPECT_EQ(Sub(c, "triton_poi_fused_add_cos_sin_0"), "positional.rope");
  EXPECT_EQ(Sub(c, "triton_per_fused__softmax_6"), "normalization.softmax");
  EXPECT_EQ(Sub(c, "triton_poi_fused_add_mul_3"), "elementwise.triton");
  EXPECT_EQ(Sub(c, "triton_poi_fused_addmm_3"), "elementwise.triton");  // token, not "mm"
  EXPECT_EQ(Sub(c, "triton__0d1d2d3d"), "other.triton");
  // Kernels that only move data follow their ops into memory.kernel.*; one arithmetic op keeps a
  // kernel elementwise.
  EXPECT_EQ(Sub(c, "triton_poi_fused__to_copy_0"), "memory.kernel.cast");
  EXPECT_EQ(Sub(c, "triton_poi_fused_cat_2"), "memory.kernel.cat");
  EXPECT_EQ(Sub(c, "triton_poi_fused_clone_1"), "memory.kernel.copy");
  EXPECT_EQ(Sub(c, "triton_poi_fused__unsafe_view_clone_transpose_3"), "memory.kernel.transpose");
  EXPECT_EQ(Sub(c, "triton_poi_fused_index_put_0"), "memory.kernel.index");
  EXPECT_EQ(Sub(c, "triton_poi_fused_zeros_0"), "memory.kernel.fill");
  EXPECT_EQ(Sub(c, "triton_poi_fused__to_copy_add_1"), "elementwise.triton");
  EXPECT_EQ(Sub(c, "triton_poi_fused_cat_mul_neg_slice_4"), "positional.rope");
  EXPECT_EQ(Sub(c, "triton_tem_fused_cat_0"), "matmul.triton");  // a template is a GEMM
}

TEST(Taxonomy, InductorDataMovementMatcher) {
  EXPECT_TRUE(IsInductorDataMovement("triton_poi_fused__to_copy_0"));
  EXPECT_TRUE(IsInductorDataMovement("triton_poi_fused_copy__5"));
  EXPECT_TRUE(IsInductorDataMovement("triton_red_fused_split_with_sizes_view_12"));
  EXPECT_FALSE(IsInductorDataMovement("triton_poi_fused_add_1"));
  EXPECT_FALSE(IsInductorDataMovement("triton_poi_fused_cat_add_1"));
  EXPECT_FALSE(IsInductorDataMovement("triton_poi_fused_catx_1"));  // whole op names only
  EXPECT_FALSE(IsInductorDataMovement("triton_poi_fused_cat"));     // no kernel counter
  EXPECT_FALSE(IsInductorDataMovement("triton_tem_fused_cat_0"));
  EXPECT_FALSE(IsInductorDataMovement("triton_poi_fused__0"));
  EXPECT_FALSE(IsInductorDataMovement("cat_2"));
}

TEST(Taxonomy, GenericSubstringTraps) {
  KernelClassifier c;
  // "normal" random kernels are not normalization; "stop" is not top-p; gemv is not gemm.
  EXPECT_EQ(Cat(c, "void at::native::normal_kernel<at::CUDAGeneratorImpl*>()"), "other");
  EXPECT_EQ(Cat(c,
                "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_"
                "kernel<float, 4, at::native::templates::cuda::normal_and_transform<>>()"),
            "elementwise");
  EXPECT_EQ(Cat(c, "stop_kernel"), "other");
  EXPECT_EQ(Sub(c, "void gemv2T_kernel_val<int, int, float>()"), "matmul.gemv");
  EXPECT_EQ(Cat(c, "property_update_kernel"), "other");  // "rope" inside "property"
  // An argmax reduction is the greedy token pick; other ATen reductions stay elementwise.
  EXPECT_EQ(Sub(c,
                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<int, "
                "at::native::ArgMaxOps<int>>>()"),
            "sampling.greedy");
  EXPECT_EQ(Sub(c,
                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                "at::native::MaxOps<float>, unsigned int, float, 4, 4> >()"),
            "elementwise.reduce");
  // "arange" kernels are elementwise_kernel_with_index: not indexing.
  EXPECT_EQ(Cat(c,
                "void (anonymous namespace)::elementwise_kernel_with_index<int, "
                "at::native::arange_cuda_out(c10::Scalar const&)::{lambda()#1}>()"),
            "elementwise");
}

// The traps of a public first-match-wins substring table (a prior-art profiler's categorizer):
// each row below would be misfiled by that table's order or by a library-level pattern; the
// comment names the row of that table that would catch it first.
TEST(Taxonomy, PriorArtTraps) {
  KernelClassifier c;
  const std::vector<std::pair<std::string, std::string>> cases = {
      // #12 "flashinfer" -> prefill catches FlashInfer decode, sampling, norm, RoPE and merge.
      {"_ZN10flashinfer33BatchDecodeWithPagedKVCacheKernelILb0EEEvv", "attention.decode"},
      {"_ZN10flashinfer8sampling30TopKTopPSamplingFromProbKernelILj1024EEEvPfPi",
       "sampling.top_k_top_p"},
      {"void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*)",
       "normalization.rms_norm"},
      {"void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<true, 128u>()",
       "positional.rope"},
      {"void flashinfer::MergeStateInPlaceKernel<8u, 16u, __nv_bfloat16>()", "attention.merge"},
      // #12 "flashattn" before #13 "merge": FA3's combine kernel is a merge, not a prefill.
      {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdCombine<"
       "cute::tuple<cute::C<8>, cute::C<128> >, 7, 256, 1, false, true, cutlass::bfloat16_t> > >()",
       "attention.merge"},
      // #12 "fmha" -> prefill catches the trtllm-gen generation kernel and CUTLASS MLA.
      {"fmhaSm100fKernel_QkvBfloat16OBfloat16H128PagedKvCausalP64VarSeqQ8Kv128PersistentSwapsAbFor"
       "Gen",
       "attention.decode"},
      {"void cutlass::device_kernel<cutlass::fmha::kernel::Sm100FmhaMlaKernelTmaWarpspecialized<"
       "cute::tuple<cute::C<128> > > >()",
       "attention.mla"},
      // #2 "all_reduce" catches custom all-reduces that #1 does not list.
      {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>()",
       "communication.custom_all_reduce"},
      {"void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_oneshot_lamport<"
       "__nv_bfloat16, 8>()",
       "communication.custom_all_reduce"},
      // #9 lists fused_a_gemm (DeepSeek's dense MLA down-projection) as an expert GEMM.
      {"void dsv3_fused_a_gemm_kernel<__nv_bfloat16, 16, 2112, 7168>(__nv_bfloat16*)",
       "matmul.other"},
      // #19 "cutlass" catches CuTe-DSL kernels that are not GEMMs (FlashInfer's RMSNorm).
      {"kernel_cutlass_kernel_flashinfernormkernelsrmsnormRMSNormKernel_object_at__tensorptrbf16_0",
       "normalization.rms_norm"},
      // #19/#20 "cutlass"/"gemm" before #21 kv_cache and #29 softmax: MoE routing and cache writes.
      {"void vllm::moe::topkGatingSoftmax<8, 128, 4, 16, 32, int>(float const*)", "moe.routing"},
      {"void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16>()", "kv_cache.store"},
      // #22 "paged_kv" would take attention kernels whose template arguments name paged_kv_t.
      {"void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::paged_kv_t<half, int> >()",
       "attention.prefill"},
      // #25 "dequantize" catches llama.cpp's dequantize-GEMV.
      {"void dequantize_mul_mat_vec<(ggml_type)2>(void const*, float const*, float*, int, int)",
       "matmul.gemv"},
      // #29 "softmax" catches sampling's softmax and MoE router softmax.
      {"void flashinfer::sampling::OnlineSoftmaxFusedKernel<1024u, 4u, float>(float*)",
       "sampling.other"},
      {"void vllm::moe::moeSoftmax<256>(float const*, bool const*, float*, int)", "moe.routing"},
      // #32 "elementwise" catches ATen copies (data movement) before what they do is looked at.
      {"void at::native::vectorized_elementwise_kernel<4, at::native::direct_copy_kernel_cuda("
       "at::TensorIteratorBase&)::{lambda()#3}, std::array<char*, 2ul> >()",
       "memory.kernel.copy"},
      // #34 "topk"/"top_k" catches the DSA indexer's top-k, which selects KV for attention.
      {"void vllm::top_k_per_row_decode<1024, false>(float const*, int const*, int*, int)",
       "attention.sparse"},
      {"void tensorrt_llm::kernels::indexer_topk::topKPerRowDecode<1024, false>(float const*)",
       "attention.sparse"},
      // #37 Mamba's causal_conv1d is an SSM kernel, not a convolution layer or a GEMM.
      {"void causal_conv1d_fwd_kernel<Causal_conv1d_fwd_kernel_traits<128, 4, true> >()",
       "other.ssm"},
      // #38 "triton" swallows every Triton kernel; Inductor names say what they fused.
      {"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_1", "normalization.rms_norm"},
      {"fused_moe_kernel", "moe.gemm"},
  };
  for (const auto& [name, sub] : cases) EXPECT_EQ(Sub(c, name), sub) << name;
}

// The serving conventions, one example (or a contrasting pair) each; docs/taxonomy.md lists them.
TEST(Taxonomy, ServingConventions) {
  KernelClassifier c;
  const std::vector<std::pair<std::string, std::string>> cases = {
      // Expert-parallel dispatch/combine and AR fused with norm/MoE finalize: communication.
      {"void deep_ep::internode_ll::dispatch<true, false, 7168>(void*, float*)",
       "communication.expert_parallel"},
      {"void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int)",
       "communication.expert_parallel"},
      {"void flashinfer::trtllm_moe_allreduce_fusion::moe_finalize_allreduce_fusion_kernel_"
       "oneshot_lamport<__nv_bfloat16, 8, 2>()",
       "communication.custom_all_reduce"},
      // DeepGEMM: identical kernels, the GemmType decides dense vs grouped/masked.
      {"void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 128u, 128u, 1u, 5u, 128u, 128u, 1u, "
       "false, (deep_gemm::GemmType)0>(__nv_bfloat16*)",
       "matmul.deepgemm"},
      {"void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 192u, 128u, 256u, 4u, 128u, 128u, 1u, "
       "true, (deep_gemm::GemmType)1>(__nv_bfloat16*)",
       "moe.gemm"},
      {"void deep_gemm::fp8_gemm_kernel<2048u, 7168u, 64u, 112u, 128u, 32u, 6u, 128u, 128u, 2u, "
       "false, (deep_gemm::GemmType)2>(__nv_bfloat16*)",
       "moe.gemm"},
      // trtllm-gen expert GEMMs, fused SwiGLU or not, and the router GEMM: moe.
      {"bmm_Bfloat16_E2m1E2m1_Fp32_t128x8x256u2_s4_et128x8_m128x8x64_cga1x1x1_16dp256b_rM_TN_"
       "transOut_schPd2x1x2x3_bN_ldgsts_ldgstsSf_rgTma_clmp_swiGlu_dynB_sm100f",
       "moe.gemm"},
      {"bmm_E4m3_E4m3E4m3_Fp32_t128x16x128u2_s6_et64x16_m64x16x32_c1x1x1_rM_TN_transOut_noShfl_"
       "dsFp8_schPd4x2x2x3_bN_rgTma_clmp_dynB_sm100f",
       "moe.gemm"},
      {"gemm_Bfloat16_E4m3E4m3_Fp32_t128x64x256u2_s5_et128x64_m128x64x32_cga1x1x1_rM_TN_sm100f",
       "matmul.other"},  // trtllm-gen dense GEMM
      {"void dsv3_router_gemm_kernel<float, 8, 256, 1, 7168>(float*)", "moe.routing"},
      // Speculative decoding and the sampler's helpers: sampling.
      {"rejection_greedy_sample_kernel", "sampling.speculative"},
      {"void tensorrt_llm::kernels::speculative_decoding::mtpAcceptDraftToken<float>()",
       "sampling.speculative"},
      {"_gumbel_sample_kernel", "sampling.other"},
      {"void apply_min_new_tokens_penalty_kernel(float*, int const*, int const*, int, int)",
       "sampling.penalty"},
      // Attention includes metadata, merge, MLA, the sparse indexer and linear mixers.
      {"void get_mla_metadata_kernel<32>(int*, int*, int*, int)", "attention.metadata"},
      {"void deep_gemm::sm90_fp8_mqa_logits<64u, 128u>(unsigned int)", "attention.sparse"},
      {"chunk_gated_delta_rule_fwd_kernel_h_blockdim64", "attention.linear"},
      {"fused_recurrent_gated_delta_rule_fwd_kernel", "attention.linear"},
      // Fused RoPE + KV-cache write: kv_cache; RoPE + norm or + quant: positional / norm.
      {"void (anonymous namespace)::fused_rope_store_kernel<false, 64l, false, __nv_bfloat16>()",
       "kv_cache.rope_store"},
      {"void flashinfer::RopeQuantizeKernel<false, 128u, 8u, 16u, __nv_bfloat16, long>()",
       "positional.rope"},
      {"void fusedQKNormRopeKernel<__nv_bfloat16, 128, true>(__nv_bfloat16*)",
       "normalization.rms_norm"},
      // Norm + quant: normalization; act + quant: activation; dequant-GEMM: matmul; repack: quant.
      {"void vllm::rms_norm_per_block_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>()",
       "normalization.rms_norm"},
      {"void vllm::act_and_mul_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>()",
       "activation.glu"},
      {"void vllm::awq::gemm_forward_4bit_cuda_m16nXk32<128>(int, int)", "matmul.awq"},
      {"void vllm::gptq_marlin_repack_kernel<256, 4, false>()", "quantization.repack"},
      // SSM scans and convolutions: other, named.
      {"_chunk_scan_fwd_kernel", "other.ssm"},
      {"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32",
       "other.conv"},
  };
  for (const auto& [name, sub] : cases) EXPECT_EQ(Sub(c, name), sub) << name;
}

TEST(Taxonomy, MemoryActivityNames) {
  KernelClassifier c;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Memcpy HtoD (Pageable -> Device)", "memory.memcpy_htod"},
      {"Memcpy DtoH (Device -> Pinned)", "memory.memcpy_dtoh"},
      {"Memcpy DtoD (Device -> Device)", "memory.memcpy_dtod"},
      {"Memcpy PtoP (Device -> Device)", "memory.memcpy_ptop"},
      {"Memset (Device)", "memory.memset"},
      {"[CUDA memcpy Host-to-Device]", "memory.memcpy_htod"},
      {"[CUDA memcpy Device-to-Host]", "memory.memcpy_dtoh"},
      {"[CUDA memcpy Peer-to-Peer]", "memory.memcpy_ptop"},
      {"[CUDA memset]", "memory.memset"},
      {"CUDA memcpy HtoD", "memory.memcpy_htod"},
  };
  for (const auto& [name, sub] : cases) {
    EXPECT_TRUE(KernelClassifier::IsMemoryActivityName(name)) << name;
    EXPECT_EQ(Sub(c, name), sub) << name;
    const Classification got = c.Classify(name);
    EXPECT_FALSE(IsComputeCategory(got.category));
    EXPECT_FALSE(IsComputeKernel(got.category, got.subcategory)) << name;
  }
  EXPECT_FALSE(KernelClassifier::IsMemoryActivityName("void at::native::direct_copy_kernel_cuda"));
}

// Device-side data movement is memory.kernel.*: apart from copy-engine activity by sub-category,
// and counted as compute (it occupies SMs).
TEST(Taxonomy, DeviceDataMovementIsMemoryKernel) {
  KernelClassifier c;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
       "at::TensorIteratorBase&)::{lambda()#3}>()",
       "memory.kernel.copy"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda("
       "at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >()",
       "memory.kernel.cast"},
      {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, "
       "1>()",
       "memory.kernel.cat"},
      {"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, "
       "long, long, bool)",
       "memory.kernel.gather"},
      {"void at::native::_scatter_gather_elementwise_kernel<128, 8, "
       "at::native::_cuda_scatter_gather_internal_kernel<true, at::native::OpaqueType<4> >>()",
       "memory.kernel.scatter"},
      {"void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<"
       "at::native::index_put_kernel_impl<at::native::OpaqueType<8> >>>()",
       "memory.kernel.index"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
       "std::array<char*, 1ul> >()",
       "memory.kernel.fill"},
      {"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>()",
       "memory.kernel.transpose"},
      {"void cpy_flt<&(cpy_1_flt<float, __half>(char const*, char*)), float, __half>()",
       "memory.kernel.copy"},
  };
  for (const auto& [name, sub] : cases) {
    const Classification got = c.Classify(name);
    EXPECT_EQ(got.subcategory, sub) << name;
    EXPECT_EQ(got.category, Category::kMemory) << name;
    EXPECT_TRUE(IsComputeKernel(got.category, got.subcategory)) << name;
    EXPECT_FALSE(KernelClassifier::IsMemoryActivityName(name));
  }
  EXPECT_TRUE(IsComputeKernel(Category::kMatmul, "matmul.cublas"));
  EXPECT_FALSE(IsComputeKernel(Category::kCommunication, "communication.all_reduce"));
  EXPECT_FALSE(IsComputeKernel(Category::kMemory, "memory.memcpy_dtod"));
  EXPECT_FALSE(IsComputeKernel(Category::kMemory, "memory.memset"));
  EXPECT_FALSE(IsComputeKernel(Category::kMemory, "memory"));  // a user rule without sub
}

TEST(Taxonomy, UserRulesOverrideBuiltins) {
  KernelClassifier c;
  EXPECT_EQ(Sub(c, "my_custom_op_kernel"), "other");
  EXPECT_EQ(Sub(c, "void vllm::rms_norm_kernel<c10::Half>()"), "normalization.rms_norm");
  const std::string text =
      "# comment\n"
      "\n"
      "contains My_Custom_Op attention.prefill\n"
      "token rms_norm_kernel elementwise.custom_norm   # trailing text is not a comment\n";
  // The trailing '#...' makes the last field "comment", an invalid category -> error.
  EXPECT_FALSE(c.LoadRuleText(text, "inline").ok());
  ASSERT_TRUE(c.LoadRuleText("contains My_Custom_Op attention.prefill\n"
                             "prefix void vllm::rms_norm elementwise.custom_norm\n"
                             "regex ^mystery_[0-9]+$ other.mystery\n"
                             "exact foo moe\n",
                             "inline")
                  .ok());
  EXPECT_EQ(Sub(c, "my_custom_op_kernel"), "attention.prefill");
  EXPECT_EQ(Sub(c, "void vllm::rms_norm_kernel<c10::Half>()"), "elementwise.custom_norm");
  EXPECT_EQ(Sub(c, "MYSTERY_42"), "other.mystery");
  EXPECT_EQ(Sub(c, "foo"), "moe");
  EXPECT_EQ(Cat(c, "foo"), "moe");
  // A later load takes precedence over an earlier one.
  ASSERT_TRUE(c.LoadRuleText("exact foo sampling.x\n", "second").ok());
  EXPECT_EQ(Sub(c, "foo"), "sampling.x");
}

TEST(Taxonomy, BadRuleFilesNameFileAndLine) {
  KernelClassifier c;
  struct Case {
    std::string text;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"# ok\nfuzzy abc attention\n", "rules.txt:2: unknown match kind 'fuzzy'"},
      {"contains abc gemm\n", "rules.txt:1: invalid category 'gemm'"},
      {"contains abc attention.\n", "rules.txt:1: invalid category"},
      {"contains attention\n", "rules.txt:1: expected"},
      {"\n\nregex ([a attention\n", "rules.txt:3: invalid regex"},
  };
  for (const Case& tc : cases) {
    const base::Status s = c.LoadRuleText(tc.text, "rules.txt");
    ASSERT_FALSE(s.ok()) << tc.text;
    EXPECT_EQ(s.code(), base::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(tc.want), std::string::npos) << s.message();
  }
  // A failed load adds nothing.
  EXPECT_EQ(Sub(c, "abc"), "other");
  const base::Status missing = c.LoadRuleFile("/nonexistent/rules.txt");
  EXPECT_EQ(missing.code(), base::StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("/nonexistent/rules.txt"), std::string::npos);
}

TEST(Taxonomy, LoadRuleFileFromDisk) {
  const std::string path = std::string(INFERSCOPE_BINARY_DIR) + "/taxonomy_test_rules.txt";
  {
    std::ofstream out(path);
    out << "contains zzz_custom kv_cache.store\n"
        << "bogus\n";
  }
  KernelClassifier c;
  const base::Status s = c.LoadRuleFile(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path + ":2:"), std::string::npos) << s.message();
}

TEST(Taxonomy, CachedClassifierMatchesClassifier) {
  KernelClassifier c;
  NameTable names;
  const std::vector<LabelledName> rows = ReadCorpus("dev_kernels.tsv");
  std::vector<NameId> ids;
  for (const LabelledName& row : rows) ids.push_back(names.Intern(row.name));
  CachedClassifier cached(&c, &names);
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const Classification& got = cached.Classify(ids[i]);
      const Classification want = c.Classify(rows[i].name);
      EXPECT_EQ(got.category, want.category);
      EXPECT_EQ(got.subcategory, want.subcategory);
    }
  }
  EXPECT_EQ(cached.Classify(kNoName).category, Category::kOther);
  EXPECT_EQ(cached.Classify(static_cast<NameId>(names.size() + 5)).category, Category::kOther);
}

TEST(Taxonomy, ClassifySpeed) {
  KernelClassifier c;
  const std::vector<LabelledName> rows = ReadCorpus("dev_kernels.tsv");
  const auto start = std::chrono::steady_clock::now();
  size_t n = 0;
  for (int rep = 0; rep < 3; ++rep) {
    for (const LabelledName& row : rows) {
      n += static_cast<size_t>(c.Classify(row.name).category);
    }
  }
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::printf("classify: %.2f us/name over %zu names (checksum %zu)\n",
              us / (3.0 * static_cast<double>(rows.size())), rows.size(), n);
}

}  // namespace
}  // namespace inferscope::model
