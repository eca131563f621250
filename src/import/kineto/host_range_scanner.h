// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A hand-written reader of the few fields of a Kineto operator or module event (cpu_op,
// python_function) that the ops view needs: name, ts, dur, pid, tid, ph (and cat).
//
// Why hand-written: with the ops view on, every cpu_op event of a Kineto trace (tens of
// thousands) must be read, and parsing each as its own simdjson On-Demand document (stage 1 over
// the whole event, then the field walk) is a per-event cost the ops view pays on `analyze`'s
// critical path. This reader walks the event once, reads the fields in place and stops where the
// simdjson path stops; Kineto's own field order is read by straight-line code. What the ops view
// costs now, and where it goes: docs/benchmarks.md, "Views".
//
// It is exact or it declines: it accepts only events it can read with certainty to the same
// fields as the simdjson path (KinetoEventMapper::ParseFields in its host-range mode) and returns
// false for anything else (escapes in the fields it reads or in a key, non-ASCII bytes, values of
// an unexpected type, anything not strictly JSON), which the caller then parses with simdjson.
// That path's acceptance rules, which it mirrors: simdjson's stage 1 checks the whole event
// (UTF-8, no control character inside a string) and its root object a '}' last and, when the byte
// after the event is '}', balanced brackets; the On-Demand walk checks only the fields it reads,
// in order, up to the point where every field the range needs has been seen; `ts`, `dur`, `pid`
// and `tid` are taken as raw tokens.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/import/kineto/json_scanner.h"

namespace inferscope::import::kineto {

// The fields of a host-side range event, as KinetoEventMapper reads them. `ts` and `dur` are the
// raw JSON tokens (with any whitespace before the next ',' or '}'); `name`, `ph` and `cat` the
// (unescaped) string values. Views point into the event (or the simdjson parser's buffers).
struct HostRangeFields {
  std::string_view cat, name, ph, ts, dur;
  bool has_cat = false, has_name = false, has_pid = false, has_tid = false;
  int64_t pid = 0, tid = 0;

  // What the host-range parse stops at: every field a range needs has been read.
  bool Complete() const {
    return !ts.empty() && !dur.empty() && has_name && has_pid && has_tid && !ph.empty();
  }
};

// An integer from a raw JSON token: a number (fraction dropped) or a string holding one, such as
// old Kineto's "tid": "stream 7". False if there is none or it overflows int64.
bool ParseIntToken(std::string_view raw, int64_t* out);

// Reads the event object data[0, size) into *f (a default-constructed HostRangeFields). True: *f
// is what the simdjson path reads from the same bytes. False: not sure (*f is then undefined):
// parse it with simdjson. Reads up to 15 bytes past data + size (the importer's buffers hold
// kScanPadding readable bytes after every event).
bool ScanHostRangeEvent(const char* data, size_t size, HostRangeFields* f);

// An operator or module event in Kineto's own layout, read to the values the event mapper makes of
// it: `start_ns` and `dur_ns` as ParseMicrosToNs gives them, `pid` and `tid` as ParseIntToken.
struct KinetoOperator {
  std::string_view name;
  int64_t pid = 0, tid = 0, start_ns = 0, dur_ns = 0;
};

// The operator reader's fast path, without a walk of its own: the structural scanner has already
// found where the event's strings lie (EventStrings), so the fields of Kineto's layout ("ph": "X",
// "cat", "name", then the numbers "pid", "tid", "ts", "dur", then anything) are checked and read
// from those offsets, each independently of the others (ScanHostRangeEvent's walk is a chain of
// dependent steps, and its latency was most of its cost), and the numbers are converted eight
// digits at a time as they are found. True only when ScanHostRangeEvent would return true on the
// same bytes with these values (so would simdjson): every byte before "dur"'s value is checked
// (keys, separators, plain ASCII strings, JSON numbers of at most 16 integer digits, no exponent)
// and the rest by the same check ScanHostRangeEvent makes of it. False: use ScanHostRangeEvent.
// Reads up to 32 bytes past data + size.
bool ScanKinetoOperator(const char* data, size_t size, const EventStrings& strings,
                        KinetoOperator* op);

}  // namespace inferscope::import::kineto
