// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "src/model/events.h"
#include "src/model/name_table.h"
#include "src/model/profile.h"
#include "src/model/taxonomy.h"

namespace inferscope::inject {

// What each CUDA graph's launches spend their time on, learned from short node-level samples, and
// used to split every launch traced as one record (docs/design/cuda-graphs.md).
//
// In steady state CUPTI's GRAPH_TRACE gives one record per graph launch: cheap, but it says
// nothing of the kernels inside. During a sample (GRAPH_TRACE off for ~1 s) the same launches
// arrive as node kernel records sharing the launch's correlation id; from them this class learns,
// per graph id, each kernel's time as a share of the launch's span (shares of parallel branches may
// add up to more than 1) and the order the kernels run in. A later launch of that graph is then
// handed to the Aggregator as those kernels, laid out in order inside the launch's span with
// durations span x share: categories, top kernels and timelines come out as the samples measured,
// marked as estimated in the window's CudaGraphStats. A graph not sampled yet whose capture was
// seen (SetComposition) is split over its kernel nodes by what each is known to take: the mean
// duration of the same kernel (name, and grid and block when the capture recorded them) measured
// outside graphs, in any graph's sample, or in this graph's earlier samples; a node with no known
// duration weighs as the mean of the graph's known ones, and a graph with none is split evenly
// (counted apart: "by count"). One neither sampled nor seen captured stays one
// "[cuda graph N of pid P]" pseudo-kernel, counted as unattributed.
//
// Each sample also checks the shares learned before it: the category split they predict for the
// sample's launches against the split measured, in percentage points of graph time.
//
// Not thread-safe: the Session calls it under its aggregator lock.
class GraphAttribution {
 public:
  GraphAttribution(uint32_t pid, int64_t window_ns, const model::NameTable* names,
                   const model::KernelClassifier* classifier);

  // Sample boundaries (CUPTI clock). Records of launches that started before `begin` and were
  // still traced as one record are not part of the sample.
  void BeginSample(int64_t now_ns);
  // Learns from what the sample saw; `now_ns` stamps the shares' age. With node-level tracing
  // always on (INFERSCOPE_GRAPH_NODES=1) the Session ends and begins a "sample" every drain cycle,
  // so that measured graph time is accounted and memory stays bounded.
  void EndSample(int64_t now_ns);
  bool sampling() const { return sampling_; }

  // A kernel record with a graph id (node-level: during a sample, or always with
  // INFERSCOPE_GRAPH_NODES=1). Counts its launch as measured, and its duration as known.
  void OnNodeKernel(const model::KernelEvent& kernel);
  // A kernel record outside any graph: its duration is known for the captured nodes that run the
  // same kernel. Learned only while some captured graph has no shares yet (the only launches that
  // use it), so that a server whose graphs are all sampled pays nothing per eager kernel.
  void OnEagerKernel(const model::KernelEvent& kernel) {
    if (unsampled_graphs_ > 0) LearnDuration(kernel);
  }

  // A graph launch traced as one record (`launch`: the GraphTrace record as an event, name unset).
  // Returns false when the launch was already seen node by node (a record at a switch boundary:
  // drop it). Otherwise fills `kernels` with the estimated kernels, or leaves it empty when the
  // graph has no shares yet (the caller emits the pseudo-kernel).
  bool OnGraphLaunch(const model::KernelEvent& launch, std::vector<model::KernelEvent>* kernels);

  // A kernel node as the capture recorded it; grid and block 0 when the capture did not see them.
  struct CapturedKernel {
    model::NameId name = model::kNoName;
    int32_t grid[3] = {0, 0, 0};
    int32_t block[3] = {0, 0, 0};
  };
  // What a graph's capture recorded: its kernel nodes in order (no durations). A launch of a graph
  // not sampled yet is split over them by their known durations (else evenly), counted as from
  // capture. `unstable`: the graph has conditional nodes, so its launches run different nodes: no
  // estimate from old samples nor from the capture, only what a sample measures (else
  // unattributed).
  void SetCapturedKernels(uint32_t graph_id, std::vector<CapturedKernel> kernels,
                          bool unstable = false);
  // The same, with names only (grid and block not seen).
  void SetComposition(uint32_t graph_id, const std::vector<model::NameId>& kernels,
                      bool unstable = false);
  // A graph exec was destroyed or its nodes changed: its shares and composition no longer hold.
  void Forget(uint32_t graph_id);

