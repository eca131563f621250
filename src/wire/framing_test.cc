// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/wire/framing.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "src/wire/test_windows.h"
#include "src/wire/window_codec.h"

namespace inferscope::wire {
namespace {

std::string Stream(std::vector<Frame>* frames) {
  Hello hello;
  hello.pid = 1234;
  hello.rank = 3;
  hello.local_rank = 1;
  hello.world_size = 8;
  hello.hostname = "gpu-node-17";
  hello.tool_version = "0.1.0";
  hello.process_start_unix_ns = 1'760'000'000'123'456'789;
  std::string hello_payload;
  EncodeHello(hello, &hello_payload);
  std::string window_payload;
  EncodeWindow(testing::FullWindow(), &window_payload);

  std::string out;
  frames->clear();
  auto add = [&](FrameType type, const std::string& payload) {
    EXPECT_TRUE(FrameWriter::Append(type, payload, &out).ok());
    frames->push_back(Frame{static_cast<uint16_t>(type), payload});
  };
  add(FrameType::kHello, hello_payload);
  add(FrameType::kWindow, window_payload);
  add(FrameType::kWindow, "");
  add(FrameType::kWindow, window_payload);
  add(FrameType::kGoodbye, "");
  return out;
}

std::vector<Frame> ReadAll(const std::string& stream, size_t chunk, FrameReader* reader) {
  std::vector<Frame> got;
  for (size_t i = 0; i < stream.size(); i += chunk) {
    reader->Append(std::string_view(stream).substr(i, chunk));
    Frame f;
    while (reader->Next(&f)) got.push_back(f);
    EXPECT_LE(reader->buffered_bytes(), kFrameHeaderBytes + kMaxFramePayloadBytes + chunk);
  }
  return got;
}

TEST(FramingTest, ReassemblesFramesSplitAnywhere) {
  std::vector<Frame> frames;
  const std::string stream = Stream(&frames);
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{3}, size_t{15}, size_t{16}, size_t{17},
                       size_t{1000}, stream.size()}) {
    FrameReader reader;
    const std::vector<Frame> got = ReadAll(stream, chunk, &reader);
    ASSERT_TRUE(reader.status().ok()) << reader.status().message();
    ASSERT_EQ(got.size(), frames.size()) << "chunk " << chunk;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].type, frames[i].type);
      EXPECT_EQ(got[i].payload, frames[i].payload);
    }
    EXPECT_EQ(reader.buffered_bytes(), 0u);
  }
}

TEST(FramingTest, OneByteAtATimeThenDecodes) {
  std::vector<Frame> frames;
  const std::string stream = Stream(&frames);
  FrameReader reader;
  const std::vector<Frame> got = ReadAll(stream, 1, &reader);
  ASSERT_EQ(got.size(), 5u);
  auto hello = DecodeHello(got[0].payload);
  ASSERT_TRUE(hello.ok()) << hello.status().message();
  EXPECT_EQ(hello->hostname, "gpu-node-17");
  EXPECT_EQ(hello->rank, 3);
  EXPECT_EQ(hello->local_rank, 1);
  EXPECT_EQ(hello->world_size, 8);
  EXPECT_EQ(hello->process_start_unix_ns, 1'760'000'000'123'456'789);
  EXPECT_EQ(hello->protocol_version, kFramingVersion);
  auto window = DecodeWindow(got[1].payload);
  ASSERT_TRUE(window.ok());
  EXPECT_TRUE(*window == testing::FullWindow());
}

TEST(FramingTest, BadMagicIsFatal) {
  std::vector<Frame> frames;
  std::string stream = Stream(&frames);
  stream[0] = 'X';
  FrameReader reader;
  EXPECT_TRUE(ReadAll(stream, 7, &reader).empty());
  EXPECT_EQ(reader.status().code(), base::StatusCode::kDataLoss);
  EXPECT_NE(reader.status().message().find("magic"), std::string::npos);
  // Stays failed.
  std::vector<Frame> more;
  reader.Append(Stream(&more));
  Frame f;
  EXPECT_FALSE(reader.Next(&f));
  EXPECT_TRUE(reader.failed());
}

