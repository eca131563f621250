// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A streaming writer of Perfetto's native trace format: a `Trace` is a sequence of length-prefixed
// `TracePacket`s (field 1), so packets are appended as they are made and flushed in blocks; nothing
// holds the whole trace. Hand-encoded with src/wire's varint writer rather than generated from
// Perfetto's .proto files: the project carries no protobuf runtime (the injection library must not
// pull one into inference processes), and the handful of messages written here are a few dozen
// lines. tests/perfetto/perfetto_trace.proto is the schema, written from Perfetto's documented
// field numbers, that `protoc --decode` checks the output against.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace inferscope::perfetto {

// Perfetto field numbers (protos/perfetto/trace/...), the public schema's facts.
namespace field {
inline constexpr uint32_t kTracePacket = 1;  // Trace.packet
// TracePacket
inline constexpr uint32_t kTimestamp = 8;
inline constexpr uint32_t kTrustedPacketSequenceId = 10;
inline constexpr uint32_t kTrackEvent = 11;
inline constexpr uint32_t kInternedData = 12;
inline constexpr uint32_t kSequenceFlags = 13;
inline constexpr uint32_t kClockSnapshot = 6;
inline constexpr uint32_t kTracePacketDefaults = 59;
// TracePacketDefaults.timestamp_clock_id (the same number as TracePacket's)
inline constexpr uint32_t kTimestampClockId = 58;
// ClockSnapshot {clocks = 1}; Clock {clock_id = 1, timestamp = 2, is_incremental = 3}
inline constexpr uint32_t kClocks = 1;
inline constexpr uint32_t kClockId = 1;
inline constexpr uint32_t kClockTimestamp = 2;
inline constexpr uint32_t kClockIsIncremental = 3;
inline constexpr uint32_t kTrackDescriptor = 60;
// TracePacketDefaults / TrackEventDefaults
inline constexpr uint32_t kTrackEventDefaults = 11;
inline constexpr uint32_t kDefaultTrackUuid = 11;
// TrackEvent
inline constexpr uint32_t kCategoryIids = 3;
inline constexpr uint32_t kDebugAnnotations = 4;
inline constexpr uint32_t kType = 9;
inline constexpr uint32_t kNameIid = 10;
inline constexpr uint32_t kTrackUuid = 11;
inline constexpr uint32_t kDoubleCounterValue = 44;
// The varint flow ids (`flow_ids_old`, `terminating_flow_ids_old`): deprecated in the schema in
// favour of fixed64 `flow_ids` (47) and `terminating_flow_ids` (48), but still read by the trace
// processor (track_event_event_importer.h takes either); with the export's dense ids they cost
// 1-3 bytes where the fixed64 ones cost 8.
inline constexpr uint32_t kFlowIdsOld = 36;
inline constexpr uint32_t kTerminatingFlowIdsOld = 42;
// TrackEvent.correlation_id (uint64): the trace processor shows it as the slice's
// `correlation_id` argument and the UI colours the slices sharing one alike.
inline constexpr uint32_t kCorrelationId = 52;
// DebugAnnotation
inline constexpr uint32_t kAnnotationNameIid = 1;
inline constexpr uint32_t kAnnotationUintValue = 3;
inline constexpr uint32_t kAnnotationIntValue = 4;
inline constexpr uint32_t kAnnotationStringValueIid = 17;
// InternedData: each entry is {iid = 1, name/str = 2}
inline constexpr uint32_t kInternedEventCategories = 1;
inline constexpr uint32_t kInternedEventNames = 2;
inline constexpr uint32_t kInternedDebugAnnotationNames = 3;
inline constexpr uint32_t kInternedDebugAnnotationStringValues = 29;
// TrackDescriptor
inline constexpr uint32_t kTrackUuidField = 1;
inline constexpr uint32_t kTrackName = 2;
inline constexpr uint32_t kTrackProcess = 3;
inline constexpr uint32_t kTrackThread = 4;
inline constexpr uint32_t kTrackParentUuid = 5;
inline constexpr uint32_t kTrackCounter = 8;
// ProcessDescriptor {pid = 1, process_name = 6}; ThreadDescriptor {pid = 1, tid = 2,
// thread_name = 5}; CounterDescriptor {unit_name = 6}
inline constexpr uint32_t kProcessPid = 1;
inline constexpr uint32_t kProcessName = 6;
inline constexpr uint32_t kProcessLabels = 8;  // repeated string
inline constexpr uint32_t kThreadPid = 1;
inline constexpr uint32_t kThreadTid = 2;
inline constexpr uint32_t kThreadName = 5;
inline constexpr uint32_t kCounterUnitName = 6;
}  // namespace field

// TrackEvent.Type and TracePacket.SequenceFlags values.
inline constexpr uint64_t kTypeSliceBegin = 1;
inline constexpr uint64_t kTypeSliceEnd = 2;
inline constexpr uint64_t kTypeCounter = 4;
inline constexpr uint64_t kSeqIncrementalStateCleared = 1;
// BuiltinClocks.BOOTTIME, the default trace clock; ids 64..127 are clocks of one sequence.
inline constexpr uint32_t kClockBoottime = 6;
inline constexpr uint32_t kClockIncremental = 64;

// One debug annotation (a slice argument): an unsigned, a signed or an interned string value.
struct Arg {
  // kJson: a JSON value written as is in Chrome JSON (Kineto's "grid": [4, 1, 1]), a string in
  // the protobuf.
  enum class Kind : uint8_t { kUint, kInt, kString, kJson };
  std::string_view name;
  Kind kind = Kind::kUint;
  uint64_t uint_value = 0;
  int64_t int_value = 0;
  std::string_view string_value;

