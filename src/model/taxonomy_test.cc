// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0

#include "src/model/taxonomy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

TEST(Taxonomy, DevSetExact) {
  const std::vector<LabelledName> rows = ReadCorpus("dev_kernels.tsv");
  ASSERT_GT(rows.size(), 300u);
  KernelClassifier classifier;
  for (const LabelledName& row : rows) {
    const Classification got = classifier.Classify(row.name);
    EXPECT_EQ(CategoryName(got.category), row.category)
        << "dev_kernels.tsv:" << row.line << " " << row.name.substr(0, 160);
    if (row.subcategory != "-") {
      EXPECT_EQ(got.subcategory, row.subcategory)
          << "dev_kernels.tsv:" << row.line << " " << row.name.substr(0, 160);
    }
  }
}

TEST(Taxonomy, HeldOutAccuracy) {
  const std::vector<LabelledName> rows = ReadCorpus("heldout_kernels.tsv");
  ASSERT_GT(rows.size(), 200u);
  KernelClassifier classifier;
  int correct = 0, sub_checked = 0, sub_correct = 0;
  for (const LabelledName& row : rows) {
    const Classification got = classifier.Classify(row.name);
    if (CategoryName(got.category) == row.category) {
      ++correct;
    } else {
      std::printf("MISCLASSIFIED want=%s got=%s  %s\n", row.category.c_str(),
                  std::string(got.subcategory).c_str(), row.name.substr(0, 160).c_str());
    }
    if (row.subcategory != "-") {
      ++sub_checked;
      if (got.subcategory == row.subcategory) ++sub_correct;
    }
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(rows.size());
  std::printf("held-out top-level accuracy: %d/%zu = %.2f%%; subcategory %d/%d\n", correct,
              rows.size(), 100.0 * accuracy, sub_correct, sub_checked);
  EXPECT_GE(accuracy, 0.97);
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
  EXPECT_EQ(Sub(c, "triton_poi_fused_silu_mul_0"), "activation.silu");
  EXPECT_EQ(Sub(c, "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0"), "normalization.rms_norm");
  EXPECT_EQ(Sub(c, "triton_red_fused__to_copy_add_embedding_mean_mul_pow_rsqrt_0"),
            "normalization.rms_norm");
  EXPECT_EQ(Sub(c, "triton_tem_fused_mm_0"), "matmul.triton");
  EXPECT_EQ(Sub(c, "triton_poi_fused_add_cos_sin_0"), "positional.rope");
  EXPECT_EQ(Sub(c, "triton_per_fused__softmax_6"), "normalization.softmax");
  EXPECT_EQ(Sub(c, "triton_poi_fused_add_mul_3"), "elementwise.triton");
  EXPECT_EQ(Sub(c, "triton_poi_fused_addmm_3"), "elementwise.triton");  // token, not "mm"
  EXPECT_EQ(Sub(c, "triton__0d1d2d3d"), "other.triton");
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
  EXPECT_EQ(Sub(c,
                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<int, "
                "at::native::ArgMaxOps<int>>>()"),
            "elementwise.reduce");
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
    EXPECT_FALSE(IsComputeCategory(c.Classify(name).category));
  }
  EXPECT_FALSE(KernelClassifier::IsMemoryActivityName("void at::native::direct_copy_kernel_cuda"));
  EXPECT_EQ(Sub(c,
                "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_"
                "cuda(at::TensorIteratorBase&)::{lambda()#3}>()"),
            "elementwise.copy");
}

TEST(Taxonomy, UserRulesOverrideBuiltins) {
  KernelClassifier c;
  EXPECT_EQ(Sub(c, "my_fused_attn_kernel"), "other");
  EXPECT_EQ(Sub(c, "void vllm::rms_norm_kernel<c10::Half>()"), "normalization.rms_norm");
  const std::string text =
      "# comment\n"
      "\n"
      "contains My_Fused_Attn attention.prefill\n"
      "token rms_norm_kernel elementwise.custom_norm   # trailing text is not a comment\n";
  // The trailing '#...' makes the last field "comment", an invalid category -> error.
  EXPECT_FALSE(c.LoadRuleText(text, "inline").ok());
  ASSERT_TRUE(c.LoadRuleText("contains My_Fused_Attn attention.prefill\n"
                             "prefix void vllm::rms_norm elementwise.custom_norm\n"
                             "regex ^mystery_[0-9]+$ other.mystery\n"
                             "exact foo moe\n",
                             "inline")
                  .ok());
  EXPECT_EQ(Sub(c, "my_fused_attn_kernel"), "attention.prefill");
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
