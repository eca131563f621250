// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A small streaming JSON writer. Hand-written rather than nlohmann::json because the report needs
// keys in a fixed documented order, invalid UTF-8 in kernel names replaced (not an exception), and
// non-finite doubles written as 0; it is ~150 lines and has no dependency but fmt.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::base {

// Writes pretty-printed JSON (2-space indent). Misuse (a value without a key inside an object) is
// a programming error caught by tests, not by the writer.
class JsonWriter {
 public:
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  JsonWriter& Key(std::string_view key);  // inside an object, before each value
  void String(std::string_view value);
  void Int(int64_t value);
  void UInt(uint64_t value);
  void Double(double value);  // rounded to 4 decimals; NaN/inf become 0
  void Bool(bool value);
  void Null();

  const std::string& str() const { return out_; }

  // `s` as a JSON string literal with quotes (escapes, invalid UTF-8 replaced by U+FFFD).
  static std::string Quote(std::string_view s);

 private:
  void BeforeValue();
  void Newline();

  std::string out_;
  struct Level {
    bool array = false;
    bool empty = true;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace inferscope::base
