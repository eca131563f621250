// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "src/model/event_buffer.h"
#include "src/model/events.h"

namespace inferscope::aggregate {

// A time slice of a trace (`analyze --from/--to`): events that start in [from_ns, to_ns).
struct TimeSlice {
  static constexpr int64_t kOpen = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();
  int64_t from_ns = kOpen;
  int64_t to_ns = kOpenEnd;
  // The bounds are offsets from the trace's first event (its earliest start), not timestamps on
  // the trace clock.
  bool relative = false;

  bool active() const { return from_ns != kOpen || to_ns != kOpenEnd; }
};

// The slice as a report header says it: "[2s, 3.5s) of each file (from its first event)",
// "[@1718000000000000000, end) on the trace clock"; "" when the slice is not active.
std::string DescribeSlice(const TimeSlice& slice);

// An EventSink in front of another that passes on only the events starting inside a TimeSlice
// (processes, devices, data-quality counts and kernel resources always pass; timestamps are not
// clipped, so an operation belongs to the slice it starts in). Absolute slices filter as events
// arrive; relative ones need the trace's first timestamp, which file order does not give until the
// end, so they hold every event until Finish() (~80 bytes each; only when slicing).
// Single-threaded.
class SliceSink final : public model::EventSink {
 public:
  SliceSink(const TimeSlice& slice, model::EventSink* next) : slice_(slice), next_(next) {}

  void OnProcess(const model::ProcessInfo& e) override { next_->OnProcess(e); }
  void OnDevice(const model::DeviceInfo& e) override { next_->OnDevice(e); }
  void OnKernel(const model::KernelEvent& e) override { Timed(e); }
  void OnMemcpy(const model::MemcpyEvent& e) override { Timed(e); }
  void OnMemset(const model::MemsetEvent& e) override { Timed(e); }
  void OnSync(const model::SyncEvent& e) override { Timed(e); }
  void OnApiCall(const model::ApiCallEvent& e) override { Timed(e); }
  void OnNvtx(const model::NvtxEvent& e) override { Timed(e); }
  // Held like the others but never the origin: a relative slice must not move when a view asks
  // the importer for its extra ranges.
  void OnViewRange(const model::ViewRangeEvent& e) override {
    if (slice_.relative) {
      held_.emplace_back(e);
      return;
    }
    Pass(e, 0);
  }
  // Always passes, in order with the kernels: it holds for the kernels of its name after it,
  // in or out of the slice.
  void OnKernelResources(const model::KernelResourcesEvent& e) override {
    if (slice_.relative) {
      held_.emplace_back(e);
      return;
    }
    next_->OnKernelResources(e);
  }
  void OnDataQuality(uint32_t pid, model::DataQuality counter, uint64_t count) override {
    next_->OnDataQuality(pid, counter, count);
  }

  // Delivers what a relative slice held. Call once, after the last event.
  void Finish();

  uint64_t kept() const { return kept_; }
  uint64_t dropped() const { return dropped_; }

 private:
  template <typename T>
  void Timed(const T& e) {
    if (slice_.relative) {
      if (e.start_ns < first_ns_) first_ns_ = e.start_ns;
      held_.emplace_back(e);
      return;
    }
    Pass(e, 0);
  }
  template <typename T>
  void Pass(const T& e, int64_t origin) {
    const int64_t t = e.start_ns - origin;
    if (t < slice_.from_ns || t >= slice_.to_ns) {
      ++dropped_;
      return;
    }
    ++kept_;
    model::Deliver(model::AnyEvent(e), next_);
  }

  TimeSlice slice_;
  model::EventSink* next_;
  std::vector<model::AnyEvent> held_;
  int64_t first_ns_ = std::numeric_limits<int64_t>::max();
  uint64_t kept_ = 0, dropped_ = 0;
};

}  // namespace inferscope::aggregate
