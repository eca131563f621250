// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/model/events.h"
#include "src/model/name_table.h"
#include "src/model/step_phase.h"
#include "src/model/taxonomy.h"
#include "src/model/views.h"

namespace inferscope::aggregate {

struct ViewOptions {
  model::ViewSelection selection;
  int top = 15;  // kernel names per device; range, operator and module names per process; the rest
                 // form one row
  // A host range whose name starts with one of these is a step (Kineto `ProfilerStep#N`, the
  // engines' per-iteration ranges: model::DefaultStepPrefixes; NVTX step ranges by the name the
  // application gives them).
  std::vector<std::string> step_prefixes = model::DefaultStepPrefixes();
};

// An EventSink in front of another (the Aggregator) that forwards every event unchanged and
// computes the selected model::TraceViews of one trace file (offline, whole-trace). Unlike the
// Aggregator's windows, exact order statistics need every duration: it keeps 8 bytes per kernel
// for the kernel statistics, ~40 bytes per GPU operation, launch call and host range for the
// stream, step and range views, and 32 bytes per operator and module instance for the ops view
// (model::ViewRangeEvent; Kineto writes every operator before the calls it encloses), which is why
// each view is off unless selected. View ranges and kernel resources stop here: the sink behind
// never sees them. A kernel's launch configuration takes the resources last delivered for its
// name (model::KernelResourcesEvent), so those must arrive in order with the kernels. Events
// may arrive in any order. Single-threaded, like the Aggregator it fronts.
class ViewCollector final : public model::EventSink {
 public:
  // `names` resolves NameIds and `classifier` assigns categories; both and `next` (may be null)
  // must outlive the collector.
  ViewCollector(const ViewOptions& options, const model::NameTable* names,
                const model::KernelClassifier* classifier, model::EventSink* next);
  ~ViewCollector() override;
  ViewCollector(const ViewCollector&) = delete;
  ViewCollector& operator=(const ViewCollector&) = delete;

  void OnProcess(const model::ProcessInfo& e) override;
  void OnDevice(const model::DeviceInfo& e) override;
  void OnKernel(const model::KernelEvent& e) override;
  void OnMemcpy(const model::MemcpyEvent& e) override;
  void OnMemset(const model::MemsetEvent& e) override;
  void OnSync(const model::SyncEvent& e) override;
  void OnApiCall(const model::ApiCallEvent& e) override;
  void OnNvtx(const model::NvtxEvent& e) override;
  void OnViewRange(const model::ViewRangeEvent& e) override;
  void OnViewRanges(const model::ViewRangeEvent* events, size_t count) override;
  void OnKernelResources(const model::KernelResourcesEvent& e) override;
  void OnDataQuality(uint32_t pid, model::DataQuality counter, uint64_t count) override;

  // Computes the views from everything received. Call once, after the last event.
  model::TraceViews Finish();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
  model::EventSink* next_;
};

// Exact summary of `values` (reordered in place: a selection, not a sort); all zero when empty.
model::DurationSummary SummarizeDurations(std::vector<int64_t>* values);

}  // namespace inferscope::aggregate
