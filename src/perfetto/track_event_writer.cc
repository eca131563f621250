// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/perfetto/track_event_writer.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "src/wire/wire_buffer.h"

namespace inferscope::perfetto {
namespace {

using wire::WireType;
using wire::WireWriter;

constexpr size_t kFlushBytes = 1 << 20;

// A length-delimited field whose body is already built (avoids WireWriter::Message's temporary).
void Bytes(WireWriter& w, uint32_t field, std::string_view body) {
  w.Tag(field, WireType::kBytes);
  w.Varint(body.size());
  w.out()->append(body.data(), body.size());
}

// Unsigned field written even when zero: pids, tids and ids of 0 are values, not absences.
void UAlways(WireWriter& w, uint32_t field, uint64_t v) {
  w.Tag(field, WireType::kVarint);
  w.Varint(v);
}

void Fixed64(WireWriter& w, uint32_t field, uint64_t v) {
  w.Tag(field, WireType::kFixed64);
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  w.out()->append(buf, 8);
}

void Double(WireWriter& w, uint32_t field, double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(bits));
  Fixed64(w, field, bits);
}

}  // namespace

TrackEventWriter::TrackEventWriter(Sink sink) : sink_(std::move(sink)) {
  buffer_.reserve(kFlushBytes + 4096);
}

TrackEventWriter::~TrackEventWriter() = default;

void TrackEventWriter::MaybeFlush() {
  if (buffer_.size() < kFlushBytes) return;
  sink_(buffer_);
  bytes_flushed_ += buffer_.size();
  buffer_.clear();
}

uint64_t TrackEventWriter::Finish() {
  WriteEndsUntil(INT64_MAX);
  if (!buffer_.empty()) {
    sink_(buffer_);
    bytes_flushed_ += buffer_.size();
    buffer_.clear();
  }
  return bytes_flushed_;
}

void TrackEventWriter::WritePacket(uint64_t timestamp_ns, bool has_timestamp,
                                   const std::string& track_event, uint64_t flags) {
  packet_.clear();
  WireWriter p(&packet_);
  if (has_timestamp) {
    // Callers keep timestamps non-decreasing on a sequence (WriteEndsUntil); a stray earlier one
    // is written at the clock's current value rather than as a huge unsigned delta.
    const uint64_t delta = timestamp_ns >= last_ts_ns_ ? timestamp_ns - last_ts_ns_ : 0;
    last_ts_ns_ += delta;
    UAlways(p, field::kTimestamp, delta);
  }
  Bytes(p, field::kTrackEvent, track_event);
  if (!pending_interned_.empty()) {
    Bytes(p, field::kInternedData, pending_interned_);
    pending_interned_.clear();
  }
  UAlways(p, field::kTrustedPacketSequenceId, sequence_);
  p.U(field::kSequenceFlags, flags);
  WireWriter out(&buffer_);
  Bytes(out, field::kTracePacket, packet_);
  MaybeFlush();
}

namespace {
// Descriptor packets carry no sequence: trace processor accepts track descriptors on their own.
void DescriptorPacket(std::string* buffer, const std::string& descriptor) {
  std::string packet;
  WireWriter p(&packet);
  Bytes(p, field::kTrackDescriptor, descriptor);
  WireWriter out(buffer);
  Bytes(out, field::kTracePacket, packet);
}
}  // namespace

void TrackEventWriter::ProcessTrack(uint64_t uuid, uint32_t pid, std::string_view name,
                                    const std::vector<std::string>& labels) {
  std::string d, process;
  WireWriter pw(&process);
  UAlways(pw, field::kProcessPid, pid);
  pw.Str(field::kProcessName, name);
  for (const std::string& l : labels) pw.Str(field::kProcessLabels, l);
  WireWriter w(&d);
  UAlways(w, field::kTrackUuidField, uuid);
  Bytes(w, field::kTrackProcess, process);
  DescriptorPacket(&buffer_, d);
  MaybeFlush();
}

