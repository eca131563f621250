// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Internals shared by the rule families of the diagnosis (diagnose.cc: thresholds, job summary,
// ranking and the smaller rules; diagnose_idle.cc: the idle-time rules; diagnose_kernel.cc:
// kernel_bound). Not part of the analyze API.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analyze/analysis.h"
#include "src/analyze/diagnose.h"
#include "src/model/profile.h"

namespace inferscope::analyze::diagnose_internal {

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

// A cudaMalloc this long is start-up (context set-up, a first pool reservation: hundreds of ms);
// steady allocation stalls take 1-20 ms (the allocation scenarios). Frees are not start-up.
inline constexpr double kStartupAllocMinMs = 100;

struct Job {
  bool has_gpu = false;
  size_t ranks = 0;
  double span_ns = 0, busy_ns = 0, idle_ns = 0, kernel_time_ns = 0;
  uint64_t kernel_count = 0;
  GapKind host_wait, kernel_wait, other;
  uint64_t short_kernels = 0, cpu_launches = 0, graph_launches = 0;
  double cpu_launch_total_ns = 0;  // steady state: start-up launch calls left out
  // One-time start-up the trace shows: per rank, a launch call over warmup_launch_min_ms (the
  // first launch of a module loads it: lazy loading, JIT, context set-up), and the GPU idle it
  // caused (at most its duration), taken out of the `launch` cause.
  uint64_t startup_launches = 0;
  double startup_launch_ns = 0, startup_idle_ns = 0;
  // Likewise a rank's slowest cudaMalloc of kStartupAllocMinMs or more (context set-up or the
  // allocator's first pool reservation), taken out of the slow allocations and the `allocation`
  // cause.
  uint64_t startup_allocs = 0;
  double startup_alloc_ns = 0, startup_alloc_idle_ns = 0;
  uint64_t gpu_ops = 0;           // kernels, copies and memsets
  std::vector<SyncTotals> syncs;  // kSyncTypeNames order
  std::map<std::string, TransferTotals> transfers;
  uint64_t slow_alloc_calls = 0, malloc_calls = 0, free_calls = 0;
  double slow_alloc_ns = 0, alloc_max_ns = 0;
  double launch_delay_total_ns = 0;
  uint64_t launch_delays = 0;
  // The causal idle split (model::IdleCause order), summed over ranks. `causal` says it covers the
  // idle time (launch records joined at least half of it); rules then stand on it, else on the
  // HTA gap kinds.
  std::array<double, model::kIdleCauseCount> cause_ns{};
  uint64_t idle_intervals = 0;
  bool causal = false;
  bool hopper = false;  // a rank runs on an H100/H200-class GPU (sm90)

  double CauseShare(model::IdleCause c) const { return Share(cause_ns[static_cast<size_t>(c)]); }

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

Job Summarize(const Analysis& a, const DiagnosisThresholds& t);
double SubcategoryNs(const Analysis& a, std::string_view name);
const CategoryRow* CategoryByName(const Analysis& a, std::string_view name);

std::string Pct(double share);
std::string Ms(double ns);

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

// The rules (each returns nothing when its evidence does not cross its thresholds).
std::optional<Finding> Batching(const Analysis& a, const Job& j, const HostSignals& h,
                                const DiagnosisThresholds& t);
std::optional<Finding> LaunchOverhead(const Job& j, const DiagnosisThresholds& t);
std::optional<Finding> Warmup(const Job& j, const DiagnosisThresholds& t);
// Below the evidence floor (too little GPU work for any share to mean anything): the finding
// that says so, with what the range holds; nothing otherwise.
std::optional<Finding> InsufficientEvidence(const Job& j, const HostSignals& h,
                                            const DiagnosisThresholds& t);
std::optional<Finding> HostSync(const Job& j, const DiagnosisThresholds& t);
std::optional<Finding> AllocationStalls(const Job& j, const DiagnosisThresholds& t);
std::optional<Finding> KernelBound(const Analysis& a, const Job& j, const DiagnosisThresholds& t);
// Where the time of a busy GPU goes, for the healthy verdict's note ("" when there is no kernel).
std::string WhereTimeGoes(const Analysis& a);

}  // namespace inferscope::analyze::diagnose_internal
