// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/analyze/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "src/analyze/analysis.h"
#include "src/analyze/diagnose_internal.h"
#include "src/base/file.h"

namespace inferscope::analyze {
namespace diagnose_internal {

Job Summarize(const Analysis& a, const DiagnosisThresholds& thresholds) {
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
  for (size_t c = 0; c < s.idle_causes.size() && c < model::kIdleCauseCount; ++c)
    j.cause_ns[c] = static_cast<double>(s.idle_causes[c].total_ns);
  j.idle_intervals = s.idle_intervals;
  const double unattributed = j.cause_ns[static_cast<size_t>(model::IdleCause::kUnattributed)];
  double attributed = -unattributed;
  for (double ns : j.cause_ns) attributed += ns;
  j.causal = j.idle_ns > 0 && attributed >= 0.5 * j.idle_ns;
  for (const RankAnalysis& r : a.ranks) {
    for (const char* gpu : {"H100", "H200", "H800", "H20", "GH200"})
      j.hopper = j.hopper || r.device_name.find(gpu) != std::string::npos;
    // Nsight exports often carry no device name: cuBLAS's sm90 kernels and its nvjet family (sm90
    // and newer only) say the GPU is a Hopper or newer.
    for (const KernelRow& k : r.top_kernels)
      j.hopper =
          j.hopper || k.name.find("sm90") != std::string::npos || k.name.starts_with("nvjet");
    j.launch_delay_total_ns += static_cast<double>(r.launch.launch_delay_mean_ns) *
                               static_cast<double>(r.launch.launch_delay_count);
    j.launch_delays += r.launch.launch_delay_count;
    j.short_kernels += r.launch.short_kernels;
    j.cpu_launches += r.launch.cpu_launch_count;
    j.graph_launches += r.launch.graph_launches;
    j.cpu_launch_total_ns += static_cast<double>(r.launch.cpu_launch_total_ns);
    // The rank's longest launch call, when it is start-up, leaves the steady state; the GPU idle
    // it can have caused is at most its duration, and only what the `launch` cause holds.
    if (r.launch.cpu_launch_count > 0 &&
        static_cast<double>(r.launch.cpu_launch_max_ns) >= thresholds.warmup_launch_min_ms * 1e6) {
      const double max_ns = static_cast<double>(r.launch.cpu_launch_max_ns);
      j.startup_launches += 1;
      j.startup_launch_ns += max_ns;
      j.cpu_launches -= 1;
      j.cpu_launch_total_ns -= max_ns;
      const size_t launch = static_cast<size_t>(model::IdleCause::kLaunch);
      if (launch < r.idle_causes.size())
        j.startup_idle_ns += std::min(max_ns, static_cast<double>(r.idle_causes[launch].total_ns));
    }
    if (r.allocations.slow_calls > 0 &&
        static_cast<double>(r.allocations.malloc_max_ns) >= kStartupAllocMinMs * 1e6) {
      const double max_ns = static_cast<double>(r.allocations.malloc_max_ns);
      j.startup_allocs += 1;
      j.startup_alloc_ns += max_ns;
      const size_t alloc = static_cast<size_t>(model::IdleCause::kAllocation);
      if (alloc < r.idle_causes.size())
        j.startup_alloc_idle_ns +=
            std::min(max_ns, static_cast<double>(r.idle_causes[alloc].total_ns));
    }
    j.gpu_ops += r.kernel_count;
    for (const TransferRow& tr : r.transfers) j.gpu_ops += tr.count;
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
  // Start-up idle is attributed (to start-up), so `causal` above still counts it.
  double& launch_ns = j.cause_ns[static_cast<size_t>(model::IdleCause::kLaunch)];
  j.startup_idle_ns = std::min(j.startup_idle_ns, launch_ns);
  launch_ns -= j.startup_idle_ns;
  double& alloc_ns = j.cause_ns[static_cast<size_t>(model::IdleCause::kAllocation)];
  j.startup_alloc_idle_ns = std::min(j.startup_alloc_idle_ns, alloc_ns);
  alloc_ns -= j.startup_alloc_idle_ns;
  j.slow_alloc_calls -= std::min(j.slow_alloc_calls, j.startup_allocs);
  j.slow_alloc_ns = std::max(0.0, j.slow_alloc_ns - j.startup_alloc_ns);
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

}  // namespace diagnose_internal

namespace {

using namespace diagnose_internal;  // NOLINT: the rule files share these internals

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
    {"evidence_min_kernels", &DiagnosisThresholds::evidence_min_kernels, kNoMax},
    {"evidence_min_gpu_ms", &DiagnosisThresholds::evidence_min_gpu_ms, kNoMax},
    {"warmup_launch_min_ms", &DiagnosisThresholds::warmup_launch_min_ms, kNoMax},
    {"batching_min_queue_share", &DiagnosisThresholds::batching_min_queue_share, 1},
    {"batching_min_idle_share", &DiagnosisThresholds::batching_min_idle_share, 1},
    {"small_gemm_max_mean_us", &DiagnosisThresholds::small_gemm_max_mean_us, kNoMax},
    {"small_gemm_min_share", &DiagnosisThresholds::small_gemm_min_share, 1},
    {"launch_max_busy_pct", &DiagnosisThresholds::launch_max_busy_pct, 100},
    {"launch_min_host_wait_share", &DiagnosisThresholds::launch_min_host_wait_share, 1},
    {"launch_min_short_kernel_pct", &DiagnosisThresholds::launch_min_short_kernel_pct, 100},
    {"launch_min_idle_share", &DiagnosisThresholds::launch_min_idle_share, 1},
    {"kernel_bound_min_busy_pct", &DiagnosisThresholds::kernel_bound_min_busy_pct, 100},
    {"usual_gemm_pct", &DiagnosisThresholds::usual_gemm_pct, 100},
    {"usual_attention_pct", &DiagnosisThresholds::usual_attention_pct, 100},
    {"usual_glue_pct", &DiagnosisThresholds::usual_glue_pct, 100},
    {"slow_kernel_recoverable_share", &DiagnosisThresholds::slow_kernel_recoverable_share, 1},
    {"kernel_bound_min_score", &DiagnosisThresholds::kernel_bound_min_score, 1},
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
    {"prefill_min_delay_share", &DiagnosisThresholds::prefill_min_delay_share, 1},
    {"throttle_min_share", &DiagnosisThresholds::throttle_min_share, 1},
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
  // While the straggler computes, every other rank waits for it in the next collective: its
  // compute time minus theirs, summed, is waiting a balanced job would not have.
  double waiting_ns = 0;
  if (straggler) {
    int64_t slow_ns = 0;
    for (const RankComparisonRow& r : c.ranks)
      if (r.rank == c.straggler_rank) slow_ns = std::max(slow_ns, r.compute_ns);
    for (const RankComparisonRow& r : c.ranks)
      if (r.rank != c.straggler_rank)
        waiting_ns += static_cast<double>(std::max<int64_t>(0, slow_ns - r.compute_ns));
  }
  const double straggler_score = j.Share(waiting_ns);
  // Device idle with work already queued behind another stream or event (the causal split's
  // "dependency") is, in a job with collectives, waiting for the peers: time lost to
  // communication as surely as an exposed collective (busy time, so the two do not overlap).
  const CategoryRow* comm_row = CategoryByName(a, "communication");
  const double dependency = j.causal && comm_row && comm_row->time_ns > 0
                                ? j.CauseShare(model::IdleCause::kDependency)
                                : 0;
  const double waiting = std::min(1.0, exposed + dependency);
  const bool by_exposed = waiting >= t.comm_min_exposed_share;
  if (!by_exposed && !straggler) return std::nullopt;

  std::string top_sub;
  double top_ns = 0;
  for (const CategoryRow& row : s.subcategories)
    if (row.name.rfind("communication", 0) == 0 && static_cast<double>(row.time_ns) > top_ns)
      top_sub = row.name, top_ns = static_cast<double>(row.time_ns);
  const CategoryRow* comm = CategoryByName(a, "communication");
  FindingBuilder f("communication", std::max(by_exposed ? waiting : 0, straggler_score),
                   by_exposed ? 0.75 : 0.6);
  const std::string also_idle =
      dependency >= 0.01
          ? fmt::format("; the GPU also idled {} with work queued behind another stream or peer",
                        Pct(dependency))
          : "";
  if (by_exposed && straggler) {
    f.Summary(fmt::format(
        "collectives not overlapped with compute take {} of GPU time ({}{:.0f}% overlapped){}; "
        "rank {} computes {:.0f}% more than the fastest rank and the others wait for it in "
        "collectives ({} of the time)",
        Pct(exposed), top_sub.empty() ? "" : top_sub + " leads, ", s.comm_compute_overlap_pct,
        also_idle, c.straggler_rank, c.compute.imbalance * 100, Pct(straggler_score)));
    f.Rank(c.straggler_rank);
  } else if (by_exposed) {
    f.Summary(fmt::format(
        "collectives not overlapped with compute take {} of GPU time ({}{:.0f}% overlapped){}",
        Pct(exposed), top_sub.empty() ? "" : top_sub + " leads, ", s.comm_compute_overlap_pct,
        also_idle));
  } else {
    f.Summary(
        fmt::format("rank {} computes {:.0f}% more than the fastest rank: the others wait for it "
                    "in collectives ({} of the time)",
                    c.straggler_rank, c.compute.imbalance * 100, Pct(straggler_score)));
    f.Rank(c.straggler_rank);
  }
  if (j.causal) f.Ev("dependency_idle_pct", j.CauseShare(model::IdleCause::kDependency) * 100, "%");
  f.Ev("exposed_communication_pct", exposed * 100, "%")
      .Ev("communication_kernel_pct", comm ? comm->pct : 0, "%")
      .Ev("comm_compute_overlap_pct", s.comm_compute_overlap_pct, "%");
  if (j.ranks > 1) {
    f.Ev("compute_imbalance_pct", c.compute.imbalance * 100, "%")
        .Ev("communication_imbalance_pct", c.communication.imbalance * 100, "%");
    if (c.straggler_rank >= 0)
      f.Ev("straggler_excess_compute_ms", static_cast<double>(c.straggler_excess_compute_ns) / 1e6,
           "ms");
    if (straggler) {
      f.Ev("straggler_rank", c.straggler_rank, "count");
      f.Ev("straggler_wait_pct", straggler_score * 100, "%");
    }
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

std::optional<Finding> PrefillInterference(const Analysis& a, const Job& j, const HostSignals& h,
                                           const DiagnosisThresholds& t) {
  const double prefill_ns = SubcategoryNs(a, "attention.prefill");
  const double decode_ns = SubcategoryNs(a, "attention.decode");
  const double kt = j.kernel_time_ns;
  const double prefill_share = kt > 0 ? prefill_ns / kt : 0;
  const double decode_share = kt > 0 ? decode_ns / kt : 0;
  // From the step structure when the window has both kinds of steps: every step that ran a
  // prefill held up the decode batch for its excess over a regular step. Otherwise from kernel
  // shares (co-occurrence in the window).
  const StepSummary& st = a.summary.steps;
  const bool steps_known = j.has_gpu && st.prefill_count > 0 && st.plain_count >= 2;
  const double delay_ns = steps_known ? static_cast<double>(st.prefill_total_ns) -
                                            static_cast<double>(st.prefill_count) *
                                                static_cast<double>(st.plain_mean_ns)
                                      : 0;
  const bool by_trace = steps_known
                            ? decode_ns > 0 && j.Share(delay_ns) >= t.prefill_min_delay_share
                            : j.has_gpu && decode_share >= t.prefill_min_decode_share &&
                                  decode_ns > 0 && prefill_share >= t.prefill_min_kernel_share;
  double host_share = -1;
  if (h.prefill_mean_s && h.decode_mean_s && *h.prefill_mean_s + *h.decode_mean_s > 0)
    host_share = *h.prefill_mean_s / (*h.prefill_mean_s + *h.decode_mean_s);
  const bool by_host = host_share >= t.prefill_min_host_share;
  if (!by_trace && !by_host) return std::nullopt;
  const double trace_score = !by_trace     ? 0
                             : steps_known ? j.Share(delay_ns)
                                           : j.Share(j.busy_ns) * prefill_share;
  const double host_score = by_host ? (h.e2e_mean_s && *h.e2e_mean_s > 0
                                           ? std::min(1.0, *h.prefill_mean_s / *h.e2e_mean_s)
                                           : host_share)
                                    : 0;
  FindingBuilder f("prefill_interference", std::max(trace_score, host_score),
                   by_trace && by_host ? 0.7
                   : by_host           ? 0.5
                   : steps_known       ? 0.65
                                       : 0.45);
  if (by_trace && steps_known)
    f.Summary(fmt::format(
        "{} steps ran prefill attention and took {} on average against {} for the other steps: "
        "decode waited {} of the time for prefills",
        st.prefill_count, Ms(static_cast<double>(st.prefill_mean_ns)),
        Ms(static_cast<double>(st.plain_mean_ns)), Pct(trace_score)));
  else if (by_trace)
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
  if (steps_known)
    f.Ev("prefill_steps", static_cast<double>(st.prefill_count), "count")
        .Ev("prefill_step_mean_ms", static_cast<double>(st.prefill_mean_ns) / 1e6, "ms")
        .Ev("decode_step_mean_ms", static_cast<double>(st.plain_mean_ns) / 1e6, "ms")
        .Ev("decode_delay_pct", j.Share(delay_ns) * 100, "%");
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

Finding Healthy(const Analysis& a, const Job& j, const HostSignals& h,
                const DiagnosisThresholds& t) {
  FindingBuilder f("healthy", 0, j.has_gpu ? 0.6 : 0.2);
  std::string why;
  if (!j.has_gpu) {
    why = "no GPU activity recorded";
  } else {
    why = fmt::format("GPU busy {:.0f}%", j.busy_pct());
    if (h.queue_share_of_e2e && j.busy_pct() < t.launch_max_busy_pct)
      why += ", requests do not queue: the load is light";
    // A busy GPU whose time is spread the usual way: say where it goes (that is what a faster
    // kernel or a bigger GPU would have to shrink), without claiming any of it is recoverable.
    if (j.busy_pct() >= t.kernel_bound_min_busy_pct)
      if (const std::string where = WhereTimeGoes(a); !where.empty())
        why += "; kernel time spread the usual way: " + where;
  }
  f.Summary("no bottleneck crossed its threshold (" + why + ")");
  if (j.has_gpu) f.Ev("busy_pct", j.busy_pct(), "%");
  if (h.queue_share_of_e2e) f.Ev("queue_share_pct", *h.queue_share_of_e2e * 100, "%");
  return f.Build(t);
}

int SeverityRank(const std::string& s) { return s == "critical" ? 0 : s == "warning" ? 1 : 2; }

// Tie order: kFindingIds order, except that kernel_bound yields to any verdict that explains the
// same time more specifically (a prefill kernel's time can be both).
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

// NVML says why the clocks are below their maximum. The slowdown reasons mean the GPU ran slower
// than it can while they were active; how much slower NVML does not say, so the stake is the time
// they were active (an upper bound) and the severity stops at a warning.
static std::optional<Finding> Throttling(const HostSignals& h, const DiagnosisThresholds& t) {
  struct Reason {
    const char* key;
    const char* human;
    const char* fix;
  };
  static const Reason kReasons[] = {
      {"hw_slowdown", "hardware slowdown",
       "Hardware slowdown (power brake or overheating signalled by the board): check power "
       "supply and cooling (nvidia-smi -q -d PERFORMANCE,TEMPERATURE; dmesg for XIDs)"},
      {"hw_thermal_slowdown", "hardware thermal slowdown",
       "Thermal slowdown: the GPU is too hot; check airflow, fans and the inlet temperature"},
      {"sw_thermal_slowdown", "software thermal slowdown",
       "Thermal slowdown: the GPU is too hot; check airflow, fans and the inlet temperature"},
      {"hw_power_brake", "power brake",
       "Power brake: the power supply asserted it; check the PSU and the system's power budget"},
      {"sw_power_cap", "power cap",
       "At its power limit: raise it if the board allows (nvidia-smi -q -d POWER shows the limits; "
       "nvidia-smi -pl), or expect lower clocks under full load"},
  };
  std::vector<std::pair<double, const Reason*>> active;
  for (const Reason& r : kReasons) {
    auto it = h.slowdown_share.find(r.key);
    if (it != h.slowdown_share.end() && it->second >= t.throttle_min_share)
      active.emplace_back(std::min(it->second, 1.0), &r);
  }
  if (active.empty()) return std::nullopt;
  std::stable_sort(active.begin(), active.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  FindingBuilder f("throttling", active.front().first, 0.7);
  std::string what;
  for (const auto& [share, r] : active)
    what += fmt::format("{}{} {}", what.empty() ? "" : ", ", r->human, Pct(share));
  f.Summary(
      fmt::format("GPU clocks slowed {} of the time ({} of samples): the GPU ran below "
                  "its speed",
                  Pct(active.front().first), what));
  std::vector<std::string> fixes;
  for (const auto& [share, r] : active) {
    f.Ev(std::string(r->key) + "_pct", share * 100, "%");
    if (std::find(fixes.begin(), fixes.end(), r->fix) == fixes.end()) fixes.push_back(r->fix);
  }
  for (std::string& fix : fixes) f.Fix(std::move(fix));
  return f.Build(t, "warning");
}

Diagnosis Diagnose(const Analysis& analysis, const HostSignals& host,
                   const DiagnosisThresholds& thresholds) {
  const Job job = Summarize(analysis, thresholds);
  const DiagnosisThresholds& t = thresholds;
  Diagnosis d;
  // Too little GPU work: the shares every trace rule stands on are noise (a 1.5 us memset beside
  // two start-up cudaMallocs is "100% of the time in allocations"). What the host's own signals
  // show (request queueing, clock throttling) does not stand on the trace and still reports, as
  // a note after the verdict.
  if (std::optional<Finding> none = InsufficientEvidence(job, host, t)) {
    d.findings.push_back(std::move(*none));
    Job host_only;
    host_only.ranks = job.ranks;
    for (std::optional<Finding> f : {Batching(analysis, host_only, host, t), Throttling(host, t)})
      if (f) {
        f->severity = "info";
        d.findings.push_back(std::move(*f));
      }
    d.primary = d.findings.front().id;
    return d;
  }
  for (std::optional<Finding> f :
       {Batching(analysis, job, host, t), LaunchOverhead(job, t), KernelBound(analysis, job, t),
        HardwareSaturated(job, host, t), Communication(analysis, job, t), HostSync(job, t),
        MemoryTransfer(job, t), AllocationStalls(job, t),
        PrefillInterference(analysis, job, host, t), Throttling(host, t)})
    if (f) d.findings.push_back(std::move(*f));
  if (d.findings.empty()) d.findings.push_back(Healthy(analysis, job, host, t));
  std::stable_sort(d.findings.begin(), d.findings.end(), [](const Finding& a, const Finding& b) {
    // Severity first, so a critical finding never ranks below a warning (severity follows the
    // score, so this only matters if a rule ever caps it), then the time at stake.
    if (a.severity != b.severity) return SeverityRank(a.severity) < SeverityRank(b.severity);
    if (ScoreKey(a.score) != ScoreKey(b.score)) return ScoreKey(a.score) > ScoreKey(b.score);
    return TieOrder(a.id) < TieOrder(b.id);
  });
  // Start-up is a note on the trace, not a bottleneck of the steady state: it never leads.
  if (std::optional<Finding> w = Warmup(job, t)) d.findings.push_back(std::move(*w));
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