void TrackEventWriter::ThreadTrack(uint64_t uuid, uint64_t parent_uuid, uint32_t pid, uint32_t tid,
                                   std::string_view name) {
  std::string d, thread;
  WireWriter tw(&thread);
  UAlways(tw, field::kThreadPid, pid);
  UAlways(tw, field::kThreadTid, tid);
  tw.Str(field::kThreadName, name);
  WireWriter w(&d);
  UAlways(w, field::kTrackUuidField, uuid);
  w.U(field::kTrackParentUuid, parent_uuid);
  Bytes(w, field::kTrackThread, thread);
  DescriptorPacket(&buffer_, d);
  MaybeFlush();
}

void TrackEventWriter::PlainTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name) {
  std::string d;
  WireWriter w(&d);
  UAlways(w, field::kTrackUuidField, uuid);
  w.Str(field::kTrackName, name);
  w.U(field::kTrackParentUuid, parent_uuid);
  DescriptorPacket(&buffer_, d);
  MaybeFlush();
}

void TrackEventWriter::CounterTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name,
                                    std::string_view unit) {
  std::string d, counter;
  WireWriter cw(&counter);
  cw.Str(field::kCounterUnitName, unit);
  WireWriter w(&d);
  UAlways(w, field::kTrackUuidField, uuid);
  w.Str(field::kTrackName, name);
  w.U(field::kTrackParentUuid, parent_uuid);
  Bytes(w, field::kTrackCounter, counter);  // present, even empty: it makes the track a counter
  DescriptorPacket(&buffer_, d);
  MaybeFlush();
}

uint32_t TrackEventWriter::BeginSequence(uint64_t track_uuid) {
  WriteEndsUntil(INT64_MAX);
  sequence_ = next_sequence_++;
  last_ts_ns_ = 0;
  interned_ = Interned{};
  pending_interned_.clear();
  // The sequence's first packet clears its incremental state (interning starts over), sets the
  // default track, so no event of the sequence repeats it, and defines the sequence's incremental
  // clock: equal to BOOTTIME (the trace clock) at 0, each packet's timestamp a delta from the
  // previous one's. This is how Perfetto's own SDK writes incremental timestamps.
  packet_.clear();
  WireWriter p(&packet_);
  std::string defaults, te_defaults, snapshot, incremental, boottime;
  WireWriter tw(&te_defaults);
  UAlways(tw, field::kDefaultTrackUuid, track_uuid);
  WireWriter dw(&defaults);
  Bytes(dw, field::kTrackEventDefaults, te_defaults);
  UAlways(dw, field::kTimestampClockId, kClockIncremental);
  WireWriter bw(&boottime);
  UAlways(bw, field::kClockId, kClockBoottime);
  UAlways(bw, field::kClockTimestamp, 0);
  WireWriter iw(&incremental);
  UAlways(iw, field::kClockId, kClockIncremental);
  UAlways(iw, field::kClockTimestamp, 0);
  UAlways(iw, field::kClockIsIncremental, 1);
  WireWriter sw(&snapshot);
  Bytes(sw, field::kClocks, boottime);
  Bytes(sw, field::kClocks, incremental);
  Bytes(p, field::kClockSnapshot, snapshot);
  UAlways(p, field::kTrustedPacketSequenceId, sequence_);
  UAlways(p, field::kSequenceFlags, kSeqIncrementalStateCleared);
  Bytes(p, field::kTracePacketDefaults, defaults);
  WireWriter out(&buffer_);
  Bytes(out, field::kTracePacket, packet_);
  MaybeFlush();
  return sequence_;
}

