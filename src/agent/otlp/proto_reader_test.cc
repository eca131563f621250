// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agent/otlp/proto_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "src/agent/otlp/otlp_test_util.h"

namespace inferscope::agent::otlp {
namespace {

using testing::DoubleField;
using testing::Fixed64Field;
using testing::LenField;
using testing::VarintField;

TEST(ProtoReaderTest, ReadsEveryWireType) {
  std::string msg = VarintField(1, 300) + Fixed64Field(7, 0x0102030405060708ull) +
                    LenField(5, "llm_request") + DoubleField(4, 0.25);
  // fixed32 field 16 = 0xdeadbeef, little endian.
  msg += testing::Tag(16, 5) + std::string("\xef\xbe\xad\xde", 4);
  ProtoReader r(msg);
  ProtoField f;
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.field_number, 1u);
  EXPECT_EQ(f.wire_type, WireType::kVarint);
  EXPECT_EQ(f.number, 300u);
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.field_number, 7u);
  EXPECT_EQ(f.wire_type, WireType::kFixed64);
  EXPECT_EQ(f.number, 0x0102030405060708ull);
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.wire_type, WireType::kLengthDelimited);
  EXPECT_EQ(f.bytes, "llm_request");
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(AsDouble(f.number), 0.25);
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.field_number, 16u);
  EXPECT_EQ(f.wire_type, WireType::kFixed32);
  EXPECT_EQ(f.number, 0xdeadbeefu);
  EXPECT_FALSE(r.Next(&f));
  EXPECT_FALSE(r.error());
}

TEST(ProtoReaderTest, NegativeInt64IsTenByteVarint) {
  std::string msg = VarintField(3, static_cast<uint64_t>(int64_t{-5}));
  EXPECT_EQ(msg.size(), 11u);
  ProtoReader r(msg);
  ProtoField f;
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(AsInt64(f.number), -5);
}

TEST(ProtoReaderTest, RejectsMalformedInput) {
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
       }) {
    ProtoReader r(bad);
    ProtoField f;
    while (r.Next(&f)) {
    }
    EXPECT_TRUE(r.error()) << testing::LenField(1, bad).size();
  }
}

TEST(ProtoReaderTest, EmptyMessageIsValid) {
  ProtoReader r("");
  ProtoField f;
  EXPECT_FALSE(r.Next(&f));
  EXPECT_FALSE(r.error());
}

}  // namespace
}  // namespace inferscope::agent::otlp
