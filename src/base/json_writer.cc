// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/json_writer.h"

#include <fmt/format.h>

#include <cmath>

namespace inferscope::base {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not valid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Overlong encodings, surrogates and values past U+10FFFF are invalid.
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

std::string JsonWriter::Quote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD replacement character
        ++i;
      } else {
        out.append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

void JsonWriter::Newline() {
  out_ += '\n';
  out_.append(stack_.size() * 2, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!stack_.empty()) {
    if (!stack_.back().empty) out_ += ',';
    stack_.back().empty = false;
    Newline();
  }
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  if (!stack_.back().empty) out_ += ',';
  stack_.back().empty = false;
  Newline();
  out_ += Quote(key);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  stack_.push_back({false, true});
}

void JsonWriter::EndObject() {
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) Newline();
  out_ += '}';
  if (stack_.empty()) out_ += '\n';
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  stack_.push_back({true, true});
}

void JsonWriter::EndArray() {
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) Newline();
  out_ += ']';
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  out_ += Quote(value);
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
}

void JsonWriter::UInt(uint64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
}

void JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) value = 0;
  double rounded = std::round(value * 1e4) / 1e4;
  if (rounded == 0) rounded = 0;  // no "-0"
  // Shortest round-trip form; integral values keep a ".0" so readers see a float.
  std::string text = fmt::format("{}", rounded);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  out_ += text;
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

}  // namespace inferscope::base
