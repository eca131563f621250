// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The primitives of the wire format (see src/wire/README.md): varints, zigzag, tagged fields with a
// wire type so that a reader can skip a field it does not know. Hand-rolled rather than protobuf:
// the injection library must not pull a protobuf runtime into every inference process, windows are
// small, and this is all the encoding we need. It is protobuf's wire format, so the agent's OTLP
// receiver (src/telemetry/otlp) walks OTLP messages with the same reader.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace inferscope::wire {

// How a field's value is laid out; the low 3 bits of its tag. A reader skips unknown fields by
// this alone, which is what lets an old reader accept a newer writer of the same major version.
enum class WireType : uint8_t {
  kVarint = 0,   // unsigned LEB128; signed values are zigzag-encoded first
  kFixed64 = 1,  // 8 bytes little-endian
  kBytes = 2,    // varint length, then that many bytes (strings, nested messages, packed lists)
  // 3 and 4 are protobuf's deprecated groups: neither format uses them, readers reject them.
  kFixed32 = 5,  // 4 bytes little-endian
};

// One field as it sits on the wire (WireReader::NextField). For kBytes, `bytes` views the payload
// inside the input (nothing is copied); for the numeric types `value` holds the raw 64-bit value
// (a fixed32 zero-extended, a fixed64 double's bits: AsDouble).
struct WireField {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;
  std::string_view bytes;
};

// Reinterpretations of a raw wire value: protobuf int64 (two's complement in a varint), double.
inline int64_t AsInt64(uint64_t raw) { return static_cast<int64_t>(raw); }
inline double AsDouble(uint64_t raw) { return std::bit_cast<double>(raw); }

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Appends wire primitives to a string. Never fails.
class WireWriter {
 public:
  explicit WireWriter(std::string* out) : out_(out) {}

  void Varint(uint64_t v) {
    char buf[10];
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out_->append(buf, n);
  }
  void Fixed32(uint32_t v) {
    char buf[4];
    for (int i = 0; i < 4; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    out_->append(buf, 4);
  }
  void Tag(uint32_t field, WireType type) {
    Varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(type));
  }

  // Fields. Zero / empty values are omitted: the reader's default is the same.
  void U(uint32_t field, uint64_t v) {
    if (v == 0) return;
    Tag(field, WireType::kVarint);
    Varint(v);
  }
  void S(uint32_t field, int64_t v) { U(field, ZigZag(v)); }
  void Str(uint32_t field, std::string_view s) {
    if (s.empty()) return;
    Tag(field, WireType::kBytes);
    Varint(s.size());
    out_->append(s.data(), s.size());
  }
  // A nested message: `fn(WireWriter&)` writes its fields. Written even when empty when `always`
  // (list elements must keep their position).
  template <typename Fn>
  void Message(uint32_t field, Fn&& fn, bool always = false) {
    std::string body;
    WireWriter inner(&body);
    fn(inner);
    if (body.empty() && !always) return;
    Tag(field, WireType::kBytes);
    Varint(body.size());
    out_->append(body);
  }

  std::string* out() { return out_; }

 private:
  std::string* out_;
};

// Reads wire primitives from a byte range. Every read is bounds-checked; after the first failure
// `ok()` is false and every further read returns zero, so decoders check once per message.
class WireReader {
 public:
  WireReader(const char* data, size_t size) : p_(data), end_(data + size) {}
  explicit WireReader(std::string_view s) : WireReader(s.data(), s.size()) {}

  bool ok() const { return ok_; }
  bool done() const { return p_ >= end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  void Fail() {
    ok_ = false;
    p_ = end_;
  }

  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) {
        Fail();
        return 0;
      }
      const auto byte = static_cast<uint8_t>(*p_++);
      if (shift == 63 && byte > 1) break;  // more than 64 bits
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    Fail();
    return 0;
  }
  uint32_t Fixed32() {
    if (remaining() < 4) {
      Fail();
      return 0;
    }
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
    p_ += 4;
    return v;
  }
  uint64_t Fixed64() {
    if (remaining() < 8) {
      Fail();
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
    p_ += 8;
    return v;
  }
  // A length-delimited value; the length is checked against the bytes left.
  std::string_view Bytes() {
    const uint64_t n = Varint();
    if (!ok_ || n > remaining()) {
      Fail();
      return {};
    }
    std::string_view s(p_, static_cast<size_t>(n));
    p_ += n;
    return s;
  }
  // Reads the next tag. Returns false at the end of the message or on error.
  bool Next(uint32_t* field, WireType* type) {
    if (done() || !ok_) return false;
    const uint64_t tag = Varint();
    const uint64_t field64 = tag >> 3;
    if (!ok_ || field64 == 0 || field64 > 0x1fffffff) {
      Fail();
      return false;
    }
    *field = static_cast<uint32_t>(field64);
    *type = static_cast<WireType>(tag & 7);
    return true;
  }
  // Reads the next tag and its value into `field`, for decoders that look at a few fields and step
  // over the rest (the OTLP receiver). Returns false at the end of the message or on error (tell
  // the two apart with ok()); groups and undefined wire types are errors.
  bool NextField(WireField* field) {
    if (!Next(&field->number, &field->type)) return false;
    field->value = 0;
    field->bytes = {};
    switch (field->type) {
      case WireType::kVarint:
        field->value = Varint();
        break;
      case WireType::kFixed64:
        field->value = Fixed64();
        break;
      case WireType::kBytes:
        field->bytes = Bytes();
        break;
      case WireType::kFixed32:
        field->value = Fixed32();
        break;
      default:
        Fail();
    }
    return ok_;
  }
  // Skips a field of the given type (an unknown field); fails on an unknown wire type.
  void Skip(WireType type) {
    switch (type) {
      case WireType::kVarint:
        Varint();
        return;
      case WireType::kFixed64:
        Advance(8);
        return;
      case WireType::kBytes:
        Bytes();
        return;
      case WireType::kFixed32:
        Advance(4);
        return;
    }
    Fail();
  }

 private:
  void Advance(size_t n) {
    if (remaining() < n) {
      Fail();
      return;
    }
    p_ += n;
  }

  const char* p_;
  const char* end_;
  bool ok_ = true;
};

}  // namespace inferscope::wire
