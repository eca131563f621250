// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "src/analyze/analysis.h"
#include "src/base/file.h"
#include "src/model/taxonomy.h"

namespace inferscope::analyze {
namespace {

// ---------------------------------------------------------------------------------------------
// Thresholds by name.

struct ThresholdSpec {
  const char* name;
  double DiagnosisThresholds::*field;
  double max;  // values must lie in [0, max]
};

constexpr double kNoMax = 1e12;

// Shares are 0..1, percentages 0..100; everything else only needs to be non-negative.
constexpr ThresholdSpec kThresholdSpecs[] = {
    {"critical_score", &DiagnosisThresholds::critical_score, 1},
    {"warning_score", &DiagnosisThresholds::warning_score, 1},
    {"burst_gap_ms", &DiagnosisThresholds::burst_gap_ms, kNoMax},
    {"batching_min_queue_share", &DiagnosisThresholds::batching_min_queue_share, 1},
    {"batching_min_idle_share", &DiagnosisThresholds::batching_min_idle_share, 1},
    {"small_gemm_max_mean_us", &DiagnosisThresholds::small_gemm_max_mean_us, kNoMax},
    {"small_gemm_min_share", &DiagnosisThresholds::small_gemm_min_share, 1},
    {"launch_max_busy_pct", &DiagnosisThresholds::launch_max_busy_pct, 100},
    {"launch_min_host_wait_share", &DiagnosisThresholds::launch_min_host_wait_share, 1},
    {"launch_min_short_kernel_pct", &DiagnosisThresholds::launch_min_short_kernel_pct, 100},
    {"launch_min_idle_share", &DiagnosisThresholds::launch_min_idle_share, 1},
    {"kernel_bound_min_busy_pct", &DiagnosisThresholds::kernel_bound_min_busy_pct, 100},
    {"kernel_bound_min_kernel_pct", &DiagnosisThresholds::kernel_bound_min_kernel_pct, 100},
    {"kernel_bound_min_subcategory_pct", &DiagnosisThresholds::kernel_bound_min_subcategory_pct,
     100},
    {"kernel_bound_min_category_pct", &DiagnosisThresholds::kernel_bound_min_category_pct, 100},
    {"saturated_min_busy_pct", &DiagnosisThresholds::saturated_min_busy_pct, 100},
    {"saturated_min_dram_bw_pct", &DiagnosisThresholds::saturated_min_dram_bw_pct, 100},
    {"saturated_min_tensor_active_pct", &DiagnosisThresholds::saturated_min_tensor_active_pct, 100},
    {"saturated_min_occupancy_pct", &DiagnosisThresholds::saturated_min_occupancy_pct, 100},
    {"comm_min_exposed_share", &DiagnosisThresholds::comm_min_exposed_share, 1},
    {"comm_min_compute_imbalance", &DiagnosisThresholds::comm_min_compute_imbalance, kNoMax},
    {"host_sync_min_share", &DiagnosisThresholds::host_sync_min_share, 1},
    {"transfer_min_share", &DiagnosisThresholds::transfer_min_share, 1},
    {"transfer_min_pageable_count", &DiagnosisThresholds::transfer_min_pageable_count, kNoMax},
    {"alloc_min_slow_calls", &DiagnosisThresholds::alloc_min_slow_calls, kNoMax},
    {"alloc_min_share", &DiagnosisThresholds::alloc_min_share, 1},
    {"prefill_min_kernel_share", &DiagnosisThresholds::prefill_min_kernel_share, 1},
    {"prefill_min_decode_share", &DiagnosisThresholds::prefill_min_decode_share, 1},
    {"prefill_min_host_share", &DiagnosisThresholds::prefill_min_host_share, 1},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------------------------
// The job-wide figures every rule reads: sums over ranks (a single rank is its own job).

struct GapKind {
  uint64_t count = 0;
  double total_ns = 0;
  double mean_ns() const { return count ? total_ns / static_cast<double>(count) : 0; }
};

struct SyncTotals {
  std::string type;
  uint64_t count = 0;
  double wait_ns = 0;
  std::map<std::string, std::pair<uint64_t, int64_t>> waited_on;  // name -> (count, wait_ns)
};

struct TransferTotals {
  uint64_t count = 0, bytes = 0, pageable = 0;
  double time_ns = 0;
};

struct Job {
  bool has_gpu = false;
  size_t ranks = 0;
  double span_ns = 0, busy_ns = 0, idle_ns = 0, kernel_time_ns = 0;
  uint64_t kernel_count = 0;
  GapKind host_wait, kernel_wait, other;
  uint64_t short_kernels = 0, cpu_launches = 0, graph_launches = 0;
  double cpu_launch_total_ns = 0;
  std::vector<SyncTotals> syncs;  // kSyncTypeNames order
  std::map<std::string, TransferTotals> transfers;
  uint64_t slow_alloc_calls = 0, malloc_calls = 0, free_calls = 0;
  double slow_alloc_ns = 0, alloc_max_ns = 0;

  double Share(double ns) const { return span_ns > 0 ? std::clamp(ns / span_ns, 0.0, 1.0) : 0; }
  double busy_pct() const { return Share(busy_ns) * 100; }
  double gap_total_ns() const { return host_wait.total_ns + kernel_wait.total_ns + other.total_ns; }
  // Device idle time apportioned to a gap kind. Gap totals are per stream and may exceed the device
  // idle time (several streams idle at once), so their mix, not their sum, splits the idle time.
  double IdleShareOf(double gap_ns) const {
    const double gaps = gap_total_ns();
    return gaps > 0 ? Share(idle_ns) * gap_ns / gaps : 0;
  }
};

Job Summarize(const Analysis& a) {
  Job j;
  j.ranks = a.ranks.size();
  j.has_gpu = !a.ranks.empty();
  const JobSummary& s = a.summary;
  j.span_ns = static_cast<double>(s.temporal.span_ns);
  j.busy_ns = static_cast<double>(s.temporal.busy_ns);
  j.idle_ns = static_cast<double>(s.temporal.idle_ns);
  j.kernel_time_ns = static_cast<double>(s.kernel_time_ns);
  j.kernel_count = s.kernel_count;
  for (const IdleGapRow& g : s.idle_gaps) {
    GapKind* kind = g.kind == "host_wait"     ? &j.host_wait
                    : g.kind == "kernel_wait" ? &j.kernel_wait
                                              : &j.other;
    kind->count += g.count;
    kind->total_ns += static_cast<double>(g.total_ns);
  }
  for (const RankAnalysis& r : a.ranks) {
    j.short_kernels += r.launch.short_kernels;
    j.cpu_launches += r.launch.cpu_launch_count;
    j.graph_launches += r.launch.graph_launches;
    j.cpu_launch_total_ns += static_cast<double>(r.launch.cpu_launch_total_ns);
    for (const SyncRow& row : r.syncs) {
      auto it = std::find_if(j.syncs.begin(), j.syncs.end(),
                             [&](const SyncTotals& t) { return t.type == row.type; });
      if (it == j.syncs.end()) {
        j.syncs.push_back({row.type, 0, 0, {}});
        it = j.syncs.end() - 1;
      }
      it->count += row.count;
      it->wait_ns += static_cast<double>(row.total_ns);
      for (const WaitedOnRow& w : row.waited_on) {
        auto& [count, wait] =
            it->waited_on[w.display_name.empty() ? w.kernel_name : w.display_name];
        count += w.count;
        wait += w.wait_ns;
      }
    }
    for (const TransferRow& t : r.transfers) {
      TransferTotals& tt = j.transfers[t.direction];
      tt.count += t.count;
      tt.bytes += t.bytes;
      tt.pageable += t.pageable_count;
      tt.time_ns += static_cast<double>(t.time_ns);
    }
    j.slow_alloc_calls += r.allocations.slow_calls;
    j.slow_alloc_ns += static_cast<double>(r.allocations.slow_total_ns);
    j.malloc_calls += r.allocations.malloc_calls;
    j.free_calls += r.allocations.free_calls;
    j.alloc_max_ns = std::max({j.alloc_max_ns, static_cast<double>(r.allocations.malloc_max_ns),
                               static_cast<double>(r.allocations.free_max_ns)});
  }
  return j;
}

double SubcategoryNs(const Analysis& a, std::string_view name) {
  for (const CategoryRow& row : a.summary.subcategories)
    if (row.name == name) return static_cast<double>(row.time_ns);
  return 0;
}

const CategoryRow* CategoryByName(const Analysis& a, std::string_view name) {
  for (const CategoryRow& row : a.summary.categories)
    if (row.name == name) return &row;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Building findings.

std::string Pct(double share) { return fmt::format("{:.0f}%", share * 100); }
std::string Ms(double ns) {
  return ns >= 1e9   ? fmt::format("{:.2f} s", ns / 1e9)
         : ns >= 1e6 ? fmt::format("{:.1f} ms", ns / 1e6)
                     : fmt::format("{:.0f} us", ns / 1e3);
}

class FindingBuilder {
 public:
  FindingBuilder(const char* id, double score, double confidence) {
    f_.id = id;
    f_.score = std::clamp(std::isfinite(score) ? score : 0.0, 0.0, 1.0);
    f_.confidence = std::clamp(confidence, 0.0, 1.0);
  }
  FindingBuilder& Summary(std::string s) {
    f_.summary = std::move(s);
    return *this;
  }
  FindingBuilder& Ev(std::string name, double value, std::string unit) {
    f_.evidence.push_back({std::move(name), std::isfinite(value) ? value : 0, std::move(unit)});
    return *this;
  }
  FindingBuilder& Fix(std::string fix) {
    f_.fixes.push_back(std::move(fix));
    return *this;
  }
  FindingBuilder& Rank(int rank) {
    f_.rank = rank;
    return *this;
  }
  Finding Build(const DiagnosisThresholds& t, const char* max_severity = "critical") {
    f_.severity = f_.score >= t.critical_score  ? "critical"
                  : f_.score >= t.warning_score ? "warning"
                                                : "info";
    if (std::string_view(max_severity) == "warning" && f_.severity == "critical")
      f_.severity = "warning";
    return std::move(f_);
  }

 private:
  Finding f_;
};

// Matmul time in the top kernels whose mean duration is a small-batch GEMM; -1 without matmuls.
double SmallGemmShare(const Analysis& a, const DiagnosisThresholds& t) {
  double matmul_ns = 0, small_ns = 0;
  for (const KernelRow& k : a.summary.top_kernels) {
    if (k.category != "matmul") continue;
    matmul_ns += static_cast<double>(k.total_ns);
    if (static_cast<double>(k.mean_ns) < t.small_gemm_max_mean_us * 1e3)
      small_ns += static_cast<double>(k.total_ns);
  }
  return matmul_ns > 0 ? small_ns / matmul_ns : -1;
}

// Idle time in gaps whose kind's mean gap is "between bursts" (>= burst_gap_ms). Host-wait gaps
// always qualify (the launch came after the stream ran dry). "Other" gaps only without launch
// records: with them, "other" means the work was already launched and waited on another stream or
// an event (a dependency, e.g. a collective), which is not an idle host.
double LongGapIdleShare(const Job& j, const DiagnosisThresholds& t) {
  const double burst_ns = t.burst_gap_ms * 1e6;
  double long_ns = 0;
  if (j.host_wait.count && j.host_wait.mean_ns() >= burst_ns) long_ns += j.host_wait.total_ns;
  if (j.cpu_launches == 0 && j.other.count && j.other.mean_ns() >= burst_ns)
    long_ns += j.other.total_ns;
  return j.IdleShareOf(long_ns);
}

std::optional<Finding> Batching(const Analysis& a, const Job& j, const HostSignals& h,
                                const DiagnosisThresholds& t) {
  const bool queue_known = h.queue_share_of_e2e.has_value();
  const double queue_share = queue_known ? std::clamp(*h.queue_share_of_e2e, 0.0, 1.0) : 0;
  const bool by_queue = queue_known && queue_share >= t.batching_min_queue_share;
  // Known light load (requests do not queue) explains an idle GPU: no batching problem then.
  const double gap_share = j.has_gpu ? LongGapIdleShare(j, t) : 0;
  const bool by_gaps = !(queue_known && !by_queue) && gap_share >= t.batching_min_idle_share;
  if (!by_queue && !by_gaps) return std::nullopt;

  const double small_gemm = j.has_gpu ? SmallGemmShare(a, t) : -1;
  const bool small_gemms = small_gemm >= t.small_gemm_min_share;
  double confidence = by_queue ? 0.85 : 0.4;
  if (small_gemms) confidence += 0.1;
  FindingBuilder f("batching", std::max(by_queue ? queue_share : 0, by_gaps ? gap_share : 0),
                   confidence);
  if (by_queue) {
    f.Summary(fmt::format(
        "requests wait in the queue for {} of their latency{}", Pct(queue_share),
        h.queue_mean_s && h.e2e_mean_s
            ? fmt::format(" (mean {:.2f} s of {:.2f} s)", *h.queue_mean_s, *h.e2e_mean_s)
            : ""));
  } else {
    const double gaps = static_cast<double>(j.host_wait.count + j.other.count);
    f.Summary(fmt::format(
        "GPU idle {} of the time between bursts of work (mean idle gap {}): the host submitted no "
        "work",
        Pct(gap_share), Ms(gaps > 0 ? (j.host_wait.total_ns + j.other.total_ns) / gaps : 0)));
  }
  if (queue_known) f.Ev("queue_share_pct", queue_share * 100, "%");
  if (h.queue_mean_s) f.Ev("queue_mean_s", *h.queue_mean_s, "s");
  if (h.e2e_mean_s) f.Ev("e2e_mean_s", *h.e2e_mean_s, "s");
  if (h.running_requests_mean) f.Ev("running_requests_mean", *h.running_requests_mean, "count");
  if (h.waiting_requests_mean) f.Ev("waiting_requests_mean", *h.waiting_requests_mean, "count");
  if (h.kv_cache_usage_max) f.Ev("kv_cache_usage_max_pct", *h.kv_cache_usage_max * 100, "%");
  if (j.has_gpu) {
    f.Ev("busy_pct", j.busy_pct(), "%");
    f.Ev("long_gap_idle_pct", gap_share * 100, "%");
    f.Ev("host_wait_gap_mean_ms", j.host_wait.mean_ns() / 1e6, "ms");
    f.Ev("other_gap_mean_ms", j.other.mean_ns() / 1e6, "ms");
  }
  if (small_gemm >= 0) f.Ev("small_gemm_pct", small_gemm * 100, "%");

  f.Fix(
      "Raise the engine's batch limits so waiting requests join the running batch (vLLM "
      "--max-num-seqs / --max-num-batched-tokens, SGLang --max-running-requests)");
  if (h.kv_cache_usage_max && *h.kv_cache_usage_max >= 0.9)
    f.Fix(
        "The KV cache is full, which caps the batch: give it more memory "
        "(--gpu-memory-utilization, FP8 KV cache, a smaller --max-model-len)");
  if (by_gaps)
    f.Fix(
        "Send more concurrent requests or batch inputs per step; check host work between "
        "steps (tokenization, scheduling, data loading) with a CPU profiler");
  if (by_queue && j.has_gpu && j.busy_pct() >= t.saturated_min_busy_pct)
    f.Fix("The GPU is already busy: queueing measures missing capacity; add replicas or GPUs");
  return f.Build(t);
}

std::optional<Finding> LaunchOverhead(const Job& j, const DiagnosisThresholds& t) {
  if (!j.has_gpu || j.kernel_count == 0) return std::nullopt;
  const double gaps = j.gap_total_ns();
  const double host_share = gaps > 0 ? j.host_wait.total_ns / gaps : 0;
  const double short_pct =
      100.0 * static_cast<double>(j.short_kernels) / static_cast<double>(j.kernel_count);
  const bool short_gaps = j.host_wait.count && j.host_wait.mean_ns() < t.burst_gap_ms * 1e6;
  const double idle_share = short_gaps ? j.IdleShareOf(j.host_wait.total_ns) : 0;
  if (j.busy_pct() > t.launch_max_busy_pct || host_share < t.launch_min_host_wait_share ||
      !short_gaps || short_pct < t.launch_min_short_kernel_pct ||
      idle_share < t.launch_min_idle_share)
    return std::nullopt;
  // Host-wait classification needs the launch records; without them the rule is a guess.
  FindingBuilder f("launch_overhead", idle_share, j.cpu_launches > 0 ? 0.65 : 0.45);
  f.Summary(fmt::format(
      "GPU idle {} of the time waiting for kernel launches: {} short host gaps (mean {}), {:.0f}% "
      "of kernels shorter than 10 us",
      Pct(idle_share), j.host_wait.count, Ms(j.host_wait.mean_ns()), short_pct));
  f.Ev("busy_pct", j.busy_pct(), "%")
      .Ev("host_wait_idle_pct", idle_share * 100, "%")
      .Ev("host_wait_gaps", static_cast<double>(j.host_wait.count), "count")
      .Ev("host_wait_gap_mean_us", j.host_wait.mean_ns() / 1e3, "us")
      .Ev("short_kernel_pct", short_pct, "%")
      .Ev("kernel_count", static_cast<double>(j.kernel_count), "count")
      .Ev("graph_launches", static_cast<double>(j.graph_launches), "count");
  if (j.cpu_launches > 0)
    f.Ev("cpu_launch_mean_us", j.cpu_launch_total_ns / static_cast<double>(j.cpu_launches) / 1e3,
         "us");
  f.Fix(j.graph_launches == 0
            ? "Capture the step in CUDA graphs (vLLM/SGLang do by default: drop --enforce-eager / "
              "--disable-cuda-graph)"
            : "Widen CUDA graph coverage (full-graph capture, capture sizes covering the batch "
              "sizes served)");
  f.Fix("torch.compile the model (mode=\"reduce-overhead\" adds CUDA graphs)");
  f.Fix(
      "Fuse small kernels (fused norm/rotary/activation, Inductor or Triton fusion): fewer, "
      "larger kernels");
  f.Fix("Take Python work off the launching thread (async scheduling, overlap scheduler)");
  return f.Build(t);
}

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

std::optional<Finding> KernelBound(const Analysis& a, const Job& j, const DiagnosisThresholds& t) {
  if (!j.has_gpu || j.busy_pct() < t.kernel_bound_min_busy_pct) return std::nullopt;
  // A CUDA graph traced per launch (the live path's default) shows as one pseudo-kernel,
  // "[cuda graph N]", of category "other": it says nothing about which kernels take the time, so
  // neither it nor the "other" category it fills can be the culprit (INFERSCOPE_GRAPH_NODES=1
  // traces the graphs' kernels).
  auto graph_launch = [](const KernelRow& k) { return k.name.starts_with("[cuda graph "); };
  bool graphs = false;
  for (const KernelRow& k : a.summary.top_kernels) graphs = graphs || graph_launch(k);
  // Communication and copies have their own verdicts; a copy *kernel* (memory.kernel.*) runs on
  // the SMs like any compute kernel, so at kernel and sub-category level it can be the culprit.
  auto own_verdict = [graphs](std::string_view c, std::string_view sub = {}) {
    if (c == "memory" && sub.starts_with(model::kMemoryKernelPrefix)) return false;
    return c == "communication" || c == "memory" || (graphs && c == "other");
  };
  std::string name, category, level;
  double pct = 0;
  for (const KernelRow& k : a.summary.top_kernels) {
    if (own_verdict(k.category, k.subcategory) || graph_launch(k)) continue;
    if (k.pct >= t.kernel_bound_min_kernel_pct) {
      name = k.display_name.empty() ? k.name : k.display_name, category = k.category;
      level = "kernel", pct = k.pct;
    }
    break;  // only the heaviest compute kernel can dominate
  }
  if (name.empty())
    for (const CategoryRow& s : a.summary.subcategories) {
      const std::string c = s.name.substr(0, s.name.find('.'));
      if (own_verdict(c, s.name)) continue;
      if (s.pct >= t.kernel_bound_min_subcategory_pct) name = s.name, category = c, pct = s.pct;
      level = "subcategory";
      break;
    }
  if (name.empty()) {
    const CategoryRow* top = nullptr;
    for (const CategoryRow& c : a.summary.categories)
      if (!own_verdict(c.name) && (!top || c.time_ns > top->time_ns)) top = &c;
    if (top && top->pct >= t.kernel_bound_min_category_pct)
      name = top->name, category = top->name, pct = top->pct, level = "category";
  }
  if (name.empty()) return std::nullopt;
  // For a sub-category or category, the heaviest kernel in it tells the user where to look.
  const KernelRow* example = nullptr;
  if (level != "kernel")
    for (const KernelRow& k : a.summary.top_kernels)
      if (k.category == category && (level == "category" || k.subcategory == name)) {
        example = &k;
        break;
      }
  std::string what = name + " takes";
  if (name == "other" || name == "other.other")
    what = "unclassified kernels take";
  else if (level == "category")
    what = name + " kernels take";
  const double busy = j.busy_pct();
  FindingBuilder f("kernel_bound", busy / 100 * pct / 100, 0.75);
  f.Summary(fmt::format(
      "{} {:.0f}% of GPU time on a {:.0f}% busy GPU{}", what, pct, busy,
      example ? fmt::format(" (heaviest: {}, {:.0f}%)",
                            example->display_name.empty() ? example->name : example->display_name,
                            example->pct)
              : ""));
  f.Ev("busy_pct", busy, "%").Ev(level + "_pct", pct, "%");
  if (const CategoryRow* c = CategoryByName(a, category); c && level != "category")
    f.Ev("category_pct", c->pct, "%");
  KernelFixes(category, f);
  // A dominant kernel on a busy GPU is where the time goes, not a malfunction: at most a warning.
  return f.Build(t, "warning");
}

std::optional<Finding> HardwareSaturated(const Job& j, const HostSignals& h,
                                         const DiagnosisThresholds& t) {
  std::optional<double> busy;
  if (j.has_gpu)
    busy = j.busy_pct();
  else if (h.gpu_util_pct_mean)
    busy = *h.gpu_util_pct_mean;
  if (!busy || *busy < t.saturated_min_busy_pct) return std::nullopt;
  // Utilization alone never decides: one of the GPM counters must show the limit.
  std::vector<std::string> limits;
  const bool dram =
      h.gpm_dram_bw_util_pct && *h.gpm_dram_bw_util_pct >= t.saturated_min_dram_bw_pct;
  const bool tensor =
      h.gpm_tensor_active_pct && *h.gpm_tensor_active_pct >= t.saturated_min_tensor_active_pct;
  const bool occupancy =
      h.gpm_sm_occupancy_pct && *h.gpm_sm_occupancy_pct >= t.saturated_min_occupancy_pct;
  if (dram) limits.push_back(fmt::format("DRAM bandwidth at {:.0f}%", *h.gpm_dram_bw_util_pct));
  if (tensor)
    limits.push_back(fmt::format("tensor cores active {:.0f}%", *h.gpm_tensor_active_pct));
  if (occupancy) limits.push_back(fmt::format("SM occupancy {:.0f}%", *h.gpm_sm_occupancy_pct));
  if (limits.empty()) return std::nullopt;
  FindingBuilder f("hardware_saturated", *busy / 100, 0.85);
  std::string joined;
  for (const std::string& l : limits) joined += (joined.empty() ? "" : ", ") + l;
  f.Summary(
      fmt::format("GPU busy {:.0f}% with {}: the GPU runs at a hardware limit", *busy, joined));
  f.Ev("busy_pct", *busy, "%");
  if (h.gpm_sm_active_pct) f.Ev("gpm_sm_active_pct", *h.gpm_sm_active_pct, "%");
  if (h.gpm_sm_occupancy_pct) f.Ev("gpm_sm_occupancy_pct", *h.gpm_sm_occupancy_pct, "%");
  if (h.gpm_tensor_active_pct) f.Ev("gpm_tensor_active_pct", *h.gpm_tensor_active_pct, "%");
  if (h.gpm_dram_bw_util_pct) f.Ev("gpm_dram_bw_util_pct", *h.gpm_dram_bw_util_pct, "%");
  if (dram)
    f.Fix(
        "Memory-bandwidth bound: move fewer bytes (FP8/INT4 weights, FP8 KV cache); speculative "
        "decoding makes fewer, larger decode steps");
  if (tensor)
    f.Fix(
        "Compute bound: FP8 tensor cores double throughput; prefix caching avoids recomputing "
        "shared prompts");
  f.Fix("For more throughput add GPUs or replicas, or move to a faster GPU");
  f.Fix("If latency matters more than throughput, lower the maximum batch size");
  return f.Build(t);
}

std::optional<Finding> Communication(const Analysis& a, const Job& j,
                                     const DiagnosisThresholds& t) {
  if (!j.has_gpu) return std::nullopt;
  const JobSummary& s = a.summary;
  const double exposed_ns =
      static_cast<double>(std::max<int64_t>(0, s.communication_ns - s.communication_overlap_ns));
  const double exposed = j.Share(exposed_ns);
  const RankComparison& c = a.comparison;
  const bool straggler =
      c.straggler_rank >= 0 && c.compute.imbalance >= t.comm_min_compute_imbalance;
  const double mean_span = j.ranks ? j.span_ns / static_cast<double>(j.ranks) : 0;
  const double straggler_score =
      straggler && mean_span > 0 ? static_cast<double>(c.straggler_excess_compute_ns) / mean_span
                                 : 0;
  const bool by_exposed = exposed >= t.comm_min_exposed_share;
  if (!by_exposed && !straggler) return std::nullopt;

  std::string top_sub;
  double top_ns = 0;
  for (const CategoryRow& row : s.subcategories)
    if (row.name.rfind("communication", 0) == 0 && static_cast<double>(row.time_ns) > top_ns)
      top_sub = row.name, top_ns = static_cast<double>(row.time_ns);
  const CategoryRow* comm = CategoryByName(a, "communication");
  FindingBuilder f("communication", std::max(by_exposed ? exposed : 0, straggler_score),
                   by_exposed ? 0.75 : 0.6);
  if (by_exposed) {
    f.Summary(fmt::format(
        "collectives not overlapped with compute take {} of GPU time ({}{:.0f}% overlapped)",
        Pct(exposed), top_sub.empty() ? "" : top_sub + " leads, ", s.comm_compute_overlap_pct));
  } else {
    f.Summary(
        fmt::format("rank {} computes {:.0f}% more than the others: they wait for it in "
                    "collectives",
                    c.straggler_rank, c.compute.imbalance * 100));
    f.Rank(c.straggler_rank);
  }
  f.Ev("exposed_communication_pct", exposed * 100, "%")
      .Ev("communication_kernel_pct", comm ? comm->pct : 0, "%")
      .Ev("comm_compute_overlap_pct", s.comm_compute_overlap_pct, "%");
  if (j.ranks > 1) {
    f.Ev("compute_imbalance_pct", c.compute.imbalance * 100, "%")
        .Ev("communication_imbalance_pct", c.communication.imbalance * 100, "%");
    if (c.straggler_rank >= 0)
      f.Ev("straggler_excess_compute_ms", static_cast<double>(c.straggler_excess_compute_ns) / 1e6,
           "ms");
  }
  if (straggler)
    f.Fix(
        fmt::format("Balance rank {}'s work (uneven shards or batches, a slower or throttled GPU, "
                    "host contention)",
                    c.straggler_rank));
  f.Fix("Overlap collectives with compute (async all-reduce, DDP bucketing, micro-batch overlap)");
  f.Fix(
      "Use the engine's custom / symmetric-memory all-reduce for small messages (vLLM custom "
      "all-reduce, NVLS)");
  f.Fix("Check the interconnect: nvidia-smi topo -m (NVLink vs PCIe), NCCL_P2P_LEVEL, NCCL_ALGO");
  f.Fix(
      "Use a lower tensor-parallel degree (data or pipeline parallelism instead) when the model "
      "fits");
  return f.Build(t);
}

std::optional<Finding> HostSync(const Job& j, const DiagnosisThresholds& t) {
  if (!j.has_gpu) return std::nullopt;
  // stream_wait_event is a GPU-side wait; the others block the host thread.
  double wait_ns = 0;
  uint64_t calls = 0;
  const SyncTotals* top = nullptr;
  for (const SyncTotals& s : j.syncs) {
    if (s.type == "stream_wait_event") continue;
    wait_ns += s.wait_ns;
    calls += s.count;
    if (s.count && (!top || s.wait_ns > top->wait_ns)) top = &s;
  }
  const double share = j.Share(wait_ns);
  if (!top || share < t.host_sync_min_share) return std::nullopt;
  // A wait while the GPU computes costs nothing; the GPU loses at most its idle time to it.
  const double idle = j.Share(j.idle_ns);
  std::string target;
  int64_t target_ns = -1;
  // "[no GPU work finished during the wait]" names no culprit; a real kernel or copy does.
  for (const auto& [name, cw] : top->waited_on)
    if (name.rfind("[no GPU work", 0) != 0 && cw.second > target_ns)
      target = name, target_ns = cw.second;
  FindingBuilder f("host_sync", std::min(share, idle), 0.75);
  f.Summary(fmt::format("host blocked in {} synchronization {} of the time ({} call{}){}",
                        top->type, Pct(j.Share(top->wait_ns)), top->count,
                        top->count == 1 ? "" : "s",
                        target.empty() ? "" : ", waiting on " + target));
  f.Ev("sync_wait_pct", share * 100, "%")
      .Ev("sync_calls", static_cast<double>(calls), "count")
      .Ev(top->type + "_sync_wait_ms", top->wait_ns / 1e6, "ms")
      .Ev("idle_pct", idle * 100, "%");
  if (!target.empty()) f.Ev("waited_on_top_ms", static_cast<double>(target_ns) / 1e6, "ms");
  f.Fix(
      "Remove host reads of GPU values in the loop (.item(), .cpu(), .tolist(), printing "
      "tensors, Python branches on GPU values)");
  f.Fix(
      "Replace device/stream synchronize with CUDA events and non_blocking copies from pinned "
      "memory");
  f.Fix(
      "Enable asynchronous scheduling / output processing so the host prepares step N+1 while "
      "the GPU runs step N");
  return f.Build(t);
}

std::optional<Finding> MemoryTransfer(const Job& j, const DiagnosisThresholds& t) {
  if (!j.has_gpu) return std::nullopt;
  double time_ns = 0;
  uint64_t pageable = 0, count = 0, bytes = 0;
  std::string top;
  double top_ns = -1;
  for (const char* dir : {"htod", "dtoh", "htoh"}) {
    auto it = j.transfers.find(dir);
    if (it == j.transfers.end()) continue;
    time_ns += it->second.time_ns;
    pageable += it->second.pageable;
    count += it->second.count;
    bytes += it->second.bytes;
    if (it->second.count && it->second.time_ns > top_ns) top = dir, top_ns = it->second.time_ns;
  }
  const double share = j.Share(time_ns);
  const bool by_time = share >= t.transfer_min_share;
  const bool by_pageable =
      static_cast<double>(pageable) >= t.transfer_min_pageable_count && pageable > 0;
  if ((!by_time && !by_pageable) || top.empty()) return std::nullopt;
  const TransferTotals& tt = j.transfers.at(top);
  FindingBuilder f("memory_transfer", share, 0.8);
  if (by_time)
    f.Summary(
        fmt::format("host-device copies take {} of the time: {} {} copies, {:.2f} GB at "
                    "{:.1f} GB/s{}",
                    Pct(share), tt.count, top, static_cast<double>(tt.bytes) / 1e9,
                    tt.time_ns > 0 ? static_cast<double>(tt.bytes) / tt.time_ns : 0,
                    pageable ? fmt::format(" ({} pageable)", pageable) : ""));
  else
    f.Summary(
        fmt::format("{} copies between GPU and pageable host memory: each one blocks the "
                    "host (copies take {:.1f}% of the time)",
                    pageable, share * 100));
  f.Ev("host_copy_pct", share * 100, "%")
      .Ev("host_copies", static_cast<double>(count), "count")
      .Ev("host_copy_gb", static_cast<double>(bytes) / 1e9, "GB")
      .Ev("pageable_copies", static_cast<double>(pageable), "count");
  f.Fix("Keep tensors on the GPU across steps; copy only token ids and results");
  if (pageable)
    f.Fix(
        "Copy from pinned host memory (pin_memory=True): pageable copies are staged and "
        "synchronous");
  f.Fix("Overlap the copies with compute on a separate stream (non_blocking=True)");
  f.Fix(
      "If weights or KV blocks are offloaded to the host, keep them on the GPU when memory "
      "allows");
  return f.Build(t);
}

std::optional<Finding> AllocationStalls(const Job& j, const DiagnosisThresholds& t) {
  if (!j.has_gpu || static_cast<double>(j.slow_alloc_calls) < t.alloc_min_slow_calls ||
      j.slow_alloc_calls == 0)
    return std::nullopt;
  const double share = j.Share(j.slow_alloc_ns);
  if (share < t.alloc_min_share) return std::nullopt;
  FindingBuilder f("allocation_stalls", share, 0.7);
  f.Summary(fmt::format("{} device allocations or frees over 1 ms, {} in all ({} of the time)",
                        j.slow_alloc_calls, Ms(j.slow_alloc_ns), Pct(share)));
  f.Ev("slow_alloc_calls", static_cast<double>(j.slow_alloc_calls), "count")
      .Ev("slow_alloc_ms", j.slow_alloc_ns / 1e6, "ms")
      .Ev("slow_alloc_pct", share * 100, "%")
      .Ev("alloc_max_ms", j.alloc_max_ns / 1e6, "ms")
      .Ev("malloc_calls", static_cast<double>(j.malloc_calls), "count")
      .Ev("free_calls", static_cast<double>(j.free_calls), "count");
  f.Fix("Let the caching allocator reuse memory: no torch.cuda.empty_cache() in the loop");
  f.Fix("Allocate up front (warm-up passes; vLLM --gpu-memory-utilization reserves the KV cache)");
  f.Fix(
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True avoids fragmentation-driven "
      "cudaMalloc/cudaFree");
  f.Fix("Use stream-ordered pools (cudaMallocAsync) for buffers whose size changes");
  return f.Build(t);
}

std::optional<Finding> PrefillInterference(const Analysis& a, const Job& j, const HostSignals& h,
                                           const DiagnosisThresholds& t) {
  const double prefill_ns = SubcategoryNs(a, "attention.prefill");
  const double decode_ns = SubcategoryNs(a, "attention.decode");
  const double kt = j.kernel_time_ns;
  const double prefill_share = kt > 0 ? prefill_ns / kt : 0;
  const double decode_share = kt > 0 ? decode_ns / kt : 0;
  const bool by_trace = j.has_gpu && decode_share >= t.prefill_min_decode_share && decode_ns > 0 &&
                        prefill_share >= t.prefill_min_kernel_share;
  double host_share = -1;
  if (h.prefill_mean_s && h.decode_mean_s && *h.prefill_mean_s + *h.decode_mean_s > 0)
    host_share = *h.prefill_mean_s / (*h.prefill_mean_s + *h.decode_mean_s);
  const bool by_host = host_share >= t.prefill_min_host_share;
  if (!by_trace && !by_host) return std::nullopt;
  const double trace_score = by_trace ? j.Share(j.busy_ns) * prefill_share : 0;
  const double host_score = by_host ? (h.e2e_mean_s && *h.e2e_mean_s > 0
                                           ? std::min(1.0, *h.prefill_mean_s / *h.e2e_mean_s)
                                           : host_share)
                                    : 0;
  FindingBuilder f("prefill_interference", std::max(trace_score, host_score),
                   by_trace && by_host ? 0.7
                   : by_host           ? 0.5
                                       : 0.45);
  if (by_trace)
    f.Summary(
        fmt::format("prefill attention takes {:.0f}% of GPU time beside decode ({:.0f}%): "
                    "long prefills stall the decode steps",
                    prefill_share * 100, decode_share * 100));
  else
    f.Summary(
        fmt::format("prefill takes {:.0f}% of the prefill+decode time of a request: long "
                    "prefills stall the decode steps",
                    host_share * 100));
  if (j.has_gpu)
    f.Ev("prefill_attention_pct", prefill_share * 100, "%")
        .Ev("decode_attention_pct", decode_share * 100, "%");
  if (host_share >= 0) f.Ev("prefill_share_of_request_pct", host_share * 100, "%");
  if (h.prefill_mean_s) f.Ev("prefill_mean_s", *h.prefill_mean_s, "s");
  if (h.decode_mean_s) f.Ev("decode_mean_s", *h.decode_mean_s, "s");
  if (h.ttft_mean_s) f.Ev("ttft_mean_s", *h.ttft_mean_s, "s");
  f.Fix(
      "Chunk prefills with a smaller token budget (vLLM --enable-chunked-prefill "
      "--max-num-batched-tokens, SGLang --chunked-prefill-size)");
  f.Fix("Disaggregate prefill and decode onto separate GPUs or instances");
  f.Fix("Prefix caching removes repeated prefill of shared prompts");
  return f.Build(t);
}

Finding Healthy(const Job& j, const HostSignals& h, const DiagnosisThresholds& t) {
  FindingBuilder f("healthy", 0, j.has_gpu ? 0.6 : 0.2);
  std::string why;
  if (!j.has_gpu) {
    why = "no GPU activity recorded";
  } else {
    why = fmt::format("GPU busy {:.0f}%", j.busy_pct());
    if (h.queue_share_of_e2e && j.busy_pct() < t.launch_max_busy_pct)
      why += ", requests do not queue: the load is light";
  }
  f.Summary("no bottleneck crossed its threshold (" + why + ")");
  if (j.has_gpu) f.Ev("busy_pct", j.busy_pct(), "%");
  if (h.queue_share_of_e2e) f.Ev("queue_share_pct", *h.queue_share_of_e2e * 100, "%");
  return f.Build(t);
}

int SeverityRank(const std::string& s) { return s == "critical" ? 0 : s == "warning" ? 1 : 2; }

// Tie order: kFindingIds order, except that kernel_bound ("where the time goes") yields to any
// verdict that explains the same time more specifically (prefill_interference on a dominant
// prefill kernel scores exactly the same).
int TieOrder(const std::string& id) {
  const int n = static_cast<int>(std::size(kFindingIds));
  if (id == "kernel_bound") return n - 1;
  if (id == "healthy") return n;
  for (int i = 0; i < n; ++i)
    if (id == kFindingIds[i]) return i;
  return n + 1;
}

// Scores equal to the 4 decimals the report shows are a tie: the same time reached by two rules
// through different float arithmetic must not be ordered by rounding noise.
int64_t ScoreKey(double score) { return std::llround(score * 1e4); }

}  // namespace

std::vector<std::string> ThresholdNames() {
  std::vector<std::string> names;
  for (const ThresholdSpec& s : kThresholdSpecs) names.emplace_back(s.name);
  return names;
}

base::StatusOr<DiagnosisThresholds> ParseThresholds(std::string_view text) {
  DiagnosisThresholds t;
  std::set<std::string_view> seen;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      return base::InvalidArgumentError(
          fmt::format("thresholds line {}: expected 'key = value'", line_no));
    const std::string_view key = Trim(line.substr(0, eq));
    const std::string_view value = Trim(line.substr(eq + 1));
    const ThresholdSpec* spec = nullptr;
    for (const ThresholdSpec& s : kThresholdSpecs)
      if (key == s.name) spec = &s;
    if (!spec)
      return base::InvalidArgumentError(
          fmt::format("thresholds line {}: unknown threshold '{}'", line_no, key));
    if (!seen.insert(spec->name).second)
      return base::InvalidArgumentError(
          fmt::format("thresholds line {}: '{}' is set twice", line_no, key));
    double v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
        !std::isfinite(v))
      return base::InvalidArgumentError(
          fmt::format("thresholds line {}: '{}' is not a number", line_no, value));
    if (v < 0 || v > spec->max)
      return base::InvalidArgumentError(fmt::format(
          "thresholds line {}: {} = {} is out of range [0, {}]", line_no, key, v, spec->max));
    t.*(spec->field) = v;
  }
  return t;
}

Diagnosis Diagnose(const Analysis& analysis, const HostSignals& host,
                   const DiagnosisThresholds& thresholds) {
  const Job job = Summarize(analysis);
  const DiagnosisThresholds& t = thresholds;
  Diagnosis d;
  for (std::optional<Finding> f :
       {Batching(analysis, job, host, t), LaunchOverhead(job, t), KernelBound(analysis, job, t),
        HardwareSaturated(job, host, t), Communication(analysis, job, t), HostSync(job, t),
        MemoryTransfer(job, t), AllocationStalls(job, t),
        PrefillInterference(analysis, job, host, t)})
    if (f) d.findings.push_back(std::move(*f));
  if (d.findings.empty()) d.findings.push_back(Healthy(job, host, t));
  std::stable_sort(d.findings.begin(), d.findings.end(), [](const Finding& a, const Finding& b) {
    if (ScoreKey(a.score) != ScoreKey(b.score)) return ScoreKey(a.score) > ScoreKey(b.score);
    if (a.severity != b.severity) return SeverityRank(a.severity) < SeverityRank(b.severity);
    return TieOrder(a.id) < TieOrder(b.id);
  });
  d.primary = d.findings.front().id;
  return d;
}

base::StatusOr<DiagnosisThresholds> LoadThresholdsFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, base::ReadSmallFile(path, "the diagnosis thresholds file"));
  auto t = ParseThresholds(text);
  if (!t.ok()) return base::InvalidArgumentError(path + ": " + t.status().message());
  return t;
}

}  // namespace inferscope::analyze
