// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "src/model/event_buffer.h"
#include "src/model/events.h"

namespace inferscope::import {

// An EventSink that hands events to another sink running on its own thread, so an importer (JSON
// scanning, SQLite stepping) and the Aggregator overlap on two cores. Events travel in batches
// through a bounded queue: the producer blocks when the consumer falls behind, so memory stays
// bounded. Order is preserved exactly.
//
// The downstream sink must only read NameTable entries (NameTable's threading contract).
class PipelinedSink final : public model::EventSink {
 public:
  explicit PipelinedSink(model::EventSink* downstream, size_t batch_events = 1024,
                         size_t max_batches = 4);
  ~PipelinedSink() override;  // Close()s
  PipelinedSink(const PipelinedSink&) = delete;
  PipelinedSink& operator=(const PipelinedSink&) = delete;

  void OnProcess(const model::ProcessInfo& e) override { Push(e); }
  void OnDevice(const model::DeviceInfo& e) override { Push(e); }
  void OnKernel(const model::KernelEvent& e) override { Push(e); }
  void OnMemcpy(const model::MemcpyEvent& e) override { Push(e); }
  void OnMemset(const model::MemsetEvent& e) override { Push(e); }
  void OnSync(const model::SyncEvent& e) override { Push(e); }
  void OnApiCall(const model::ApiCallEvent& e) override { Push(e); }
  void OnNvtx(const model::NvtxEvent& e) override { Push(e); }
  void OnViewRange(const model::ViewRangeEvent& e) override { Push(e); }
  // Travels as one run (delivered downstream as one OnViewRanges), not as `count` events.
  void OnViewRanges(const model::ViewRangeEvent* events, size_t count) override;
  void OnKernelResources(const model::KernelResourcesEvent& e) override { Push(e); }
  void OnDataQuality(uint32_t pid, model::DataQuality counter, uint64_t count) override {
    Push(model::DataQualityEvent{pid, counter, count});
  }

  // Delivers everything pushed so far and stops the consumer thread. Afterwards the downstream
  // sink may be used from the calling thread again. Idempotent.
  void Close();

 private:
  // Events in order; runs of view ranges beside them, each delivered before the event at its
  // position (or after the last).
  struct Batch {
    struct Run {
      size_t before = 0;  // index in `events` the run comes before
      size_t count = 0;   // its ranges, next in `ranges`
    };
    std::vector<model::AnyEvent> events;
    std::vector<model::ViewRangeEvent> ranges;
    std::vector<Run> runs;
    // A range counts an eighth toward a full batch: a run is one delivery, and ranges are small.
    size_t size() const { return events.size() + ranges.size() / 8; }
    bool empty() const { return events.empty() && ranges.empty(); }
    void clear() {
      events.clear();
      ranges.clear();
      runs.clear();
    }
  };

  template <typename T>
  void Push(const T& item) {
    batch_.events.emplace_back(item);
    if (batch_.size() >= batch_events_) Flush();
  }
  void Flush();
  void Run();

  model::EventSink* const downstream_;
  const size_t batch_events_;
  const size_t max_batches_;
  Batch batch_;  // producer-side, unsynchronized

  std::mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<Batch> queue_;   // guarded by mu_
  std::vector<Batch> spare_;  // guarded by mu_: emptied batches for reuse (no steady-state alloc)
  bool closing_ = false;      // guarded by mu_
  bool closed_ = false;       // producer-side
  std::thread consumer_;
};

}  // namespace inferscope::import
