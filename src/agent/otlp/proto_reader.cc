// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agent/otlp/proto_reader.h"

#include <cstring>

namespace inferscope::agent::otlp {

bool ProtoReader::ReadVarint(uint64_t* value) {
  uint64_t result = 0;
  // At most 10 bytes encode 64 bits; the 10th may only contribute the top bit.
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) return false;
    uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && (byte & 0x7e) != 0) return false;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

bool ProtoReader::Next(ProtoField* field) {
  if (error_ || pos_ >= data_.size()) return false;
  uint64_t key = 0;
  if (!ReadVarint(&key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) {
    error_ = true;
    return false;
  }
  field->field_number = static_cast<uint32_t>(key >> 3);
  field->number = 0;
  field->bytes = {};
  switch (key & 7) {
    case 0:
      field->wire_type = WireType::kVarint;
      if (!ReadVarint(&field->number)) error_ = true;
      break;
    case 1:
      field->wire_type = WireType::kFixed64;
      if (data_.size() - pos_ < 8) {
        error_ = true;
      } else {
        uint64_t v = 0;
        for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
        field->number = v;
        pos_ += 8;
      }
      break;
    case 2: {
      field->wire_type = WireType::kLengthDelimited;
      uint64_t len = 0;
      if (!ReadVarint(&len) || len > data_.size() - pos_) {
        error_ = true;
      } else {
        field->bytes = data_.substr(pos_, static_cast<size_t>(len));
        pos_ += static_cast<size_t>(len);
      }
      break;
    }
    case 5:
      field->wire_type = WireType::kFixed32;
      if (data_.size() - pos_ < 4) {
        error_ = true;
      } else {
        uint32_t v = 0;
        for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
        field->number = v;
        pos_ += 4;
      }
      break;
    default:  // groups (3, 4) and the undefined types 6, 7
      error_ = true;
      break;
  }
  return !error_;
}

double AsDouble(uint64_t raw) {
  double d;
  static_assert(sizeof(d) == sizeof(raw));
  std::memcpy(&d, &raw, sizeof(d));
  return d;
}

}  // namespace inferscope::agent::otlp
