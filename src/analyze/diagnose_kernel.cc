// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// kernel_bound: the GPU is the limit and the kernel evidence supports a recoverable stake.

#include "src/analyze/diagnose_internal.h"

namespace inferscope::analyze::diagnose_internal {

void KernelFixes(std::string_view category, FindingBuilder& f) {
  if (category == "attention") {
    f.Fix(
        "Use the fastest attention backend for the GPU (FlashAttention 3 / FlashInfer on Hopper, "
        "FlashMLA for MLA models)");
    f.Fix(
        "FP8 KV cache halves the bytes attention reads; prefix caching and shorter contexts cut "
        "attention work");
  } else if (category == "matmul") {
    f.Fix(
        "Quantize weights (FP8, INT4 AWQ/GPTQ with Marlin kernels) to cut the bytes each GEMM "
        "reads");
    f.Fix("Larger batches raise GEMM arithmetic intensity; tensor parallelism splits the GEMMs");
  } else if (category == "moe") {
    f.Fix("Use fused/grouped MoE kernels tuned for this GPU (vLLM fused_moe configs, DeepGEMM)");
    f.Fix("Spread experts with expert parallelism; check routing balance");
  } else {
    f.Fix("Fuse these kernels (torch.compile / Inductor, fused norm+residual, fused activation)");
    f.Fix("Look for unintended casts and copies (.to(), .contiguous(), .float()) in the step");
  }
  f.Fix(
      "Profile the named kernel with Nsight Compute: memory- or compute-bound, and how far from "
      "the roofline");
}

namespace {

// The share of kernel time a category usually has in LLM inference. GEMMs (matmul, moe) are the
// model's work: they read the weights at decode and do the FLOPs at prefill, and dense models
// spend most of the step in them. Attention grows with the context. Everything else (norms,
// activations, rotary, quantization, KV writes, sampling, casts) is glue around them.
double UsualPct(std::string_view category, const DiagnosisThresholds& t) {
  if (category == "matmul" || category == "moe") return t.usual_gemm_pct;
  if (category == "attention") return t.usual_attention_pct;
  return t.usual_glue_pct;
}

// FlashAttention 2's forward kernel (FA2 and PyTorch's copy of it), compute-bound at prefill. On
// Hopper, FlashAttention 3 (kernels named FlashAttnFwdSm90) runs the same forward 1.5-2x faster
// (FA3 paper): FA2 uses neither TMA nor warp specialization. Split-KV decode kernels are not
// included: decode attention is bound by reading the KV cache, where both reach HBM bandwidth.
bool IsFlashAttention2Forward(std::string_view name) {
  return name.find("flash_fwd_kernel") != std::string_view::npos &&
         name.find("splitkv") == std::string_view::npos &&
         name.find("Sm90") == std::string_view::npos;
}

std::string Display(const KernelRow& k) { return k.display_name.empty() ? k.name : k.display_name; }

}  // namespace

std::string WhereTimeGoes(const Analysis& a) {
  std::vector<const CategoryRow*> cats;
  for (const CategoryRow& c : a.summary.categories)
    if (c.time_ns > 0) cats.push_back(&c);
  std::stable_sort(cats.begin(), cats.end(), [](const CategoryRow* x, const CategoryRow* y) {
    return x->time_ns > y->time_ns;
  });
  std::string out;
  for (size_t i = 0; i < cats.size() && i < 3; ++i)
    out += fmt::format("{}{} {:.0f}%", i ? ", " : "", cats[i]->name, cats[i]->pct);
  if (!a.summary.top_kernels.empty())
    out += fmt::format(" (heaviest kernel: {}, {:.0f}%)", Display(a.summary.top_kernels[0]),
                       a.summary.top_kernels[0].pct);
  return out;
}

std::optional<Finding> KernelBound(const Analysis& a, const Job& j, const DiagnosisThresholds& t) {
  // The GPU must be the limit: busy, so that idle causes (their own findings) are the smaller
  // lever. Then the stake is only what the kernel evidence supports: time in a category beyond its
  // usual share, or the time a known faster kernel would save. A dominant kernel alone is where
  // the time goes, not time anyone can win back.
  if (!j.has_gpu || j.busy_pct() < t.kernel_bound_min_busy_pct) return std::nullopt;
  // A CUDA graph traced per launch (the live path's default) shows as one pseudo-kernel,
  // "[cuda graph N]", of category "other": it says nothing about which kernels take the time.
  // Unclassified kernels ("other") have no usual share to exceed; communication and copies have
  // their own verdicts.
  auto graph_launch = [](const KernelRow& k) { return k.name.starts_with("[cuda graph "); };
  auto own_verdict = [](std::string_view c) {
    return c == "communication" || c == "memory" || c == "other";
  };
  const double busy = j.busy_pct() / 100;

  const CategoryRow* over = nullptr;
  double excess_pct = 0, over_pct = 0;
  // The usual attention share is about decode, where attention reads the KV cache and FP8 KV or a
  // better backend shrinks it. Prefill attention is FLOP-bound and grows with the prompt; its cost
  // is a known-slow kernel (below) or, beside decode, prefill_interference.
  const double prefill_attention_pct = a.summary.kernel_time_ns > 0
                                           ? 100 * SubcategoryNs(a, "attention.prefill") /
                                                 static_cast<double>(a.summary.kernel_time_ns)
                                           : 0;
  for (const CategoryRow& c : a.summary.categories) {
    if (own_verdict(c.name)) continue;
    const double pct = c.name == "attention" ? c.pct - prefill_attention_pct : c.pct;
    const double excess = pct - UsualPct(c.name, t);
    if (excess > excess_pct) over = &c, excess_pct = excess, over_pct = pct;
  }
  double fa2_pct = 0;
  const KernelRow* fa2 = nullptr;
  if (j.hopper)
    for (const KernelRow& k : a.summary.top_kernels)
      if (!graph_launch(k) && IsFlashAttention2Forward(k.name)) {
        fa2_pct += k.pct;
        if (!fa2) fa2 = &k;
      }
  const double excess_stake = busy * excess_pct / 100;
  const double slow_stake = busy * fa2_pct / 100 * t.slow_kernel_recoverable_share;
  const double stake = std::max(excess_stake, slow_stake);
  if (stake < t.kernel_bound_min_score || (!over && !fa2)) return std::nullopt;

  const bool by_slow = slow_stake >= excess_stake;
  std::string category = by_slow ? fa2->category : over->name;
  // The heaviest kernel of the category tells the user where to look.
  const KernelRow* example = by_slow ? fa2 : nullptr;
  if (!example)
    for (const KernelRow& k : a.summary.top_kernels)
      if (k.category == category && !graph_launch(k)) {
        example = &k;
        break;
      }
  const CategoryRow* cat = CategoryByName(a, category);
  const double cat_pct = by_slow ? (cat ? cat->pct : 0) : over_pct;
  const bool decode_part = !by_slow && category == "attention" && prefill_attention_pct > 0;
  const std::string what = decode_part ? std::string("attention (decode)") : category;
  const std::string heaviest =
      example ? fmt::format(" (heaviest: {}, {:.0f}%)", Display(*example), example->pct) : "";
  FindingBuilder f("kernel_bound", stake, 0.75);
  if (by_slow) {
    f.Summary(fmt::format(
        "{} (FlashAttention 2) takes {:.0f}% of GPU time on a {:.0f}% busy Hopper GPU, where "
        "FlashAttention 3 does the same work about 1.5x faster: {} of the time is recoverable",
        Display(*fa2), fa2_pct, busy * 100, Pct(stake)));
  } else {
    f.Summary(fmt::format(
        "{} kernels take {:.0f}% of GPU time on a {:.0f}% busy GPU, {:.0f} points over their "
        "usual {:.0f}% in LLM inference{}: {} of the time is recoverable",
        what, cat_pct, busy * 100, excess_pct, UsualPct(category, t), heaviest, Pct(stake)));
  }
  f.Ev("busy_pct", busy * 100, "%").Ev("category_pct", cat_pct, "%");
  if (example) f.Ev("kernel_pct", by_slow ? fa2_pct : example->pct, "%");
  f.Ev("usual_category_pct", UsualPct(category, t), "%").Ev("recoverable_pct", stake * 100, "%");
  // The FlashAttention 3 fix addresses the FA2 kernel's time: only when that is the evidence
  // (or the finding is about attention), never on another category's finding.
  if (fa2 && (by_slow || category == "attention"))
    f.Fix(
        "Switch to FlashAttention 3 on Hopper (vLLM picks it with VLLM_FLASH_ATTN_VERSION=3; "
        "FlashInfer is the alternative)");
  KernelFixes(category, f);
  return f.Build(t);
}

}  // namespace inferscope::analyze::diagnose_internal
