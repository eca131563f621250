// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A minimal protobuf wire-format reader, enough to walk the handful of OTLP trace messages the
// receiver needs. Why not protoc-generated code: OTLP's .proto files are not packaged in Debian
// (we take dependencies only from Debian), generated parsers materialize every field (including
// prompt text we must never copy) before we could filter it, and a receiver facing arbitrary input
// has to skip unknown fields and bound every loop anyway. Field numbers are facts from the public
// opentelemetry-proto definitions; they are listed where each message is decoded (otlp_decode.cc).

#include <cstdint>
#include <string_view>

namespace inferscope::agent::otlp {

// Protobuf wire types (the low 3 bits of a field key).
enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,  // deprecated groups: rejected, OTLP never uses them
  kEndGroup = 4,
  kFixed32 = 5,
};

// One field of a message as it sits on the wire. For kLengthDelimited, `bytes` views the payload
// inside the input buffer (nothing is copied); for the numeric wire types `number` holds the raw
// 64-bit value (a fixed32 is zero-extended).
struct ProtoField {
  uint32_t field_number = 0;
  WireType wire_type = WireType::kVarint;
  uint64_t number = 0;
  std::string_view bytes;
};

// Iterates over the fields of one serialized message. Never reads outside `data`, never allocates;
// any malformed input (truncated varint, length past the end, field number 0, groups, unknown
// wire types) stops iteration with error() set. Callers skip fields they do not know simply by
// not looking at them: the reader has already stepped over them.
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view data) : data_(data) {}

  // Reads the next field into `field`. Returns false at the end of the message or on error; tell
  // the two apart with error().
  bool Next(ProtoField* field);
  bool error() const { return error_; }

 private:
  bool ReadVarint(uint64_t* value);

  std::string_view data_;
  size_t pos_ = 0;
  bool error_ = false;
};

// Reinterpretations of a raw wire value.
inline int64_t AsInt64(uint64_t raw) { return static_cast<int64_t>(raw); }
double AsDouble(uint64_t raw);

}  // namespace inferscope::agent::otlp