  // Moves the graph statistics of every window that starts at or before `window`'s start into it
  // (per device; statistics of a device the window lacks, and sample checks, go to its first
  // device), and forgets them. Called as each window closes.
  void FillWindow(model::ProfileWindow* window);

  size_t graphs_known() const { return shares_.size(); }
  // Kernel names with a known duration, and kernel records not learned because their name is
  // beyond the table's bound (kMaxDurations names, kConfigsPerName configurations each).
  size_t durations_known() const { return names_known_; }
  uint64_t durations_dropped() const { return durations_dropped_; }
  static constexpr size_t kMaxDurations = 16384;
  static constexpr size_t kConfigsPerName = 4;

 private:
  struct KernelShare {
    model::NameId name = model::kNoName;
    double share = 0;  // of the launch's span
  };
  struct Shares {
    std::vector<KernelShare> kernels;  // in the order they run
    std::array<double, model::kCategoryCount> categories{};
    int64_t learned_ns = 0;  // CUPTI time of the sample they come from
    uint64_t launches = 0;   // launches the sample saw
  };
  // One launch seen node by node in the current sample.
  struct SampledLaunch {
    uint32_t graph_id = 0;
    uint32_t device = 0;
    int64_t start_ns = INT64_MAX, end_ns = 0;
    std::vector<std::pair<int64_t, model::NameId>> kernels;  // (start, name), then durations below
    std::vector<int64_t> durations;
  };

  struct Duration {
    int64_t sum_ns = 0;
    int64_t count = 0;
    void Add(int64_t d);
  };
  // What one kernel name is known to take: any configuration, and the last few configurations
  // (grid, block) seen. Indexed by NameId (dense): no hashing per kernel record.
  struct NameDurations {
    Duration any;
    struct Config {
      int32_t grid[3] = {0, 0, 0};
      int32_t block[3] = {0, 0, 0};
      Duration d;
    };
    Config configs[kConfigsPerName];
    uint32_t config_count = 0;
  };

  model::CudaGraphStats& StatsFor(int64_t start_ns, uint32_t device);
  void LearnDuration(const model::KernelEvent& kernel);
  // Mean known duration of a captured node; 0 when none is known.
  double KnownDuration(const CapturedKernel& kernel) const;
  // Recounts the captured graphs without shares (on capture, forget and sample: rare).
  void CountUnsampled();

  const uint32_t pid_;
  const int64_t window_ns_;
  model::CachedClassifier classify_;
  bool sampling_ = false;
  int64_t sample_begin_ns_ = 0;
  std::unordered_map<uint32_t, SampledLaunch> sample_;                     // by correlation id
  std::unordered_set<uint32_t> sampled_correlations_;                      // of the last sample
  std::unordered_map<uint32_t, Shares> shares_;                            // by graph id
  std::unordered_map<uint32_t, std::vector<CapturedKernel>> composition_;  // by graph id
  std::unordered_set<uint32_t> unstable_;  // graphs with conditional nodes
  std::map<std::pair<int64_t, uint32_t>, model::CudaGraphStats> windows_;  // (window, device)
  std::vector<NameDurations> durations_;  // by NameId, up to kMaxDurations
  size_t names_known_ = 0;
  size_t unsampled_graphs_ = 0;  // captured, stable, no shares yet
  uint64_t durations_dropped_ = 0;
  std::vector<double> weights_;  // per node of the launch being split; reused
};

}  // namespace inferscope::inject
