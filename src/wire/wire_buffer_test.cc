// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/wire/wire_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace inferscope::wire {
namespace {

// Hand-built fields, independent of WireWriter, so the reader is checked against the format.
std::string Key(uint32_t field, int wire_type) {
  std::string s;
  WireWriter(&s).Varint((uint64_t{field} << 3) | static_cast<uint64_t>(wire_type));
  return s;
}
std::string VarintField(uint32_t field, uint64_t v) {
  std::string s = Key(field, 0);
  WireWriter(&s).Varint(v);
  return s;
}
std::string Fixed64Field(uint32_t field, uint64_t v) {
  std::string s = Key(field, 1);
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}
std::string LenField(uint32_t field, std::string_view bytes) {
  std::string s = Key(field, 2);
  WireWriter(&s).Varint(bytes.size());
  s.append(bytes);
  return s;
}

TEST(WireReaderTest, NextFieldReadsEveryWireType) {
  double quarter = 0.25;
  uint64_t quarter_bits;
  std::memcpy(&quarter_bits, &quarter, 8);
  std::string msg = VarintField(1, 300) + Fixed64Field(7, 0x0102030405060708ull) +
                    LenField(5, "llm_request") + Fixed64Field(4, quarter_bits);
  // fixed32 field 16 = 0xdeadbeef, little endian.
  msg += Key(16, 5) + std::string("\xef\xbe\xad\xde", 4);
  WireReader r(msg);
  WireField f;
  ASSERT_TRUE(r.NextField(&f));
  EXPECT_EQ(f.number, 1u);
  EXPECT_EQ(f.type, WireType::kVarint);
  EXPECT_EQ(f.value, 300u);
  ASSERT_TRUE(r.NextField(&f));
  EXPECT_EQ(f.number, 7u);
  EXPECT_EQ(f.type, WireType::kFixed64);
  EXPECT_EQ(f.value, 0x0102030405060708ull);
  ASSERT_TRUE(r.NextField(&f));
  EXPECT_EQ(f.type, WireType::kBytes);
  EXPECT_EQ(f.bytes, "llm_request");
  ASSERT_TRUE(r.NextField(&f));
  EXPECT_EQ(AsDouble(f.value), 0.25);
  ASSERT_TRUE(r.NextField(&f));
  EXPECT_EQ(f.number, 16u);
  EXPECT_EQ(f.type, WireType::kFixed32);
  EXPECT_EQ(f.value, 0xdeadbeefu);
  EXPECT_FALSE(r.NextField(&f));
  EXPECT_TRUE(r.ok());
}

TEST(WireReaderTest, NegativeInt64IsTenByteVarint) {
  std::string msg = VarintField(3, static_cast<uint64_t>(int64_t{-5}));
  EXPECT_EQ(msg.size(), 11u);
  WireReader r(msg);
  WireField f;
  ASSERT_TRUE(r.NextField(&f));
  EXPECT_EQ(AsInt64(f.value), -5);
}

TEST(WireReaderTest, NextFieldRejectsMalformedInput) {
  for (std::string bad : {
           std::string("\x08", 1),          // varint value missing
           std::string("\x08\x80\x80", 3),  // truncated varint
           std::string("\x2a\x05"
                       "abc",
                       5),                                                   // length past the end
           std::string("\x09\x01\x02", 3),                                   // truncated fixed64
           std::string("\x0d\x01", 2),                                       // truncated fixed32
           std::string("\x00\x01", 2),                                       // field number 0
           std::string("\x0b", 1),                                           // start group
           std::string("\x0e", 1),                                           // wire type 6
           std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11),  // varint > 64 bits
           std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81", 11),  // 10th byte > 1
       }) {
    WireReader r(bad);
    WireField f;
    while (r.NextField(&f)) {
    }
    EXPECT_FALSE(r.ok()) << LenField(1, bad).size();
  }
}

TEST(WireReaderTest, EmptyMessageIsValid) {
  WireReader r("");
  WireField f;
  EXPECT_FALSE(r.NextField(&f));
  EXPECT_TRUE(r.ok());
}

}  // namespace
}  // namespace inferscope::wire
