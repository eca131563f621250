// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The structural scanner of the streaming Kineto importer. It walks a trace document
// ({"traceEvents": [ {...}, {...} ], "otherKey": ..., ...}) chunk by chunk and hands out the byte
// span of each complete top-level event object and of each other top-level member's value.
//
// Why hand-written: simdjson On-Demand wants the whole document in memory (a multi-GB trace must
// not be), and iterate_many wants whitespace-separated documents, not elements of an array nested
// in an object. This scanner only tracks strings, escapes and nesting depth (with SSE2 where
// available), finds "cat" at the event's own level on the way, and leaves real parsing of each
// (small, bounded) event to simdjson. Events the importer does not use are never parsed at all.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/base/status.h"

namespace inferscope::import::kineto {

// Where the strings at an event's own level (keys and string values, depth 1) lie, recorded by the
// structural scan as it walks the event anyway (TraceJsonScanner::set_record_strings): the
// operator reader (host_range_scanner.h, ScanKinetoOperator) reads Kineto's fields from these
// offsets instead of walking the event a second time. Offsets are from the event's '{'.
struct EventStrings {
  static constexpr int kMax = 12;  // Kineto's operator fields end at the 10th ("dur")
  int count = 0;                   // strings at depth 1 (may exceed kMax; only kMax are recorded)
  bool backslash = false;          // a backslash anywhere in the event: offsets may not be exact
  uint32_t open[kMax + 1];         // the opening quote ([kMax]: scratch)
  uint32_t close[kMax + 1];        // the closing quote
};

// Receives what the scanner finds. Spans point into the caller's buffer and are valid only during
// the call; the buffer holds at least kScanPadding readable bytes after every span.
class ScanHandler {
 public:
  virtual ~ScanHandler() = default;
  // One element of "traceEvents". `cat` is the event's "cat" string when the scanner could read it
  // cheaply (plain string without escapes), else empty and `cat_known` false. `strings`: the
  // event's depth-1 strings when the scanner records them and the element is an object, else null.
  virtual void OnEvent(const char* begin, size_t size, std::string_view cat, bool cat_known,
                       const EventStrings* strings) = 0;
  // A top-level member other than traceEvents; `key` is the raw (still escaped) key text.
  virtual void OnTopLevelMember(std::string_view key, const char* begin, size_t size) = 0;
};

// Bytes the scanner (and simdjson) may read past the end of the data it is given.
inline constexpr size_t kScanPadding = 64;

// Incremental scanner. Feed it the unconsumed bytes of the stream; it reports how many bytes it has
// finished with (always a boundary between elements). The caller keeps the rest, appends more data
// and calls again. An element cut by the chunk end is simply scanned again from its start.
class TraceJsonScanner {
 public:
  // Scans data[0, size). `stream_offset` is the offset of data[0] in the whole stream (for error
  // messages); `at_end` says no more data follows. Returns the number of bytes consumed, or
  // kDataLoss / kUnsupported with the byte offset of the problem.
  base::StatusOr<size_t> Scan(const char* data, size_t size, uint64_t stream_offset, bool at_end,
                              ScanHandler* handler);

  // Also record each event's depth-1 strings (EventStrings) for the handler: only the operator
  // reader uses them, so off unless operators are read.
  void set_record_strings(bool on) { record_strings_ = on; }

  bool done() const { return state_ == State::kDone; }
  bool saw_trace_events() const { return saw_trace_events_; }
  uint64_t events() const { return events_; }

 private:
  enum class State {
    kStart,         // before the top-level '{' (or '[' for the bare-array Chrome format)
    kMemberOrEnd,   // after '{': a key or '}'
    kMember,        // after ',': a key
    kAfterMember,   // after a member value: ',' or '}'
    kElementOrEnd,  // inside traceEvents, after '[' or ',': an element or ']'
    kAfterElement,  // after an element: ',' or ']'
    kDone,
  };
  State state_ = State::kStart;
  bool bare_array_ = false;  // top level is the array itself (Chrome "JSON Array Format")
  bool saw_trace_events_ = false;
  bool record_strings_ = false;
  uint64_t events_ = 0;
  EventStrings strings_;
};

// Finds the end of the object or array starting at `p` (which must be '{' or '['), tracking strings
// and escapes. Returns one past the closing bracket, or nullptr if `end` comes first. If `cat` is
// non-null and p is an object, sets *cat to the position just after a "cat" key at depth 1 (or
// leaves it null). Reads up to 15 bytes past `end` (padding).
const char* FindCompositeEnd(const char* p, const char* end, const char** cat_key_end);
// The same, also recording the depth-1 strings of the object at p into *strings (reset first).
const char* FindCompositeEnd(const char* p, const char* end, const char** cat_key_end,
                             EventStrings* strings);

}  // namespace inferscope::import::kineto
