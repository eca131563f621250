// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/wire/capture_codec.h"

#include <climits>

#include "src/wire/wire_buffer.h"

namespace inferscope::wire {
namespace {

// Field numbers (README.md, "Capture payloads"); never reused.
enum RequestField : uint32_t {
  kReqId = 1,
  kReqStart = 2,
  kReqDuration = 3,
  kReqMaxBytes = 4,
  kReqMaxEvents = 5,
  kReqGraphNodes = 6,
};
enum EndField : uint32_t {
  kEndId = 1,
  kEndEvents = 2,
  kEndBytes = 3,
  kEndChunks = 4,
  kEndCapHit = 5,
  kEndRecordsLost = 6,
  kEndChunksDropped = 7,
  kEndRefused = 8,
  kEndEventsDropped = 9,
  kEndBuffersRefused = 10,
  kEndChunkBytesDropped = 11,
};
enum ChunkField : uint32_t {
  kChunkId = 1,
  kChunkSequence = 2,
  kChunkName = 3,  // {1 id, 2 text}
  kChunkKernel = 4,
  kChunkMemcpy = 5,
  kChunkMemset = 6,
  kChunkSync = 7,
  kChunkApi = 8,
};
// The fields of an event message (one numbering for every kind; each uses some).
enum EventField : uint32_t {
  kStartDelta = 1,  // zigzag: start - the previous event's start in the chunk
  kDuration = 2,    // zigzag: end - start
  kDevice = 3,
  kStream = 4,
  kNameId = 5,
  kCorrelation = 6,
  kGraphId = 7,
  kGrid = 8,   // packed x, y, z (as uint32)
  kBlock = 9,  // packed x, y, z (as uint32)
  kBytesField = 10,
  kCopyKind = 11,
  kPageable = 12,
  kTid = 13,
  kSyncType = 14,
  kApiKind = 15,
  kApiSyncType = 16,
};

void Dims(WireWriter& w, uint32_t field, const int32_t d[3]) {
  if (d[0] == 0 && d[1] == 0 && d[2] == 0) return;
  std::string packed;
  WireWriter p(&packed);
  // As uint32: launch dimensions are positive, and a zigzag would double them (a byte more).
  for (int i = 0; i < 3; ++i) p.Varint(static_cast<uint32_t>(d[i]));
  w.Str(field, packed);
}

bool ReadU32(uint64_t v, uint32_t* out) {
  if (v > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

bool ReadDims(std::string_view packed, int32_t d[3]) {
  WireReader r(packed);
  for (int i = 0; i < 3; ++i) {
    const uint64_t v = r.Varint();
    if (!r.ok() || v > UINT32_MAX) return false;
    d[i] = static_cast<int32_t>(static_cast<uint32_t>(v));
  }
  return r.done();
}

// The fields every event kind shares, read into whichever struct has them.
struct EventFields {
  int64_t start_delta = 0;
  int64_t duration = 0;
  bool has_device = false, has_stream = false, has_name = false, has_tid = false;
  uint32_t device = 0, stream = 0, name = 0, correlation = 0, graph_id = 0, tid = 0;
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint64_t bytes = 0;
  uint64_t copy_kind = 0, pageable = 0, sync_type = 0, api_kind = 0, api_sync_type = 0;
};

bool ReadEvent(std::string_view body, EventFields* f) {
  WireReader r(body);
  WireField field;
  while (r.NextField(&field)) {
    const bool varint = field.type == WireType::kVarint;
    const bool bytes = field.type == WireType::kBytes;
    bool ok = true;
    switch (field.number) {
      case kStartDelta:
        ok = varint;
        f->start_delta = UnZigZag(field.value);
        break;
      case kDuration:
        ok = varint;
        f->duration = UnZigZag(field.value);
        break;
      case kDevice:
        ok = varint && ReadU32(field.value, &f->device);
        f->has_device = true;
        break;
      case kStream:
        ok = varint && ReadU32(field.value, &f->stream);
        f->has_stream = true;
        break;
      case kNameId:
        ok = varint && ReadU32(field.value, &f->name);
        f->has_name = true;
        break;
      case kCorrelation:
        ok = varint && ReadU32(field.value, &f->correlation);
        break;
      case kGraphId:
        ok = varint && ReadU32(field.value, &f->graph_id);
        break;
      case kGrid:
        ok = bytes && ReadDims(field.bytes, f->grid);
        break;
      case kBlock:
        ok = bytes && ReadDims(field.bytes, f->block);
        break;
      case kBytesField:
        ok = varint;
        f->bytes = field.value;
        break;
      case kCopyKind:
        ok = varint && field.value < static_cast<uint64_t>(model::MemcpyKind::kCount);
        f->copy_kind = field.value;
        break;
      case kPageable:
        ok = varint;
        f->pageable = field.value;
        break;
      case kTid:
        ok = varint && ReadU32(field.value, &f->tid);
        f->has_tid = true;
        break;
      case kSyncType:
        ok = varint && field.value < static_cast<uint64_t>(model::SyncType::kCount);
        f->sync_type = field.value;
        break;
      case kApiKind:
        ok = varint && field.value < static_cast<uint64_t>(model::ApiKind::kCount);
        f->api_kind = field.value;
        break;
      case kApiSyncType:
        ok = varint && field.value < static_cast<uint64_t>(model::SyncType::kCount);
        f->api_sync_type = field.value;
        break;
      default:
        break;  // a newer writer's field
    }
    if (!ok) return false;
  }
  return r.ok();
}

// Deltas wrap (two's complement, as the writer's subtraction does): any input decodes without
// signed overflow, and what decodes re-encodes to the same values.
int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

}  // namespace

void EncodeCaptureRequest(const CaptureRequest& request, std::string* out) {
  WireWriter w(out);
  w.U(kReqId, request.capture_id);
  w.S(kReqStart, request.start_unix_ns);
  w.S(kReqDuration, request.duration_ns);
  w.U(kReqMaxBytes, request.max_bytes);
  w.U(kReqMaxEvents, request.max_events);
  w.U(kReqGraphNodes, request.graph_nodes ? 1 : 0);
}

base::StatusOr<CaptureRequest> DecodeCaptureRequest(std::string_view payload) {
  CaptureRequest req;
  WireReader r(payload);
  WireField f;
  while (r.NextField(&f)) {
    if (f.number >= kReqId && f.number <= kReqGraphNodes && f.type != WireType::kVarint)
      return base::DataLossError("capture request: corrupt field " + std::to_string(f.number));
    switch (f.number) {
      case kReqId:
        req.capture_id = f.value;
        break;
      case kReqStart:
        req.start_unix_ns = UnZigZag(f.value);
        break;
      case kReqDuration:
        req.duration_ns = UnZigZag(f.value);
        break;
      case kReqMaxBytes:
        req.max_bytes = f.value;
        break;
      case kReqMaxEvents:
        req.max_events = f.value;
        break;
      case kReqGraphNodes:
        req.graph_nodes = f.value != 0;
        break;
      default:
        break;
    }
  }
  if (!r.ok()) return base::DataLossError("capture request: truncated or corrupt");
  if (req.duration_ns <= 0) return base::DataLossError("capture request: duration is not positive");
  return req;
}

void EncodeCaptureEnd(const CaptureEnd& end, std::string* out) {
  WireWriter w(out);
  w.U(kEndId, end.capture_id);
  w.U(kEndEvents, end.events);
  w.U(kEndBytes, end.bytes);
  w.U(kEndChunks, end.chunks);
  w.U(kEndCapHit, static_cast<uint64_t>(end.cap_hit));
  w.U(kEndRecordsLost, end.records_lost);
  w.U(kEndChunksDropped, end.chunks_dropped);
  w.Str(kEndRefused, end.refused);
  // Optional (an older agent skips them; an older process sends none, read as 0).
  w.U(kEndEventsDropped, end.events_dropped);
  w.U(kEndBuffersRefused, end.buffers_refused);
  w.U(kEndChunkBytesDropped, end.chunk_bytes_dropped);
}

base::StatusOr<CaptureEnd> DecodeCaptureEnd(std::string_view payload) {
  CaptureEnd end;
  WireReader r(payload);
  WireField f;
  while (r.NextField(&f)) {
    const bool want_bytes = f.number == kEndRefused;
    if (f.number >= kEndId && f.number <= kEndChunkBytesDropped &&
        f.type != (want_bytes ? WireType::kBytes : WireType::kVarint))
      return base::DataLossError("capture end: corrupt field " + std::to_string(f.number));
    switch (f.number) {
      case kEndId:
        end.capture_id = f.value;
        break;
      case kEndEvents:
        end.events = f.value;
        break;
      case kEndBytes:
        end.bytes = f.value;
        break;
      case kEndChunks:
        if (!ReadU32(f.value, &end.chunks)) return base::DataLossError("capture end: bad chunks");
        break;
      case kEndCapHit:
        // A cap this reader does not know is still a cap.
        end.cap_hit = f.value == 0   ? CaptureCap::kNone
                      : f.value == 2 ? CaptureCap::kEvents
                                     : CaptureCap::kBytes;
        break;
      case kEndRecordsLost:
        end.records_lost = f.value;
        break;
      case kEndChunksDropped:
        end.chunks_dropped = f.value;
        break;
      case kEndRefused:
        end.refused.assign(f.bytes.substr(0, 1024));
        break;
      case kEndEventsDropped:
        end.events_dropped = f.value;
        break;
      case kEndBuffersRefused:
        end.buffers_refused = f.value;
        break;
      case kEndChunkBytesDropped:
        end.chunk_bytes_dropped = f.value;
        break;
      default:
        break;
    }
  }
  if (!r.ok()) return base::DataLossError("capture end: truncated or corrupt");
  return end;
}

void CaptureChunkWriter::Begin(uint64_t capture_id, uint32_t sequence) {
  payload_.clear();
  last_ns_ = 0;
  events_ = 0;
  names_ = 0;
  WireWriter w(&payload_);
  w.U(kChunkId, capture_id);
  w.U(kChunkSequence, sequence);
}

void CaptureChunkWriter::Name(model::NameId id, std::string_view text) {
  body_.clear();
  WireWriter b(&body_);
  b.Tag(1, WireType::kVarint);  // id 0 is a name too: always written
  b.Varint(id);
  b.Str(2, text);
  WireWriter w(&payload_);
  w.Tag(kChunkName, WireType::kBytes);
  w.Varint(body_.size());
  payload_.append(body_);
  ++names_;
}

void CaptureChunkWriter::Times(int64_t start_ns, int64_t end_ns) {
  body_.clear();
  WireWriter b(&body_);
  b.S(kStartDelta, WrapSub(start_ns, last_ns_));
  b.S(kDuration, WrapSub(end_ns, start_ns));
  last_ns_ = start_ns;
}

namespace {
void Close(std::string* payload, uint32_t field, const std::string& body) {
  WireWriter w(payload);
  w.Tag(field, WireType::kBytes);
  w.Varint(body.size());
  payload->append(body);
}
}  // namespace

void CaptureChunkWriter::Kernel(const model::KernelEvent& e) {
  Times(e.start_ns, e.end_ns);
  WireWriter b(&body_);
  b.U(kDevice, e.device);
  b.U(kStream, e.stream);
  if (e.name != model::kNoName) {
    b.Tag(kNameId, WireType::kVarint);  // id 0 is a name too: always written
    b.Varint(e.name);
  }
  b.U(kCorrelation, e.correlation_id);
  b.U(kGraphId, e.graph_id);
  Dims(b, kGrid, e.grid);
  Dims(b, kBlock, e.block);
  Close(&payload_, kChunkKernel, body_);
  ++events_;
}

void CaptureChunkWriter::Memcpy(const model::MemcpyEvent& e) {
  Times(e.start_ns, e.end_ns);
  WireWriter b(&body_);
  b.U(kDevice, e.device);
  b.U(kStream, e.stream);
  b.U(kCorrelation, e.correlation_id);
  b.U(kBytesField, e.bytes);
  b.U(kCopyKind, static_cast<uint64_t>(e.kind));
  b.U(kPageable, e.pageable ? 1 : 0);
  Close(&payload_, kChunkMemcpy, body_);
  ++events_;
}

void CaptureChunkWriter::Memset(const model::MemsetEvent& e) {
  Times(e.start_ns, e.end_ns);
  WireWriter b(&body_);
  b.U(kDevice, e.device);
  b.U(kStream, e.stream);
  b.U(kCorrelation, e.correlation_id);
  b.U(kBytesField, e.bytes);
  Close(&payload_, kChunkMemset, body_);
  ++events_;
}

void CaptureChunkWriter::Sync(const model::SyncEvent& e) {
  Times(e.start_ns, e.end_ns);
  WireWriter b(&body_);
  b.U(kTid, e.tid);
  // Devices and streams default to "unknown" for syncs: written always, so 0 stays 0.
  b.Tag(kDevice, WireType::kVarint);
  b.Varint(e.device);
  b.Tag(kStream, WireType::kVarint);
  b.Varint(e.stream);
  b.U(kCorrelation, e.correlation_id);
  b.U(kSyncType, static_cast<uint64_t>(e.type));
  Close(&payload_, kChunkSync, body_);
  ++events_;
}

void CaptureChunkWriter::ApiCall(const model::ApiCallEvent& e) {
  Times(e.start_ns, e.end_ns);
  WireWriter b(&body_);
  b.U(kTid, e.tid);
  if (e.name != model::kNoName) {
    b.Tag(kNameId, WireType::kVarint);  // id 0 is a name too: always written
    b.Varint(e.name);
  }
  b.U(kCorrelation, e.correlation_id);
  b.U(kApiKind, static_cast<uint64_t>(e.kind));
  b.U(kApiSyncType, static_cast<uint64_t>(e.sync_type));
  if (e.device != model::kUnknownDevice) {
    b.Tag(kDevice, WireType::kVarint);
    b.Varint(e.device);
  }
  b.U(kBytesField, e.bytes);
  Close(&payload_, kChunkApi, body_);
  ++events_;
}

std::string CaptureChunkWriter::Take() {
  std::string out = std::move(payload_);
  payload_.clear();
  events_ = 0;
  names_ = 0;
  return out;
}

base::StatusOr<CaptureChunk> DecodeCaptureChunk(std::string_view payload) {
  if (payload.size() > kMaxCaptureChunkBytes)
    return base::DataLossError("capture chunk of " + std::to_string(payload.size()) +
                               " bytes exceeds the limit of " +
                               std::to_string(kMaxCaptureChunkBytes));
  CaptureChunk chunk;
  WireReader r(payload);
  WireField f;
  int64_t last_ns = 0;
  auto corrupt = [](uint32_t field) {
    return base::DataLossError("capture chunk: corrupt field " + std::to_string(field));
  };
  while (r.NextField(&f)) {
    if (f.number == kChunkId || f.number == kChunkSequence) {
      if (f.type != WireType::kVarint) return corrupt(f.number);
      if (f.number == kChunkId) chunk.capture_id = f.value;
      if (f.number == kChunkSequence && !ReadU32(f.value, &chunk.sequence))
        return corrupt(f.number);
      continue;
    }
    if (f.number == kChunkName) {
      if (f.type != WireType::kBytes) return corrupt(f.number);
      WireReader n(f.bytes);
      WireField g;
      uint32_t id = model::kNoName;
      std::string_view text;
      while (n.NextField(&g)) {
        if (g.number == 1 && (g.type != WireType::kVarint || !ReadU32(g.value, &id)))
          return corrupt(f.number);
        if (g.number == 2) {
          if (g.type != WireType::kBytes) return corrupt(f.number);
          text = g.bytes;
        }
      }
      if (!n.ok()) return corrupt(f.number);
      chunk.names.emplace_back(id, std::string(text));
      continue;
    }
    if (f.number < kChunkKernel || f.number > kChunkApi) continue;  // a newer kind: skipped
    if (f.type != WireType::kBytes) return corrupt(f.number);
    EventFields e;
    if (!ReadEvent(f.bytes, &e)) return corrupt(f.number);
    const int64_t start = WrapAdd(last_ns, e.start_delta);
    const int64_t end = WrapAdd(start, e.duration);
    last_ns = start;
    switch (f.number) {
      case kChunkKernel: {
        model::KernelEvent k;
        k.start_ns = start;
        k.end_ns = end;
        k.device = e.device;
        k.stream = e.stream;
        if (e.has_name) k.name = e.name;
        k.correlation_id = e.correlation;
        k.graph_id = e.graph_id;
        for (int i = 0; i < 3; ++i) {
          k.grid[i] = e.grid[i];
          k.block[i] = e.block[i];
        }
        chunk.kernels.push_back(k);
        break;
      }
      case kChunkMemcpy: {
        model::MemcpyEvent m;
        m.start_ns = start;
        m.end_ns = end;
        m.device = e.device;
        m.stream = e.stream;
        m.correlation_id = e.correlation;
        m.bytes = e.bytes;
        m.kind = static_cast<model::MemcpyKind>(e.copy_kind);
        m.pageable = e.pageable != 0;
        chunk.memcpys.push_back(m);
        break;
      }
      case kChunkMemset: {
        model::MemsetEvent m;
        m.start_ns = start;
        m.end_ns = end;
        m.device = e.device;
        m.stream = e.stream;
        m.correlation_id = e.correlation;
        m.bytes = e.bytes;
        chunk.memsets.push_back(m);
        break;
      }
      case kChunkSync: {
        model::SyncEvent s;
        s.start_ns = start;
        s.end_ns = end;
        s.tid = e.tid;
        if (e.has_device) s.device = e.device;
        if (e.has_stream) s.stream = e.stream;
        s.correlation_id = e.correlation;
        s.type = static_cast<model::SyncType>(e.sync_type);
        chunk.syncs.push_back(s);
        break;
      }
      case kChunkApi: {
        model::ApiCallEvent a;
        a.start_ns = start;
        a.end_ns = end;
        a.tid = e.tid;
        if (e.has_name) a.name = e.name;
        a.correlation_id = e.correlation;
        a.kind = static_cast<model::ApiKind>(e.api_kind);
        a.sync_type = static_cast<model::SyncType>(e.api_sync_type);
        if (e.has_device) a.device = e.device;
        a.bytes = e.bytes;
        chunk.api_calls.push_back(a);
        break;
      }
    }
  }
  if (!r.ok()) return base::DataLossError("capture chunk: truncated or corrupt");
  return chunk;
}

}  // namespace inferscope::wire
