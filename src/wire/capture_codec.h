// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The payloads of the capture frames (framing.h kCaptureRequest/kCaptureChunk/kCaptureEnd): the
// agent asks the injected processes to record every raw event of a few seconds; each process
// streams them back in chunks, then an end saying how many and whether a cap cut them short.
// Tagged fields as in the rest of src/wire (README.md, "Capture payloads"): unknown fields are
// skipped, so either side can add fields without breaking the other.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/base/status.h"
#include "src/model/events.h"

namespace inferscope::wire {

// A chunk's payload is sealed at about this size (one frame); a reader refuses more than
// kMaxCaptureChunkBytes, which bounds what one chunk can decode into (every event costs at least
// two input bytes and at most 64 bytes of memory).
inline constexpr size_t kCaptureChunkTargetBytes = 1u << 20;
inline constexpr size_t kMaxCaptureChunkBytes = 4u << 20;

// Agent -> process: record the events that start in [start_unix_ns, start_unix_ns + duration_ns)
// (the wall clock every rank of the host shares), up to the caps.
struct CaptureRequest {
  uint64_t capture_id = 0;
  int64_t start_unix_ns = 0;
  int64_t duration_ns = 0;
  uint64_t max_bytes = 0;    // encoded bytes this process may produce (0 = refuse)
  uint64_t max_events = 0;   // events this process may record (0 = refuse)
  bool graph_nodes = false;  // trace CUDA graph nodes as kernels for the span
  bool operator==(const CaptureRequest&) const = default;
};

void EncodeCaptureRequest(const CaptureRequest& request, std::string* out);
base::StatusOr<CaptureRequest> DecodeCaptureRequest(std::string_view payload);

// Why a capture stopped recording before its end.
enum class CaptureCap : uint8_t { kNone = 0, kBytes = 1, kEvents = 2 };

// Process -> agent, after the last chunk: what was recorded, and what was lost.
struct CaptureEnd {
  uint64_t capture_id = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;  // chunk payload bytes
  uint32_t chunks = 0;
  CaptureCap cap_hit = CaptureCap::kNone;
  // CUPTI records lost during the capture: dropped by CUPTI, or never written because the
  // buffer pool was empty (`buffers_refused` of those requests).
  uint64_t records_lost = 0;
  // Chunks (and their frame bytes) the process could not send: its connection's bulk queue was
  // full (the agent reading too slowly) or the connection was gone.
  uint64_t chunks_dropped = 0;
  std::string refused;  // non-empty: the process did not capture, and why
  // Optional fields (fields 9-11; absent from an older process: 0).
  uint64_t events_dropped = 0;   // events of the span not recorded once `cap_hit` stopped it
  uint64_t buffers_refused = 0;  // CUPTI buffer requests refused by the empty pool in the span
  uint64_t chunk_bytes_dropped = 0;
  bool operator==(const CaptureEnd&) const = default;
};

void EncodeCaptureEnd(const CaptureEnd& end, std::string* out);
base::StatusOr<CaptureEnd> DecodeCaptureEnd(std::string_view payload);

// Builds one chunk payload event by event (no intermediate event vectors: the recorder's memory is
// the encoded bytes). Names are the sender's ids; `Name` must precede the first event that uses an
// id within a capture (the reader resolves ids across the capture's chunks, in order). Timestamps
// are written as deltas to the previous event's start.
class CaptureChunkWriter {
 public:
  void Begin(uint64_t capture_id, uint32_t sequence);
  void Name(model::NameId id, std::string_view text);
  void Kernel(const model::KernelEvent& e);
  void Memcpy(const model::MemcpyEvent& e);
  void Memset(const model::MemsetEvent& e);
  void Sync(const model::SyncEvent& e);
  void ApiCall(const model::ApiCallEvent& e);
  size_t size() const { return payload_.size(); }
  bool empty() const { return events_ == 0 && names_ == 0; }
  // The payload; the writer is empty afterwards (Begin again).
  std::string Take();

 private:
  void Times(int64_t start_ns, int64_t end_ns);
  std::string payload_;
  std::string body_;  // one event, reused
  int64_t last_ns_ = 0;
  uint32_t events_ = 0;
  uint32_t names_ = 0;
};

// A decoded chunk. Events carry the sender's name ids and pid 0 (the connection knows the pid).
struct CaptureChunk {
  uint64_t capture_id = 0;
  uint32_t sequence = 0;
  std::vector<std::pair<model::NameId, std::string>> names;
  std::vector<model::KernelEvent> kernels;
  std::vector<model::MemcpyEvent> memcpys;
  std::vector<model::MemsetEvent> memsets;
  std::vector<model::SyncEvent> syncs;
  std::vector<model::ApiCallEvent> api_calls;
};

// kDataLoss on malformed input (never a crash); unknown fields and event kinds are skipped.
base::StatusOr<CaptureChunk> DecodeCaptureChunk(std::string_view payload);

}  // namespace inferscope::wire
