// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/wire/capture_codec.h"

#include <gtest/gtest.h>

#include <string>

#include "src/wire/framing.h"
#include "src/wire/wire_buffer.h"

namespace inferscope::wire {
namespace {

TEST(CaptureCodecTest, RequestAndEndRoundTrip) {
  CaptureRequest req{7, 1'700'000'000'123'456'789, 2'000'000'000, 64u << 20, 1'000'000, true};
  std::string payload;
  EncodeCaptureRequest(req, &payload);
  auto back = DecodeCaptureRequest(payload);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, req);

  CaptureEnd end;
  end.capture_id = 7;
  end.events = 12345;
  end.bytes = 99999;
  end.chunks = 3;
  end.cap_hit = CaptureCap::kEvents;
  end.records_lost = 17;
  end.chunks_dropped = 1;
  end.refused = "";
  end.events_dropped = 4321;
  end.buffers_refused = 5;
  end.chunk_bytes_dropped = 1 << 20;
  payload.clear();
  EncodeCaptureEnd(end, &payload);
  auto end_back = DecodeCaptureEnd(payload);
  ASSERT_TRUE(end_back.ok());
  EXPECT_EQ(*end_back, end);
}

// An older process's end has no drop fields (9-11): they read as 0, the rest as sent. A newer
// end's unknown fields are skipped by this reader in the same way (fields beyond 11).
TEST(CaptureCodecTest, EndWithoutTheOptionalDropFieldsDecodes) {
  std::string payload;
  WireWriter w(&payload);
  w.U(1, 7);
  w.U(2, 100);
  w.U(5, 1);
  w.U(6, 3);
  w.U(40, 99);  // a field of a future process
  auto end = DecodeCaptureEnd(payload);
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(end->capture_id, 7u);
  EXPECT_EQ(end->events, 100u);
  EXPECT_EQ(end->cap_hit, CaptureCap::kBytes);
  EXPECT_EQ(end->records_lost, 3u);
  EXPECT_EQ(end->events_dropped, 0u);
  EXPECT_EQ(end->buffers_refused, 0u);
  EXPECT_EQ(end->chunk_bytes_dropped, 0u);
  // A drop count of the wrong wire type is corrupt, as for the older fields.
  std::string bad;
  WireWriter b(&bad);
  b.U(1, 7);
  b.Str(9, "x");
  EXPECT_EQ(DecodeCaptureEnd(bad).status().code(), base::StatusCode::kDataLoss);
}

TEST(CaptureCodecTest, ARequestWithoutDurationIsRefused) {
  std::string payload;
  EncodeCaptureRequest(CaptureRequest{1, 5, 0, 1, 1}, &payload);
  EXPECT_EQ(DecodeCaptureRequest(payload).status().code(), base::StatusCode::kDataLoss);
}

TEST(CaptureCodecTest, ChunkRoundTripsEveryKindWithDeltasAndDefaults) {
  CaptureChunkWriter w;
  w.Begin(9, 4);
  w.Name(0, "cudaLaunchKernel");  // id 0 is a real id
  w.Name(5, "_Z6kernelv");
  model::ApiCallEvent a;
  a.start_ns = 1'700'000'000'000'000'000;
  a.end_ns = a.start_ns + 5'000;
  a.tid = 4242;
  a.name = 0;
  a.correlation_id = 11;
  a.kind = model::ApiKind::kKernelLaunch;
  w.ApiCall(a);
  model::KernelEvent k;
  k.start_ns = a.start_ns + 9'000;
  k.end_ns = k.start_ns + 120'000;
  k.device = 0;
  k.stream = 7;
  k.name = 5;
  k.correlation_id = 11;
  k.graph_id = 3;
  k.grid[0] = 128;
  k.grid[1] = 1;
  k.grid[2] = 1;
  k.block[0] = 256;
  k.block[1] = 1;
  k.block[2] = 1;
  w.Kernel(k);
  model::MemcpyEvent m;
  m.start_ns = a.start_ns - 1'000;  // earlier than the previous event: a negative delta
  m.end_ns = m.start_ns + 300;
  m.device = 1;
  m.stream = 0;
  m.bytes = 1 << 20;
  m.kind = model::MemcpyKind::kDtoH;
  m.pageable = true;
  w.Memcpy(m);
  model::MemsetEvent s;
  s.start_ns = k.end_ns;
  s.end_ns = s.start_ns + 10;
  s.bytes = 64;
  w.Memset(s);
  model::SyncEvent y;  // device/stream unknown: the defaults must survive
  y.start_ns = k.start_ns;
  y.end_ns = k.end_ns;
  y.tid = 4242;
  y.type = model::SyncType::kStream;
  w.Sync(y);
  model::SyncEvent y0 = y;  // device 0, stream 0: not the defaults
  y0.device = 0;
  y0.stream = 0;
  w.Sync(y0);
  const std::string payload = w.Take();

  auto c = DecodeCaptureChunk(payload);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->capture_id, 9u);
  EXPECT_EQ(c->sequence, 4u);
  ASSERT_EQ(c->names.size(), 2u);
  EXPECT_EQ(c->names[0].first, 0u);
  EXPECT_EQ(c->names[0].second, "cudaLaunchKernel");
  ASSERT_EQ(c->api_calls.size(), 1u);
  EXPECT_EQ(c->api_calls[0].start_ns, a.start_ns);
  EXPECT_EQ(c->api_calls[0].end_ns, a.end_ns);
  EXPECT_EQ(c->api_calls[0].name, 0u);
  EXPECT_EQ(c->api_calls[0].tid, 4242u);
  EXPECT_EQ(c->api_calls[0].kind, model::ApiKind::kKernelLaunch);
  EXPECT_EQ(c->api_calls[0].device, model::kUnknownDevice);
  ASSERT_EQ(c->kernels.size(), 1u);
  const auto& kb = c->kernels[0];
  EXPECT_EQ(kb.start_ns, k.start_ns);
  EXPECT_EQ(kb.end_ns, k.end_ns);
  EXPECT_EQ(kb.stream, 7u);
  EXPECT_EQ(kb.name, 5u);
  EXPECT_EQ(kb.graph_id, 3u);
  EXPECT_EQ(kb.grid[0], 128);
  EXPECT_EQ(kb.block[0], 256);
  ASSERT_EQ(c->memcpys.size(), 1u);
  EXPECT_EQ(c->memcpys[0].start_ns, m.start_ns);
  EXPECT_EQ(c->memcpys[0].kind, model::MemcpyKind::kDtoH);
  EXPECT_TRUE(c->memcpys[0].pageable);
  EXPECT_EQ(c->memcpys[0].device, 1u);
  ASSERT_EQ(c->memsets.size(), 1u);
  EXPECT_EQ(c->memsets[0].end_ns, s.end_ns);
  ASSERT_EQ(c->syncs.size(), 2u);
  EXPECT_EQ(c->syncs[0].device, model::kUnknownDevice);
  EXPECT_EQ(c->syncs[0].stream, model::kUnknownStream);
  EXPECT_EQ(c->syncs[1].device, 0u);
  EXPECT_EQ(c->syncs[1].stream, 0u);
  EXPECT_EQ(c->syncs[1].type, model::SyncType::kStream);
}

TEST(CaptureCodecTest, ARepeatedKernelCostsAboutTwentyBytes) {
  CaptureChunkWriter w;
  w.Begin(1, 0);
  model::KernelEvent k;
  k.start_ns = 1'700'000'000'000'000'000;
  k.stream = 7;
  k.name = 12;
  k.grid[0] = 128;
  k.grid[1] = k.grid[2] = 1;
  k.block[0] = 256;
  k.block[1] = k.block[2] = 1;
  w.Kernel(k);
  const size_t first = w.size();
  for (int i = 0; i < 1000; ++i) {
    k.start_ns += 15'000;
    k.end_ns = k.start_ns + 11'000;
    k.correlation_id = 100'000 + i;
    w.Kernel(k);
  }
  // Tag and length 2, start delta 4, duration 4, stream 2, name 2, correlation 4, grid 6, block 6.
  EXPECT_LE((w.size() - first) / 1000, 30u);
}

TEST(CaptureCodecTest, CorruptChunksAreDataLossNotCrashes) {
  CaptureChunkWriter w;
  w.Begin(1, 0);
  model::KernelEvent k;
  k.start_ns = 100;
  k.end_ns = 200;
  k.name = 3;
  w.Kernel(k);
  const std::string payload = w.Take();
  for (size_t cut = 1; cut < payload.size(); ++cut) {
    auto c = DecodeCaptureChunk(payload.substr(0, cut));
    EXPECT_FALSE(c.ok() && c->kernels.size() == 1 && c->kernels[0].end_ns == 200) << cut;
  }
  EXPECT_EQ(DecodeCaptureChunk(std::string(kMaxCaptureChunkBytes + 1, '\0')).status().code(),
            base::StatusCode::kDataLoss);
  // A kernel whose field has the wrong wire type.
  std::string bad = "\x22\x02\x1a\x00";  // field 4 (kernel) {field 3 as bytes, length 0}
  EXPECT_EQ(DecodeCaptureChunk(bad).status().code(), base::StatusCode::kDataLoss);
}

TEST(CaptureCodecTest, UnknownFieldsAndKindsAreSkipped) {
  CaptureChunkWriter w;
  w.Begin(2, 1);
  model::KernelEvent k;
  k.start_ns = 10;
  k.end_ns = 20;
  w.Kernel(k);
  std::string payload = w.Take();
  payload += "\x4a\x01\x08";  // field 9 (a newer kind) {field 1 = ...}: skipped
  payload += "\x78\x05";      // field 15 varint: skipped
  auto c = DecodeCaptureChunk(payload);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->kernels.size(), 1u);
}

}  // namespace
}  // namespace inferscope::wire