  static Arg Uint(std::string_view name, uint64_t v) { return {name, Kind::kUint, v, 0, {}}; }
  static Arg Int(std::string_view name, int64_t v) { return {name, Kind::kInt, 0, v, {}}; }
  static Arg String(std::string_view name, std::string_view v) {
    return {name, Kind::kString, 0, 0, v};
  }
  static Arg Json(std::string_view name, std::string_view v) {
    return {name, Kind::kJson, 0, 0, v};
  }
};

// A slice on a sequence's default track: [start_ns, end_ns), named and categorized, with arguments,
// an optional correlation id and optional flow ends (0 = none).
struct Slice {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string_view name;
  std::string_view category;
  const Arg* args = nullptr;
  size_t arg_count = 0;
  uint64_t correlation_id = 0;  // CUPTI's correlation id (launch and GPU work share it); 0: none
  uint64_t flow_out = 0;        // a flow starting here (the launching API call)
  uint64_t flow_in = 0;         // a flow ending here (the kernel it launched)
};

// What the export writes through: tracks, then per track a sequence of its events in time order.
// Two formats implement it, Perfetto's protobuf (TrackEventWriter) and Chrome JSON
// (ChromeJsonWriter); the export does not know which.
class TraceWriter {
 public:
  using Sink = std::function<void(std::string_view bytes)>;
  virtual ~TraceWriter() = default;

  // Track descriptors. A process track is named after a host process; a thread track sits under
  // its process; a plain track (a GPU, a stream) is named and optionally parented; a counter track
  // holds counter values.
  // `labels`: lines describing the process (a live capture: what it dropped and why), shown by
  // the viewers with its name.
  virtual void ProcessTrack(uint64_t uuid, uint32_t pid, std::string_view name,
                            const std::vector<std::string>& labels) = 0;
  virtual void ThreadTrack(uint64_t uuid, uint64_t parent_uuid, uint32_t pid, uint32_t tid,
                           std::string_view name) = 0;
  virtual void PlainTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name) = 0;
  virtual void CounterTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name,
                            std::string_view unit) = 0;

  // Starts writing the events of `track_uuid` (declared above); returns a sequence number.
  virtual uint32_t BeginSequence(uint64_t track_uuid) = 0;

  // Events on the current track.
  virtual void WriteSlice(const Slice& slice) = 0;
  virtual void WriteCounter(int64_t ts_ns, double value) = 0;

  // Flushes what is buffered. Returns the total bytes written.
  virtual uint64_t Finish() = 0;
  virtual uint64_t bytes_written() const = 0;
};

// Writes TracePackets. Every track's events go to a sequence of their own (`BeginSequence`) whose
// packet defaults name the track, so an event does not repeat its track's uuid, and whose clock is
// incremental (each timestamp is the delta from the previous packet's: a byte or two instead of
// five); names, categories,
// annotation names and string values are interned per sequence (the first use emits InternedData
// in the same packet), so a repeated kernel costs its ids, not its strings. Slices of one sequence
// come in order of their start; their ends are held back and written in time order, so deltas
// never go negative. A slice that outlasts the one enclosing it is cut at that one's end, as
// Perfetto's slices must nest.
// Bytes leave through `sink` in blocks of about 1 MiB and at Finish(); a failing sink stops
// nothing here, the caller checks its own state.
class TrackEventWriter : public TraceWriter {
 public:
  explicit TrackEventWriter(Sink sink);
  ~TrackEventWriter() override;
  TrackEventWriter(const TrackEventWriter&) = delete;
  TrackEventWriter& operator=(const TrackEventWriter&) = delete;

  void ProcessTrack(uint64_t uuid, uint32_t pid, std::string_view name,
                    const std::vector<std::string>& labels) override;
  void ThreadTrack(uint64_t uuid, uint64_t parent_uuid, uint32_t pid, uint32_t tid,
                   std::string_view name) override;
  void PlainTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name) override;
  void CounterTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name,
                    std::string_view unit) override;
  // A new sequence whose packet defaults name the track.
  uint32_t BeginSequence(uint64_t track_uuid) override;
  void WriteSlice(const Slice& slice) override;
  void WriteCounter(int64_t ts_ns, double value) override;
  uint64_t Finish() override;
  uint64_t bytes_written() const override { return bytes_flushed_ + buffer_.size(); }

 private:
  // Transparent hashing: lookups by string_view build no temporary string.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using InternTable = std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>>;
  struct Interned {
    InternTable names, categories, annotation_names, strings;
  };
  uint64_t Intern(InternTable* table, std::string_view s, uint32_t interned_field);
  void WritePacket(uint64_t timestamp_ns, bool has_timestamp, const std::string& track_event,
                   uint64_t flags);
  void MaybeFlush();
  void WriteEndsUntil(int64_t ts_ns);  // the held-back slice ends at or before `ts_ns`

  Sink sink_;
  std::string buffer_;
  uint64_t bytes_flushed_ = 0;
  uint32_t next_sequence_ = 1;
  uint32_t sequence_ = 0;
  Interned interned_;
  std::string pending_interned_;    // InternedData body for the next packet of the sequence
  std::string scratch_;             // reused TrackEvent body
  std::string packet_;              // reused TracePacket body
  uint64_t last_ts_ns_ = 0;         // the sequence's clock: timestamps are written as deltas to it
  std::vector<int64_t> open_ends_;  // ends of the open slices, innermost (earliest) last
};

}  // namespace inferscope::perfetto
