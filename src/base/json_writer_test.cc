// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/json_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <limits>

namespace inferscope::base {
namespace {

TEST(JsonWriterTest, EscapesStrings) {
  EXPECT_EQ(JsonWriter::Quote("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\u0001\"");
  EXPECT_EQ(JsonWriter::Quote("caf\xC3\xA9"), "\"caf\xC3\xA9\"");
  // Invalid UTF-8 (a lone continuation byte, a truncated sequence, an overlong '/') is replaced.
  EXPECT_EQ(JsonWriter::Quote("x\x80y"), "\"x\xEF\xBF\xBDy\"");
  EXPECT_EQ(JsonWriter::Quote("x\xE2\x82"), "\"x\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(JsonWriter::Quote("\xC0\xAF"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST(JsonWriterTest, WritesNestedDocumentThatParses) {
  JsonWriter w;
  w.BeginObject();
  w.Key("a").Int(-3);
  w.Key("b").BeginArray();
  w.UInt(1);
  w.Double(2.5);
  w.Double(1.0 / 3.0);
  w.Double(std::numeric_limits<double>::quiet_NaN());
  w.EndArray();
  w.Key("empty_object").BeginObject();
  w.EndObject();
  w.Key("empty_array").BeginArray();
  w.EndArray();
  w.Key("s").String("bad \xff byte");
  w.Key("t").Bool(true);
  w.Key("n").Null();
  w.EndObject();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(w.str()).get(doc), simdjson::SUCCESS) << w.str();
  EXPECT_EQ(int64_t(doc["a"]), -3);
  simdjson::dom::array b = doc["b"];
  ASSERT_EQ(b.size(), 4u);
  EXPECT_DOUBLE_EQ(double(b.at(2)), 0.3333);
  EXPECT_DOUBLE_EQ(double(b.at(3)), 0.0);
  EXPECT_TRUE(doc["n"].is_null());
  EXPECT_NE(w.str().find("\"empty_object\": {}"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::base