TEST(FramingTest, OversizedFrameIsRejectedFromTheHeader) {
  std::string stream;
  ASSERT_TRUE(FrameWriter::Append(FrameType::kWindow, "abc", &stream).ok());
  const uint32_t huge = kMaxFramePayloadBytes + 1;
  for (int i = 0; i < 4; ++i) stream[8 + i] = static_cast<char>((huge >> (8 * i)) & 0xff);
  FrameReader reader;
  reader.Append(std::string_view(stream).substr(0, kFrameHeaderBytes));
  Frame f;
  EXPECT_FALSE(reader.Next(&f));
  EXPECT_NE(reader.status().message().find("exceeds"), std::string::npos);

  std::string out;
  EXPECT_FALSE(
      FrameWriter::Append(FrameType::kWindow, std::string(kMaxFramePayloadBytes + 1, 'x'), &out)
          .ok());
  EXPECT_TRUE(out.empty());
}

TEST(FramingTest, CorruptPayloadFailsCrc) {
  std::vector<Frame> frames;
  std::string stream = Stream(&frames);
  stream[kFrameHeaderBytes + 3] ^= 0x10;  // inside the hello payload
  FrameReader reader;
  EXPECT_TRUE(ReadAll(stream, 5, &reader).empty());
  EXPECT_NE(reader.status().message().find("CRC"), std::string::npos);
}

TEST(FramingTest, NewerFramingVersionIsUnsupported) {
  std::string stream;
  ASSERT_TRUE(FrameWriter::Append(FrameType::kGoodbye, "", &stream).ok());
  stream[4] = 2;
  FrameReader reader;
  reader.Append(stream);
  Frame f;
  EXPECT_FALSE(reader.Next(&f));
  EXPECT_EQ(reader.status().code(), base::StatusCode::kUnsupported);
}

TEST(FramingTest, UnknownFrameTypesAreDelivered) {
  std::string stream;
  ASSERT_TRUE(FrameWriter::Append(static_cast<FrameType>(77), "x", &stream).ok());
  FrameReader reader;
  reader.Append(stream);
  Frame f;
  ASSERT_TRUE(reader.Next(&f));
  EXPECT_EQ(f.type, 77);
}

TEST(HelloTest, RoundTripAndCorruption) {
  Hello h;
  h.pid = UINT32_MAX;
  h.rank = 0;  // rank 0 must survive (not confused with "absent")
  h.local_rank = 0;
  h.world_size = 1;
  h.hostname = std::string(kMaxHelloHostnameBytes, 'h');  // the longest kept whole
  h.tool_version = "1.2.3-dirty";
  h.process_start_unix_ns = -5;
  std::string bytes;
  EncodeHello(h, &bytes);
  auto d = DecodeHello(bytes);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(*d == h);
  for (size_t n = 1; n < bytes.size(); ++n) {
    auto t = DecodeHello(std::string_view(bytes).substr(0, n));
    if (!t.ok()) {
      EXPECT_EQ(t.status().code(), base::StatusCode::kDataLoss);
    }
  }
  std::mt19937 rng(3);
  for (int i = 0; i < 5000; ++i) {
    std::string bad = bytes;
    bad[rng() % bad.size()] = static_cast<char>(rng());
    (void)DecodeHello(bad);
  }
}

// A local process may send any string: each is cut to its bound, never split inside a character,
// and the rest of the hello still decodes.
TEST(HelloTest, LongStringsAreCutToTheirBounds) {
  Hello h;
  h.pid = 42;
  h.hostname = "\xc3\xa9" + std::string(15u << 20, 'h');  // 15 MiB, starting with a 2-byte 'e'
  h.tool_version = std::string(1000, 'v');
  h.cupti_path = std::string(kMaxHelloPathBytes - 1, 'p') + "\xc3\xa9";  // the cut falls inside
  h.profiling_off_reason = std::string(5000, 'r');
  h.cupti_release = "12.4";
  std::string bytes;
  EncodeHello(h, &bytes);
  auto d = DecodeHello(bytes);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->pid, 42u);
  EXPECT_EQ(d->hostname.size(), kMaxHelloHostnameBytes);
  EXPECT_EQ(d->hostname.substr(0, 3), "\xc3\xa9h");
  EXPECT_EQ(d->tool_version, std::string(kMaxHelloVersionBytes, 'v'));
  EXPECT_EQ(d->cupti_path, std::string(kMaxHelloPathBytes - 1, 'p'));  // not half a character
  EXPECT_EQ(d->profiling_off_reason.size(), kMaxHelloReasonBytes);
  EXPECT_EQ(d->cupti_release, "12.4");
}

}  // namespace
}  // namespace inferscope::wire
