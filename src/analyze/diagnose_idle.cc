// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The idle-time rules: batching, launch_overhead, host_sync, allocation_stalls. Each stands on the
// causal idle split when it covers the idle time (docs/diagnosis.md). Beside them, the notes on
// what the trace can support: insufficient_evidence (the floor) and warmup (one-time start-up).

#include "src/analyze/diagnose_internal.h"

namespace inferscope::analyze::diagnose_internal {

using model::IdleCause;

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
// With the causal split, the idle time while the launching thread issued nothing for a long pause.
double LongGapIdleShare(const Job& j, const DiagnosisThresholds& t) {
  if (j.causal) return j.CauseShare(IdleCause::kHostIdle);
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
    if (j.causal)
      f.Summary(fmt::format(
          "GPU idle {} of the time while the host issued no work (no CUDA call for over 1 ms; "
          "mean host-wait gap {}): the host had no requests ready, or was busy elsewhere",
          Pct(gap_share), Ms(j.host_wait.mean_ns())));
    else
      f.Summary(fmt::format(
          "GPU idle {} of the time between bursts of work (mean idle gap {}): the host submitted "
          "no "
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
    if (j.causal) f.Ev("host_idle_pct", j.CauseShare(IdleCause::kHostIdle) * 100, "%");
    f.Ev("host_wait_gap_mean_ms", j.host_wait.mean_ns() / 1e6, "ms");
    f.Ev("other_gap_mean_ms", j.other.mean_ns() / 1e6, "ms");
  }
  if (small_gemm >= 0) f.Ev("small_gemm_pct", small_gemm * 100, "%");

  // Raising batch limits only helps when requests wait: never offered when the engine says none
  // do (the fix would contradict the evidence next to it), nor on idle gaps alone.
  const bool requests_wait = h.waiting_requests_mean ? *h.waiting_requests_mean >= 0.5 : by_queue;
  if (requests_wait)
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
  const double short_pct =
      100.0 * static_cast<double>(j.short_kernels) / static_cast<double>(j.kernel_count);
  const bool short_gaps = j.host_wait.count && j.host_wait.mean_ns() < t.burst_gap_ms * 1e6;
  const double host_wait_share = short_gaps ? j.IdleShareOf(j.host_wait.total_ns) : 0;
  // Host-wait gaps' share of the summed stream idle: the figure the "Idle gaps" table prints.
  const double gaps = j.gap_total_ns();
  const double host_share = gaps > 0 ? j.host_wait.total_ns / gaps : 0;
  double idle_share = 0;
  if (j.causal) {
    // Direct: the GPU sat idle while the thread that launched the next work was issuing calls
    // (the queue was empty because launching took longer than running), whatever the gap length.
    idle_share = j.CauseShare(IdleCause::kLaunch);
    if (idle_share < t.launch_min_idle_share) return std::nullopt;
  } else {
    // Without launch records joining the gaps: inferred from the HTA gap kinds.
    idle_share = host_wait_share;
    if (j.busy_pct() > t.launch_max_busy_pct || host_share < t.launch_min_host_wait_share ||
        !short_gaps || short_pct < t.launch_min_short_kernel_pct ||
        idle_share < t.launch_min_idle_share)
      return std::nullopt;
  }
  const double cpu_launch_mean_ns =
      j.cpu_launches ? j.cpu_launch_total_ns / static_cast<double>(j.cpu_launches) : 0;
  const double delay_mean_ns =
      j.launch_delays ? j.launch_delay_total_ns / static_cast<double>(j.launch_delays) : 0;
  FindingBuilder f("launch_overhead", idle_share,
                   j.causal ? 0.75 : (j.cpu_launches > 0 ? 0.65 : 0.45));
  if (j.causal)
    f.Summary(fmt::format(
        "GPU idle {} of the time waiting for the host to launch work: the queue ran empty while "
        "the launching thread issued calls (mean launch call {}; {:.0f}% of kernels shorter "
        "than 10 us)",
        Pct(idle_share), Ms(cpu_launch_mean_ns), short_pct));
  else
    f.Summary(fmt::format(
        "GPU idle {} of the time waiting for kernel launches: {} short host gaps (mean {}), "
        "{:.0f}% of kernels shorter than 10 us",
        Pct(idle_share), j.host_wait.count, Ms(j.host_wait.mean_ns()), short_pct));
  f.Ev("busy_pct", j.busy_pct(), "%");
  if (j.causal) f.Ev("launch_idle_pct", idle_share * 100, "%");
  f.Ev("host_wait_idle_pct", host_share * 100, "%")
      .Ev("host_wait_gaps", static_cast<double>(j.host_wait.count), "count")
      .Ev("host_wait_gap_mean_us", j.host_wait.mean_ns() / 1e3, "us")
      .Ev("short_kernel_pct", short_pct, "%")
      .Ev("kernel_count", static_cast<double>(j.kernel_count), "count")
      .Ev("graph_launches", static_cast<double>(j.graph_launches), "count");
  if (j.cpu_launches > 0) {
    f.Ev("cpu_launch_mean_us", cpu_launch_mean_ns / 1e3, "us");
    f.Ev("launch_delay_mean_us", delay_mean_ns / 1e3, "us");
  }
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
  // A wait while the GPU computes costs nothing. What a sync costs is the GPU idle while the
  // launching thread was blocked in it or handling what it returned (the causal split); without
  // the split, at most the idle time.
  const double idle = j.Share(j.idle_ns);
  const double stake = j.causal ? j.CauseShare(IdleCause::kSync) : std::min(share, idle);
  // With the causal split the verdict stands on the idle time the syncs caused; a host blocked
  // while the GPU stays busy is no bottleneck.
  if (!top || (j.causal ? stake : share) < t.host_sync_min_share) return std::nullopt;
  std::string target;
  int64_t target_ns = -1;
  // "[no GPU work finished during the wait]" names no culprit; a real kernel or copy does.
  for (const auto& [name, cw] : top->waited_on)
    if (name.rfind("[no GPU work", 0) != 0 && cw.second > target_ns)
      target = name, target_ns = cw.second;
  FindingBuilder f("host_sync", stake, 0.75);
  // The headline leads with the stake: "blocked 64% of the time" above "26% at stake" reads as a
  // contradiction unless it says which part of the blocking cost GPU time.
  f.Summary(fmt::format(
      "GPU idle {} of the time for host syncs: the host blocked in {} synchronization {} of the "
      "time ({} call{}){}",
      Pct(stake), top->type, Pct(j.Share(top->wait_ns)), top->count, top->count == 1 ? "" : "s",
      target.empty() ? "" : ", waiting on " + target));
  f.Ev("sync_wait_pct", share * 100, "%")
      .Ev("sync_calls", static_cast<double>(calls), "count")
      .Ev(top->type + "_sync_wait_ms", top->wait_ns / 1e6, "ms")
      .Ev("idle_pct", idle * 100, "%");
  if (j.causal) f.Ev("sync_idle_pct", stake * 100, "%");
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

std::optional<Finding> AllocationStalls(const Job& j, const DiagnosisThresholds& t) {
  if (!j.has_gpu || static_cast<double>(j.slow_alloc_calls) < t.alloc_min_slow_calls ||
      j.slow_alloc_calls == 0)
    return std::nullopt;
  const double share = j.Share(j.slow_alloc_ns);
  // An allocation while the GPU computes costs nothing; the stake is the GPU idle time while the
  // launching thread was inside allocation calls (causal split), else the calls' time, at most
  // the idle time (start-up allocations before the first GPU work cost the GPU nothing).
  const double stake =
      j.causal ? j.CauseShare(IdleCause::kAllocation) : std::min(share, j.Share(j.idle_ns));
  if (stake < t.alloc_min_share || stake <= 0) return std::nullopt;
  FindingBuilder f("allocation_stalls", stake, j.causal ? 0.8 : 0.7);
  if (j.causal)
    f.Summary(fmt::format(
        "GPU idle {} of the time while the host was in device allocations or frees ({} calls "
        "over 1 ms, {} in all)",
        Pct(stake), j.slow_alloc_calls, Ms(j.slow_alloc_ns)));
  else
    f.Summary(fmt::format("{} device allocations or frees over 1 ms, {} in all ({} of the time)",
                          j.slow_alloc_calls, Ms(j.slow_alloc_ns), Pct(share)));
  f.Ev("slow_alloc_calls", static_cast<double>(j.slow_alloc_calls), "count")
      .Ev("slow_alloc_ms", j.slow_alloc_ns / 1e6, "ms")
      .Ev("slow_alloc_pct", share * 100, "%");
  if (j.causal) f.Ev("alloc_idle_pct", stake * 100, "%");
  f.Ev("alloc_max_ms", j.alloc_max_ns / 1e6, "ms")
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

std::optional<Finding> InsufficientEvidence(const Job& j, const HostSignals& h,
                                            const DiagnosisThresholds& t) {
  // A range without trace data whose GPUs NVML saw working: the host's counters are the evidence
  // (hardware_saturated stands on them), not a trace too small to judge.
  if (!j.has_gpu && h.gpu_util_pct_mean) return std::nullopt;
  const double min_busy_ns = t.evidence_min_gpu_ms * 1e6;
  if (static_cast<double>(j.kernel_count) >= t.evidence_min_kernels && j.busy_ns >= min_busy_ns)
    return std::nullopt;
  FindingBuilder f("insufficient_evidence", 0, 1.0);
  f.Summary(fmt::format(
      "not enough GPU activity to judge: {} kernel{} and {} GPU operation{} in all, {} of GPU "
      "work over a {} span on {} GPU{} (a verdict needs {:.0f} kernels and {} of GPU work)",
      j.kernel_count, j.kernel_count == 1 ? "" : "s", j.gpu_ops, j.gpu_ops == 1 ? "" : "s",
      Ms(j.busy_ns), Ms(j.span_ns), j.ranks, j.ranks == 1 ? "" : "s", t.evidence_min_kernels,
      Ms(min_busy_ns)));
  f.Ev("kernel_count", static_cast<double>(j.kernel_count), "count")
      .Ev("gpu_operations", static_cast<double>(j.gpu_ops), "count")
      .Ev("gpu_busy_ms", j.busy_ns / 1e6, "ms")
      .Ev("span_ms", j.span_ns / 1e6, "ms")
      .Ev("slow_alloc_calls", static_cast<double>(j.slow_alloc_calls), "count");
  return f.Build(t);
}

std::optional<Finding> Warmup(const Job& j, const DiagnosisThresholds& t) {
  if (j.startup_launches == 0 && j.startup_allocs == 0) return std::nullopt;
  const double idle_ns = j.startup_idle_ns + j.startup_alloc_idle_ns;
  FindingBuilder f("warmup", j.Share(idle_ns), 0.6);
  std::string what;
  if (j.startup_launches)
    what = fmt::format(
        "{} launch call{} of {} (over {:.0f} ms: the first launch of a module loads it)",
        j.startup_launches, j.startup_launches == 1 ? "" : "s", Ms(j.startup_launch_ns),
        t.warmup_launch_min_ms);
  if (j.startup_allocs)
    what += fmt::format(
        "{}{} cudaMalloc{} of {} (over {:.0f} ms: context set-up or a first pool reservation)",
        what.empty() ? "" : ", ", j.startup_allocs, j.startup_allocs == 1 ? "" : "s",
        Ms(j.startup_alloc_ns), kStartupAllocMinMs);
  f.Summary(fmt::format(
      "one-time start-up: {}; GPU idle {} meanwhile, left out of launch overhead and allocation "
      "stalls",
      what, Ms(idle_ns)));
  f.Ev("startup_launches", static_cast<double>(j.startup_launches), "count")
      .Ev("startup_launch_ms", j.startup_launch_ns / 1e6, "ms")
      .Ev("startup_idle_ms", j.startup_idle_ns / 1e6, "ms")
      .Ev("startup_allocs", static_cast<double>(j.startup_allocs), "count")
      .Ev("startup_alloc_ms", j.startup_alloc_ns / 1e6, "ms")
      .Ev("startup_alloc_idle_ms", j.startup_alloc_idle_ns / 1e6, "ms");
  if (j.cpu_launches > 0)
    f.Ev("steady_launch_mean_us", j.cpu_launch_total_ns / static_cast<double>(j.cpu_launches) / 1e3,
         "us");
  Finding w = f.Build(t);
  w.severity = "info";  // start-up is paid once, whatever share of a short trace it fills
  return w;
}

}  // namespace inferscope::analyze::diagnose_internal
