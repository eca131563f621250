// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <variant>
#include <vector>

#include "src/model/events.h"

namespace inferscope::model {

// A data-quality count as an event (so it can travel in a batch with the others).
struct DataQualityEvent {
  uint32_t pid = 0;
  DataQuality counter = DataQuality::kRecordsDropped;
  uint64_t count = 0;
};

// Any one thing a source can deliver to an EventSink.
using AnyEvent =
    std::variant<KernelEvent, ApiCallEvent, MemcpyEvent, MemsetEvent, SyncEvent, NvtxEvent,
                 ViewRangeEvent, KernelResourcesEvent, ProcessInfo, DeviceInfo, DataQualityEvent>;

// Delivers `event` to the matching EventSink method.
void Deliver(const AnyEvent& event, EventSink* sink);

// An EventSink that records events in order, to be replayed into another sink later (on another
// thread: batches between a CUPTI completion callback and the drain thread, or importer and
// aggregator).
class EventBuffer final : public EventSink {
 public:
  void OnProcess(const ProcessInfo& e) override { events_.emplace_back(e); }
  void OnDevice(const DeviceInfo& e) override { events_.emplace_back(e); }
  void OnKernel(const KernelEvent& e) override { events_.emplace_back(e); }
  void OnMemcpy(const MemcpyEvent& e) override { events_.emplace_back(e); }
  void OnMemset(const MemsetEvent& e) override { events_.emplace_back(e); }
  void OnSync(const SyncEvent& e) override { events_.emplace_back(e); }
  void OnApiCall(const ApiCallEvent& e) override { events_.emplace_back(e); }
  void OnNvtx(const NvtxEvent& e) override { events_.emplace_back(e); }
  void OnViewRange(const ViewRangeEvent& e) override { events_.emplace_back(e); }
  void OnKernelResources(const KernelResourcesEvent& e) override { events_.emplace_back(e); }
  void OnDataQuality(uint32_t pid, DataQuality counter, uint64_t count) override {
    events_.emplace_back(DataQualityEvent{pid, counter, count});
  }

  // Delivers everything recorded, in order, to `sink`.
  void ReplayInto(EventSink* sink) const {
    for (const AnyEvent& e : events_) Deliver(e, sink);
  }

  std::vector<AnyEvent>& events() { return events_; }
  size_t size() const { return events_.size(); }
  bool empty() const { return events_.empty(); }
  void clear() { events_.clear(); }

 private:
  std::vector<AnyEvent> events_;
};

}  // namespace inferscope::model
