// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The verdict engine: turns an Analysis (and, for a time range of the agent, the host telemetry of
// the same range) into a ranked list of findings, each with a fixed identifier, the numbers that
// triggered it and what the field does about it. Rules and thresholds: docs/diagnosis.md.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace inferscope::analyze {

struct Analysis;

// One number behind a finding, in report units: {"busy_pct", 38.2, "%"}.
struct Evidence {
  std::string name;
  double value = 0;
  std::string unit;
};

// One verdict. `id` is one of kFindingIds; `score` (the ranking key) estimates the share of time at
// stake (GPU span for trace rules, request latency for host-signal rules), 0..1.
struct Finding {
  std::string id;
  std::string severity;   // "critical" | "warning" | "info"
  double confidence = 0;  // 0..1: how direct the evidence is (counters > inference from gaps)
  double score = 0;
  std::string summary;  // one line naming the culprit
  std::vector<Evidence> evidence;
  std::vector<std::string> fixes;
  int rank = -1;  // the rank it concerns, -1 = job-wide
};

// Findings most important first; `primary` is the first one's id. Never empty after Diagnose():
// "healthy" stands in when nothing crossed its threshold.
struct Diagnosis {
  std::vector<Finding> findings;
  std::string primary;
};

inline constexpr const char* kFindingIds[] = {"batching",
                                              "launch_overhead",
                                              "kernel_bound",
                                              "hardware_saturated",
                                              "communication",
                                              "host_sync",
                                              "memory_transfer",
                                              "allocation_stalls",
                                              "prefill_interference",
                                              "throttling",
                                              "warmup",
                                              "insufficient_evidence",
                                              "healthy"};

// Host telemetry of the same range (the agent fills it from engine metrics, request spans and
// NVML/GPM; traces have none). Every field is optional: a rule that needs a missing one is skipped.
struct HostSignals {
  std::optional<double> queue_share_of_e2e;  // mean queue time / mean e2e latency, 0..1
  std::optional<double> e2e_mean_s, ttft_mean_s, queue_mean_s, prefill_mean_s, decode_mean_s;
  std::optional<double> running_requests_mean, waiting_requests_mean, kv_cache_usage_max;
  std::optional<double> gpm_sm_active_pct, gpm_sm_occupancy_pct, gpm_tensor_active_pct,
      gpm_dram_bw_util_pct;  // max over GPUs of the range means
  std::optional<double> gpu_util_pct_mean;
  // NVML clock-event reasons that slow the GPU down (sw_power_cap, hw_slowdown,
  // sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake): the share of samples each was
  // active, 0..1, the most throttled GPU's. Empty when NVML did not sample them.
  std::map<std::string, double> slowdown_share;
  std::optional<double> requests_per_s, generation_tokens_per_s;
};

// Every threshold a rule uses. Names carry units: `_pct` is 0..100, `_share` is 0..1 (of the GPU
// span unless said otherwise), `_ms`/`_us` durations. docs/diagnosis.md gives the reasoning behind
// each default; ParseThresholds() reads the same names.
struct DiagnosisThresholds {
  // Severity from score: at stake >= 30% of the time is critical, >= 10% a warning.
  double critical_score = 0.30;
  double warning_score = 0.10;
  // Idle gaps with a mean at least this long are "between bursts" (no work), shorter ones are the
  // host failing to keep up with launches.
  double burst_gap_ms = 1.0;
  // The evidence floor: with fewer kernels or less GPU work (busy time) than this, no rule runs
  // and the verdict is insufficient_evidence.
  double evidence_min_kernels = 20;
  double evidence_min_gpu_ms = 1.0;
  // A launch call this long is one-time start-up (module loading), not launch overhead: launches
  // take microseconds.
  double warmup_launch_min_ms = 5.0;

  // batching
  double batching_min_queue_share = 0.30;  // of mean e2e latency
  double batching_min_idle_share = 0.30;   // GPU idle in long gaps
  double small_gemm_max_mean_us = 20;      // a GEMM this short is a small-batch shape
  double small_gemm_min_share = 0.50;      // of matmul time in the top kernels

  // launch_overhead
  double launch_max_busy_pct = 75;
  double launch_min_host_wait_share = 0.50;  // host-wait gaps / all idle gap time
  double launch_min_short_kernel_pct = 30;   // of kernels, under the short-kernel threshold
  double launch_min_idle_share = 0.10;       // GPU idle in short host-wait gaps

  // kernel_bound
  double kernel_bound_min_busy_pct = 80;
  // The usual share of kernel time per category in LLM inference; the time beyond it is the stake.
  double usual_gemm_pct = 85;       // matmul, moe
  double usual_attention_pct = 40;  // attention
  double usual_glue_pct = 15;       // each other category (norms, activations, casts, ...)
  // Share of a known-slow kernel's time a known faster one saves (FA2 -> FA3 on Hopper: 1.5x).
  double slow_kernel_recoverable_share = 0.33;
  double kernel_bound_min_score = 0.05;  // smaller stakes are run-to-run noise

  // hardware_saturated (GPM counters, never utilization alone)
  double saturated_min_busy_pct = 80;
  double saturated_min_dram_bw_pct = 70;
  double saturated_min_tensor_active_pct = 60;
  double saturated_min_occupancy_pct = 60;

  // communication
  double comm_min_exposed_share = 0.10;      // collectives not overlapped with compute
  double comm_min_compute_imbalance = 0.10;  // (max - min) / mean compute over ranks

  // host_sync
  double host_sync_min_share = 0.10;  // host blocked in device/stream/event syncs

  // memory_transfer
  double transfer_min_share = 0.05;  // HtoD + DtoH + HtoH copy time
  double transfer_min_pageable_count = 10;

  // allocation_stalls
  double alloc_min_slow_calls = 2;  // malloc/free calls over 1 ms
  double alloc_min_share = 0.01;

  // prefill_interference
  double prefill_min_kernel_share = 0.15;  // attention.prefill of kernel time
  double prefill_min_decode_share = 0.02;  // attention.decode of kernel time (decode is running)
  double prefill_min_host_share = 0.30;    // mean prefill / (mean prefill + mean decode)
  double prefill_min_delay_share = 0.05;   // prefill steps' excess over a regular step, of span

  // throttling (NVML clock-event reasons)
  double throttle_min_share = 0.05;  // of samples with a power/thermal/hardware slowdown active
};

// Parses "key = value" lines ('#' starts a comment, blank lines are fine) into thresholds, starting
// from the defaults. Unknown keys, keys set twice, non-numbers and values out of range are errors.
base::StatusOr<DiagnosisThresholds> ParseThresholds(std::string_view text);
// Reads and parses a thresholds file (--diagnosis-thresholds); errors start with the path.
base::StatusOr<DiagnosisThresholds> LoadThresholdsFile(const std::string& path);

// The threshold names ParseThresholds() accepts, in declaration order (for docs and tests).
std::vector<std::string> ThresholdNames();

Diagnosis Diagnose(const Analysis& analysis, const HostSignals& host,
                   const DiagnosisThresholds& thresholds);

}  // namespace inferscope::analyze
