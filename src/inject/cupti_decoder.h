// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cupti.h>

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "src/aggregate/aggregator.h"
#include "src/inject/cupti_binding.h"
#include "src/inject/event_capture.h"
#include "src/inject/graph_attribution.h"
#include "src/model/events.h"
#include "src/model/name_table.h"

namespace inferscope::inject {

// Turns the records of a completed CUPTI activity buffer into model events (docs/design/inject.md,
// "Record mapping"). The record structs depend on the CUPTI version (CuptiLayout): the decoder is
// instantiated once per layout and picks its instantiation at construction, so the per-record path
// has no version test. Kernel names are interned at once: CUPTI's name pointers belong to modules
// a JIT may unload. Not thread-safe: the Session serializes calls.
class CuptiDecoder {
 public:
  // `api` must outlive the decoder; `layout` must not be kNone.
  CuptiDecoder(model::NameTable* names, uint32_t pid, const CuptiApi* api, CuptiLayout layout);

  // Decodes every record in buffer[0, valid_bytes) into `aggregator`; returns the number of
  // records. Straight into the Aggregator: each event is built once on the stack and handed over
  // with a direct call (Aggregator is final, so no virtual dispatch), no intermediate buffer.
  size_t Decode(uint8_t* buffer, size_t valid_bytes, aggregate::Aggregator* aggregator) {
    return (this->*decode_)(buffer, valid_bytes, aggregator);
  }

  // Records of kinds the decoder does not know (counted, never misread), and graph launches whose
  // device CUPTI could not name; both monotonic.
  uint64_t unknown_records() const { return unknown_records_; }

  // Graph kernels and graph launches go through `graphs` (learned shares, estimates); without it
  // every graph launch record is one pseudo-kernel.
  void set_graph_attribution(GraphAttribution* graphs) { graphs_ = graphs; }
  uint64_t deviceless_graph_launches() const { return deviceless_graph_launches_; }

  // Events a capture wants are also handed to `capture` (a pointer test per event otherwise).
  void set_capture(EventCapture* capture) { capture_ = capture; }

  // NVTX marker records (CUPTI_ACTIVITY_KIND_MARKER, `--nvtx`): a range's start and end records
  // are paired by id and handed over as one NvtxEvent at the end. Starts whose end never came are
  // forgotten when more than kMaxOpenMarkers are open (monotonic count).
  static constexpr size_t kMaxOpenMarkers = 1 << 16;
  uint64_t forgotten_markers() const { return forgotten_markers_; }

 private:
  template <typename Records>
  size_t DecodeAll(uint8_t* buffer, size_t valid_bytes, aggregate::Aggregator* sink);
  template <typename Records>
  void DecodeRecord(const CUpti_Activity* record, aggregate::Aggregator* sink);
  void DecodeCommon(const CUpti_Activity* record, aggregate::Aggregator* sink);
  void DecodeMarker(const CUpti_ActivityMarker2& r, aggregate::Aggregator* sink);
  model::NameId KernelName(const char* name);
  // Name and class of a runtime/driver API callback id, looked up once per id.
  const model::ApiCallEvent& ApiTemplate(CUpti_ActivityKind domain_kind, uint32_t cbid);
  uint32_t DeviceOfContext(uint32_t context_id) const;
  void LearnContext(uint32_t context_id, uint32_t device);

  model::NameTable* names_;
  const uint32_t pid_;
  const CuptiApi* api_;
  size_t (CuptiDecoder::*decode_)(uint8_t*, size_t, aggregate::Aggregator*) = nullptr;
  GraphAttribution* graphs_ = nullptr;
  EventCapture* capture_ = nullptr;
  template <typename Event>
  void Tee(const Event& e) {
    if (capture_ != nullptr && capture_->Wants(e.start_ns)) capture_->Add(e);
  }
  std::vector<model::KernelEvent> estimated_;  // reused for each graph launch's estimate
  uint64_t unknown_records_ = 0;
  uint64_t deviceless_graph_launches_ = 0;

  // Kernel-name cache by pointer; a hit skips the hashing. A slot is verified against the
  // string itself once per buffer (a module unloaded and another loaded at the same address must
  // not inherit its names): within one buffer a pointer cannot change meaning in a way a
  // per-record check would catch, since every record of the buffer is read after the fact.
  struct NameSlot {
    const char* pointer = nullptr;
    model::NameId id = model::kNoName;
    uint32_t verified_buffer = 0;  // buffer_serial_ of the last verification
  };
  std::array<NameSlot, 4096> name_cache_{};
  uint32_t buffer_serial_ = 0;  // Decode calls so far (slots verified in an older one re-check)
  // The last kernel record's context: contexts change rarely, so the map is touched only then.
  uint32_t last_context_ = UINT32_MAX;
  // The resources last sent per kernel name: the Aggregator hears of a kernel's registers and
  // shared memory (its launch configurations) only when they change, not with every record.
  model::KernelResourcesInterner resources_;

  std::unordered_map<uint64_t, model::ApiCallEvent> api_templates_;  // (kind << 32 | cbid)
  std::unordered_map<uint32_t, uint32_t> context_device_;  // CONTEXT records, then kernels
  std::unordered_map<uint32_t, model::NameId> graph_names_;
  struct OpenMarker {
    int64_t start_ns;
    uint32_t tid;
    model::NameId name;
  };
  std::unordered_map<uint32_t, OpenMarker> open_markers_;  // by marker id: started, not ended
  uint64_t forgotten_markers_ = 0;
};

}  // namespace inferscope::inject
