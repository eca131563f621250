// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/model/events.h"
#include "src/model/name_table.h"
#include "src/model/profile.h"
#include "src/model/step_phase.h"
#include "src/model/taxonomy.h"

namespace inferscope::aggregate {

struct AggregatorOptions {
  // Window length; 0 = whole-trace mode: one window spanning all events (offline analysis).
  int64_t window_ns = 0;
  // Timeline bin width (the report's --bin).
  int64_t bin_ns = 100'000'000;
  // Whole-trace mode only: when > 0, bin_ns is chosen from the trace's span instead, the smallest
  // of 1, 2, 10, 20, 100, ... ns (at least 1 us; each divides every larger one, so timelines of
  // several traces can be brought to one width) giving at most this many bins.
  int auto_bins = 0;
  // Events may arrive out of order by up to this much and still be placed exactly. Later ones are
  // counted as late and folded in as well as possible. In whole-trace mode the horizon is unbounded
  // unless set: the Aggregator keeps compact events (~100 B each, far smaller than the trace).
  int64_t lateness_ns = -1;  // -1 = default: 2 s with windows, unbounded in whole-trace mode
  int top_k = 20;
  int64_t kernel_wait_threshold_ns = 30'000;   // idle gaps shorter than this are "kernel wait"
  int64_t short_kernel_threshold_ns = 10'000;  // kernels shorter than this count as "short"
  int64_t slow_allocation_threshold_ns = 1'000'000;
  // A host thread that makes no CUDA call for this long is not pacing launches: the device idle
  // time in such a pause is "host_idle" (no work, or host-side work), not launch overhead. Launch
  // pacing is tens to hundreds of microseconds (docs/diagnosis.md, burst_gap_ms).
  int64_t host_pause_threshold_ns = 1'000'000;
  int max_sync_targets = 5;  // kernels listed per sync type as "waited on"
  // A step (GPU work between two host turns) still running at a window edge is carried into the
  // next window and counted whole in the one it ends in, unless it has run longer than this: no
  // serving step does (a 100k-token prefill takes seconds), so a longer one is a workload without
  // host turns and its work is cut at the edge and counted as outside the phases, as before.
  int64_t max_step_carry_ns = 60'000'000'000;
  // NVTX ranges (OnNvtx) make a range table per process and window (ProcessProfile::ranges),
  // with the GPU work launched inside them; off, they only extend the window (the offline views
  // compute their own table).
  bool ranges = false;
  // Steps from step ranges: a process that delivers NVTX / annotation ranges named like steps
  // (a name starting with one of `step_prefixes`) has those ranges as its steps, as the offline
  // steps view counts them, instead of the host-turn heuristic above: a GPU operation belongs to
  // the step its launching call started in (the last step range of the process starting at or
  // before the call, if the call is before its end; any thread, as the steps view), and a step's
  // phase is the engine's word in its name, else its attention kernels (model::PhaseOfStep).
  // Live: on with the NVTX ranges (`run --nvtx`); offline: with the steps view.
  bool step_ranges = false;
  std::vector<std::string> step_prefixes = model::DefaultStepPrefixes();
  // Launch configurations per kernel (KernelStats::configs of the top rows): grid and block of
  // each kernel with the resources its source announced (OnKernelResources). Live: on (the
  // injection library); offline off (`analyze --views kernels` counts them exactly).
  bool launch_configs = false;
  // A step range is counted (settled) at the first window close at least this long after its end
  // (or when the trace or the process ends): work its calls launched that starts later than this
  // after the range ended is outside. A serving step's work runs within milliseconds of its range.
  int64_t step_settle_ns = 1'000'000'000;
};

// Folds a stream of events from any source into profile windows. The same events give the same
// windows whichever order they arrive in, within the lateness horizon. Memory is bounded by the
// horizon, the number of distinct kernel names and the timeline length, not by the number of
// events. Single-threaded: one Aggregator per importer or drain thread.
class Aggregator final : public model::EventSink {
 public:
  using WindowCallback = std::function<void(model::ProfileWindow&&)>;

  // `names` resolves the NameIds of incoming events; `classifier` assigns categories. Both must
  // outlive the Aggregator. Windows are delivered to `on_window` as they close.
  Aggregator(const AggregatorOptions& options, const model::NameTable* names,
             const model::KernelClassifier* classifier, WindowCallback on_window);
  ~Aggregator() override;
  Aggregator(const Aggregator&) = delete;
  Aggregator& operator=(const Aggregator&) = delete;

  void OnProcess(const model::ProcessInfo& process) override;
  void OnDevice(const model::DeviceInfo& device) override;
  void OnKernel(const model::KernelEvent& event) override;
  void OnMemcpy(const model::MemcpyEvent& event) override;
  void OnMemset(const model::MemsetEvent& event) override;
  void OnSync(const model::SyncEvent& event) override;
  void OnApiCall(const model::ApiCallEvent& event) override;
  void OnNvtx(const model::NvtxEvent& event) override;
  // The resources of the kernels of a name delivered after it (launch_configs only).
  void OnKernelResources(const model::KernelResourcesEvent& event) override;
  void OnDataQuality(uint32_t pid, model::DataQuality counter, uint64_t count) override;

  // Live mode: the source's clock has reached `now_ns`. Events that can no longer be overtaken
  // (starting before now - lateness) are processed and windows that have ended are emitted, also
  // when nothing arrived: an idle GPU still gets its (empty) windows. No-op in whole-trace mode.
  void AdvanceTo(int64_t now_ns);

  // Processes everything buffered and closes all open windows (end of trace / shutdown).
  void Finish();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The smallest bin of 1, 2, 10, 20, 100, 200, ... ns (at least 1 us) that cuts `span_ns` into at
// most `bins` bins: --bin's default for a trace, and the minimum a too small --bin is told.
int64_t AutoBinNs(int64_t span_ns, int64_t bins);

// Convenience for offline analysis: aggregates everything `feed` delivers in whole-trace mode and
// returns the single window.
model::ProfileWindow AggregateWholeTrace(const AggregatorOptions& options,
                                         const model::NameTable* names,
                                         const model::KernelClassifier* classifier,
                                         const std::function<void(model::EventSink*)>& feed);

}  // namespace inferscope::aggregate
