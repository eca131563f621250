// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "src/model/events.h"
#include "src/model/name_table.h"
#include "src/wire/capture_codec.h"

namespace inferscope::inject {

// Records the raw events of an on-demand capture (docs/design/inject.md, "Capture"): while armed,
// every decoded event that starts inside the requested wall-clock span is encoded straight into a
// wire chunk (no event vectors: its memory is the encoded bytes, bounded by the request's byte
// cap), and sealed chunks are handed out as frames for the agent. The caps stop recording, never
// the application. Not thread-safe: the Session calls it under its aggregator lock (the decoder's
// tee and the drain thread's Poll).
class EventCapture {
 public:
  explicit EventCapture(const model::NameTable* names) : names_(names) {}

  // The agent's request. A second one while a capture runs is refused (an end frame saying so
  // comes out of the next Poll); the agent refuses concurrent captures before they get here.
  void Request(const wire::CaptureRequest& request);

  // The hot path's test: one load and two compares per event when no capture runs. Once a cap
  // stopped the recording, events of the span still come to Add, which only counts them.
  bool Wants(int64_t start_ns) const {
    return active_ && start_ns >= start_ns_ && start_ns < end_ns_;
  }
  void Add(const model::KernelEvent& e);
  void Add(const model::MemcpyEvent& e);
  void Add(const model::MemsetEvent& e);
  void Add(const model::SyncEvent& e);
  void Add(const model::ApiCallEvent& e);

  // The session's running counts of records CUPTI could not deliver (dropped, or refused by an
  // empty pool) and of buffer requests the pool refused; a capture reports how many of them fell
  // in its span.
  void NoteLostRecords(uint64_t total, uint64_t buffers_refused_total = 0) {
    lost_records_ = total;
    buffers_refused_ = buffers_refused_total;
  }

  // Takes a finished frame for the agent (`chunk`: a chunk, otherwise an end or a refusal);
  // false when it could not be queued (a chunk is then counted as dropped in the capture's end).
  using FrameSink = std::function<bool(std::string&& frame, bool chunk)>;
  // The drain thread, after each flush: `now_unix_ns` on the wall clock. Hands finished frames
  // (chunks, then the end once the span plus `settle_ns` has passed) to `send`, in order; the end
  // counts the chunks `send` refused.
  void Poll(int64_t now_unix_ns, int64_t settle_ns, const FrameSink& send);
  // The same, appending every frame to `frames` (never refused).
  void Poll(int64_t now_unix_ns, int64_t settle_ns, std::vector<std::string>* frames);

  bool active() const { return active_; }
  // Events recorded by the current (or last) capture.
  uint64_t recorded_events() const { return end_.events; }
  // Whether CUDA graph nodes should be traced as kernels now: the capture asked for it and its
  // span is near (the switch takes effect from the next flush, so it starts `lead_ns` early).
  bool WantsGraphNodes(int64_t now_unix_ns, int64_t lead_ns) const {
    return active_ && request_.graph_nodes && now_unix_ns >= start_ns_ - lead_ns &&
           now_unix_ns < end_ns_;
  }
  // Bytes held now: the open chunk, and sealed chunks until Poll hands them out.
  size_t held_bytes() const { return chunk_.size(); }
  size_t sealed_bytes() const {
    size_t n = 0;
    for (const auto& s : sealed_) n += s.size();
    return n;
  }

 private:
  bool Admit();  // counts an event against the caps; false once a cap is hit
  void NameOnce(model::NameId id);
  void Seal(std::vector<std::string>* frames);

  const model::NameTable* names_;
  bool active_ = false;     // a capture was requested and has not ended
  bool recording_ = false;  // active and under its caps
  int64_t start_ns_ = 0, end_ns_ = 0;
  wire::CaptureRequest request_;
  wire::CaptureEnd end_;
  uint64_t lost_records_ = 0, buffers_refused_ = 0;
  bool lost_base_set_ = false;
  uint64_t lost_base_ = 0, refused_base_ = 0;
  wire::CaptureChunkWriter chunk_;
  std::vector<std::string> sealed_;  // chunks sealed on the hot path, handed out by Poll
  std::unordered_set<model::NameId> named_;
  std::vector<std::string> refusals_;  // end frames for refused requests
};

}  // namespace inferscope::inject
