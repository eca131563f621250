// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/event_capture.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/wire/capture_codec.h"
#include "src/wire/framing.h"

namespace inferscope::inject {
namespace {

constexpr int64_t kStart = 1'700'000'000'000'000'000;
constexpr int64_t kSecond = 1'000'000'000;

// Decodes the frames a Poll returned: the chunks' events and the end.
struct Received {
  std::vector<wire::CaptureChunk> chunks;
  std::vector<wire::CaptureEnd> ends;
  size_t kernels() const {
    size_t n = 0;
    for (const auto& c : chunks) n += c.kernels.size();
    return n;
  }
};
Received Decode(const std::vector<std::string>& frames) {
  Received r;
  wire::FrameReader reader;
  for (const auto& f : frames) reader.Append(f);
  wire::Frame frame;
  while (reader.Next(&frame)) {
    if (frame.type == static_cast<uint16_t>(wire::FrameType::kCaptureChunk)) {
      auto c = wire::DecodeCaptureChunk(frame.payload);
      EXPECT_TRUE(c.ok());
      if (c.ok()) r.chunks.push_back(*c);
    } else if (frame.type == static_cast<uint16_t>(wire::FrameType::kCaptureEnd)) {
      auto e = wire::DecodeCaptureEnd(frame.payload);
      EXPECT_TRUE(e.ok());
      if (e.ok()) r.ends.push_back(*e);
    }
  }
  EXPECT_FALSE(reader.failed());
  return r;
}

model::KernelEvent Kernel(int64_t start_ns, model::NameId name) {
  model::KernelEvent k;
  k.start_ns = start_ns;
  k.end_ns = start_ns + 1000;
  k.name = name;
  k.stream = 7;
  return k;
}

TEST(EventCaptureTest, RecordsOnlyTheSpanAndEndsAfterItSettles) {
  model::NameTable names;
  const model::NameId gemm = names.Intern("gemm");
  EventCapture rec(&names);
  EXPECT_FALSE(rec.Wants(kStart));  // nothing requested
  rec.Request({1, kStart, kSecond, 1 << 20, 1000});
  EXPECT_FALSE(rec.Wants(kStart - 1));
  EXPECT_TRUE(rec.Wants(kStart));
  EXPECT_FALSE(rec.Wants(kStart + kSecond));
  for (int i = 0; i < 10; ++i) rec.Add(Kernel(kStart + i * 1000, gemm));
  rec.NoteLostRecords(5, 2);
  std::vector<std::string> frames;
  rec.Poll(kStart + kSecond, kSecond, &frames);  // the span is over but not settled
  EXPECT_TRUE(frames.empty());
  EXPECT_TRUE(rec.active());
  rec.Add(Kernel(kStart + 999'999'000, gemm));  // a late record of the span still counts
  rec.NoteLostRecords(8, 3);
  rec.Poll(kStart + 2 * kSecond, kSecond, &frames);
  EXPECT_FALSE(rec.active());
  const Received r = Decode(frames);
  ASSERT_EQ(r.ends.size(), 1u);
  EXPECT_EQ(r.ends[0].capture_id, 1u);
  EXPECT_EQ(r.ends[0].events, 11u);
  EXPECT_EQ(r.ends[0].cap_hit, wire::CaptureCap::kNone);
  EXPECT_EQ(r.ends[0].records_lost, 3u);
  EXPECT_EQ(r.ends[0].buffers_refused, 1u);  // of the 3: one buffer the empty pool refused
  EXPECT_EQ(r.ends[0].events_dropped, 0u);
  EXPECT_EQ(r.ends[0].chunks_dropped, 0u);
  EXPECT_EQ(r.kernels(), 11u);
  ASSERT_EQ(r.chunks.size(), 1u);
  ASSERT_EQ(r.chunks[0].names.size(), 1u);  // the name once, not per kernel
  EXPECT_EQ(r.chunks[0].names[0].second, "gemm");
  EXPECT_FALSE(rec.Wants(kStart));
}

TEST(EventCaptureTest, TheEventCapStopsRecordingAndIsReported) {
  model::NameTable names;
  EventCapture rec(&names);
  rec.Request({2, kStart, kSecond, 1 << 20, 4});
  for (int i = 0; i < 10; ++i)
    if (rec.Wants(kStart + i)) rec.Add(Kernel(kStart + i, model::kNoName));
  std::vector<std::string> frames;
  rec.Poll(kStart + 3 * kSecond, kSecond, &frames);
  const Received r = Decode(frames);
  ASSERT_EQ(r.ends.size(), 1u);
  EXPECT_EQ(r.ends[0].events, 4u);
  EXPECT_EQ(r.ends[0].cap_hit, wire::CaptureCap::kEvents);
  EXPECT_EQ(r.ends[0].events_dropped, 6u);  // the span's events past the cap, counted
  EXPECT_EQ(r.kernels(), 4u);
}

TEST(EventCaptureTest, TheByteCapBoundsMemoryAndChunksAreSealedAsTheyFill) {
  model::NameTable names;
  const model::NameId k = names.Intern("k");
  EventCapture rec(&names);
  const uint64_t cap = 3 * wire::kCaptureChunkTargetBytes;
  rec.Request({3, kStart, kSecond, cap, 100'000'000});
  std::vector<std::string> frames;
  size_t most_held = 0;
  uint64_t added = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    const int64_t t = kStart + i * 100;
    if (!rec.Wants(t)) break;
    rec.Add(Kernel(t, k));
    ++added;
    most_held = std::max(most_held, rec.held_bytes());
    if (i % 10'000 == 0) rec.Poll(kStart, kSecond, &frames);  // the drain thread's ticks
  }
  rec.Poll(kStart + 3 * kSecond, kSecond, &frames);
  size_t total = 0;
  for (const auto& f : frames) total += f.size();
  EXPECT_LE(total, cap + 64 * 1024);  // payloads at the cap, plus frame headers and the end
  EXPECT_LE(most_held, wire::kCaptureChunkTargetBytes + 128);
  const Received r = Decode(frames);
  ASSERT_EQ(r.ends.size(), 1u);
  EXPECT_EQ(r.ends[0].cap_hit, wire::CaptureCap::kBytes);
  EXPECT_GE(r.chunks.size(), 3u);
  EXPECT_EQ(r.kernels(), r.ends[0].events);
  EXPECT_LT(r.ends[0].events, added + 1);
  EXPECT_EQ(r.ends[0].events + r.ends[0].events_dropped, added);
}

TEST(EventCaptureTest, ChunksTheConnectionRefusesAreCountedAndTheEndStillGoes) {
  model::NameTable names;
  const model::NameId k = names.Intern("k");
  EventCapture rec(&names);
  rec.Request({6, kStart, kSecond, 64u << 20, 100'000'000});
  for (int i = 0; i < 200'000; ++i) rec.Add(Kernel(kStart + i * 1000, k));
  // A backed-up connection: every chunk is refused, anything else (the end) is taken.
  std::vector<std::string> taken;
  uint64_t refused = 0, refused_bytes = 0;
  auto sink = [&](std::string&& f, bool chunk) {
    wire::FrameReader reader;
    reader.Append(f);
    wire::Frame frame;
    EXPECT_TRUE(reader.Next(&frame));
    EXPECT_EQ(chunk, frame.type == static_cast<uint16_t>(wire::FrameType::kCaptureChunk));
    if (chunk) {
      ++refused;
      refused_bytes += f.size();
      return false;
    }
    taken.push_back(std::move(f));
    return true;
  };
  rec.Poll(kStart, kSecond, sink);
  rec.Poll(kStart + 3 * kSecond, kSecond, sink);
  EXPECT_FALSE(rec.active());
  ASSERT_GE(refused, 2u);
  const Received r = Decode(taken);
  ASSERT_EQ(r.ends.size(), 1u);
  EXPECT_EQ(r.ends[0].events, 200'000u);
  EXPECT_EQ(r.ends[0].chunks_dropped, refused);
  EXPECT_EQ(r.ends[0].chunk_bytes_dropped, refused_bytes);
  EXPECT_EQ(r.ends[0].cap_hit, wire::CaptureCap::kNone);
}

TEST(EventCaptureTest, ASecondRequestWhileOneRunsIsRefusedNotMixedIn) {
  model::NameTable names;
  EventCapture rec(&names);
  rec.Request({4, kStart, kSecond, 1 << 20, 100});
  rec.Request({5, kStart, kSecond, 1 << 20, 100});
  std::vector<std::string> frames;
  rec.Poll(kStart, kSecond, &frames);
  const Received r = Decode(frames);
  ASSERT_EQ(r.ends.size(), 1u);
  EXPECT_EQ(r.ends[0].capture_id, 5u);
  EXPECT_NE(r.ends[0].refused.find("capture 4 is still running"), std::string::npos);
  EXPECT_TRUE(rec.active());
}

}  // namespace
}  // namespace inferscope::inject