uint64_t TrackEventWriter::Intern(InternTable* table, std::string_view s, uint32_t interned_field) {
  auto it = table->find(s);
  if (it != table->end()) return it->second;
  const uint64_t iid = table->size() + 1;  // iid 0 is "not interned"
  table->emplace(std::string(s), iid);
  std::string entry;
  WireWriter e(&entry);
  UAlways(e, 1, iid);
  // EventCategory, EventName and DebugAnnotationName call the string `name` (2); InternedString
  // calls it `str` (2, bytes): the same field on the wire.
  e.Tag(2, WireType::kBytes);
  e.Varint(s.size());
  entry.append(s.data(), s.size());
  WireWriter w(&pending_interned_);
  Bytes(w, interned_field, entry);
  return iid;
}

void TrackEventWriter::WriteEndsUntil(int64_t ts_ns) {
  while (!open_ends_.empty() && open_ends_.back() <= ts_ns) {
    const int64_t end_ns = open_ends_.back();
    open_ends_.pop_back();
    scratch_.clear();
    WireWriter w(&scratch_);
    UAlways(w, field::kType, kTypeSliceEnd);
    WritePacket(static_cast<uint64_t>(end_ns), true, scratch_, 0);
  }
}

void TrackEventWriter::WriteSlice(const Slice& slice) {
  WriteEndsUntil(slice.start_ns);
  scratch_.clear();
  WireWriter w(&scratch_);
  UAlways(w, field::kType, kTypeSliceBegin);
  if (!slice.category.empty())
    UAlways(w, field::kCategoryIids,
            Intern(&interned_.categories, slice.category, field::kInternedEventCategories));
  UAlways(w, field::kNameIid, Intern(&interned_.names, slice.name, field::kInternedEventNames));
  for (size_t i = 0; i < slice.arg_count; ++i) {
    const Arg& a = slice.args[i];
    std::string annotation;
    WireWriter aw(&annotation);
    UAlways(aw, field::kAnnotationNameIid,
            Intern(&interned_.annotation_names, a.name, field::kInternedDebugAnnotationNames));
    switch (a.kind) {
      case Arg::Kind::kUint:
        UAlways(aw, field::kAnnotationUintValue, a.uint_value);
        break;
      case Arg::Kind::kInt:
        UAlways(aw, field::kAnnotationIntValue, static_cast<uint64_t>(a.int_value));
        break;
      case Arg::Kind::kString:
      case Arg::Kind::kJson:
        UAlways(aw, field::kAnnotationStringValueIid,
                Intern(&interned_.strings, a.string_value,
                       field::kInternedDebugAnnotationStringValues));
        break;
    }
    Bytes(w, field::kDebugAnnotations, annotation);
  }
  // TrackEvent's own correlation id: a 2-byte tag and the varint, where a debug annotation would
  // add its length and its name's id (3 more bytes).
  if (slice.correlation_id) UAlways(w, field::kCorrelationId, slice.correlation_id);
  if (slice.flow_out) UAlways(w, field::kFlowIdsOld, slice.flow_out);
  if (slice.flow_in) UAlways(w, field::kTerminatingFlowIdsOld, slice.flow_in);
  // No SEQ_NEEDS_INCREMENTAL_STATE flag: it only lets a reader drop packets of a sequence whose
  // state it lost, which a file written whole cannot have, and it would cost 2 bytes a slice.
  WritePacket(static_cast<uint64_t>(slice.start_ns), true, scratch_, 0);
  int64_t end_ns = std::max(slice.end_ns, slice.start_ns);
  if (!open_ends_.empty()) end_ns = std::min(end_ns, open_ends_.back());
  open_ends_.push_back(end_ns);
}

void TrackEventWriter::WriteCounter(int64_t ts_ns, double value) {
  WriteEndsUntil(ts_ns);
  scratch_.clear();
  WireWriter w(&scratch_);
  UAlways(w, field::kType, kTypeCounter);
  Double(w, field::kDoubleCounterValue, value);
  WritePacket(static_cast<uint64_t>(ts_ns), true, scratch_, 0);
}

}  // namespace inferscope::perfetto
