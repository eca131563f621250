// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agentd/capture.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <thread>

#include "src/wire/capture_codec.h"
#include "src/wire/framing.h"
#include "tests/temp_dir.h"

namespace inferscope::agentd {
namespace {

constexpr int64_t kNow = 1'700'000'000'000'000'000;

std::vector<CaptureTarget> TwoRanks() {
  return {{11, 100, 0, 2, true, {}}, {12, 101, 1, 2, true, {}}, {13, 102, -1, -1, false, {}}};
}

// The request frame's payload, decoded.
wire::CaptureRequest RequestOf(const std::string& frame) {
  wire::FrameReader r;
  r.Append(frame);
  wire::Frame f;
  EXPECT_TRUE(r.Next(&f));
  EXPECT_EQ(f.type, static_cast<uint16_t>(wire::FrameType::kCaptureRequest));
  auto req = wire::DecodeCaptureRequest(f.payload);
  EXPECT_TRUE(req.ok());
  return req.ok() ? *req : wire::CaptureRequest{};
}

std::string Chunk(uint64_t id, int kernels) {
  wire::CaptureChunkWriter w;
  w.Begin(id, 0);
  w.Name(3, "_Z4gemmv");
  for (int i = 0; i < kernels; ++i) {
    model::KernelEvent k;
    k.start_ns = kNow + 1'000'000'000 + i * 10'000;
    k.end_ns = k.start_ns + 5'000;
    k.name = 3;
    k.stream = 7;
    w.Kernel(k);
  }
  return w.Take();
}

std::string StateOf(CaptureManager& m, uint64_t id) {
  auto json = m.StatusJson(id);
  EXPECT_TRUE(json.ok());
  simdjson::dom::parser parser;
  std::string_view state;
  EXPECT_EQ(parser.parse(*json)["state"].get(state), simdjson::SUCCESS);
  return std::string(state);
}

void WaitDone(CaptureManager& m, uint64_t id) {
  for (int i = 0; i < 500 && StateOf(m, id) == "writing"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

TEST(CaptureManagerTest, AlignsEveryRankAndSplitsTheCapAndRefusesASecondCapture) {
  testing::TempDir dir;
  // captures/ was 0755 and the traces 0644 under the usual umask; they are
  // owner-only whatever the umask.
  const mode_t old_umask = ::umask(0);
  CaptureManager m(dir.path() + "/captures");
  CaptureSpec spec;
  spec.max_bytes = 64u << 20;
  auto id = m.Start(spec);
  ASSERT_TRUE(id.ok());
  auto second = m.Start(spec);
  EXPECT_EQ(second.status().code(), base::StatusCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find("one capture at a time"), std::string::npos);
  ASSERT_TRUE(m.HasPending());
  std::vector<std::pair<uint64_t, std::string>> frames;
  m.Dispatch(TwoRanks(), kNow, &frames);
  ASSERT_EQ(frames.size(), 2u);  // not the process whose profiling is off
  const auto a = RequestOf(frames[0].second), b = RequestOf(frames[1].second);
  EXPECT_EQ(a.start_unix_ns, kNow + CaptureManager::kLeadNs);
  EXPECT_EQ(a.start_unix_ns, b.start_unix_ns);  // one start for every rank
  EXPECT_EQ(a.max_bytes, (64u << 20) / 2);
  EXPECT_TRUE(m.Recording());
  EXPECT_EQ(m.TracePath(*id).status().code(), base::StatusCode::kUnavailable);

  std::string error;
  ASSERT_TRUE(
      m.OnFrame(11, static_cast<uint16_t>(wire::FrameType::kCaptureChunk), Chunk(*id, 50), &error));
  wire::CaptureEnd end;
  end.capture_id = *id;
  end.events = 50;
  std::string payload;
  wire::EncodeCaptureEnd(end, &payload);
  ASSERT_TRUE(m.OnFrame(11, static_cast<uint16_t>(wire::FrameType::kCaptureEnd), payload, &error));
  m.Poll(kNow + 2'000'000'000);
  EXPECT_EQ(StateOf(m, *id), "recording");  // rank 1 has not answered
  m.OnGone(12);                             // it exited
  m.Poll(kNow + 2'000'000'000);
  WaitDone(m, *id);
  EXPECT_EQ(StateOf(m, *id), "done");
  auto json = m.StatusJson(*id);
  EXPECT_NE(json->find("\"state\": \"exited\""), std::string::npos) << *json;
  EXPECT_NE(json->find("\"kernels\": 50"), std::string::npos) << *json;
  auto path = m.TracePath(*id);
  ASSERT_TRUE(path.ok());
  EXPECT_GT(std::filesystem::file_size(*path), 50u * 10);
  ::umask(old_umask);
  struct stat st {};
  ASSERT_EQ(::stat(path->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir.path() + "/captures").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(m.Start(spec).ok());  // the next capture may start
}

// --graph-nodes: every process must switch its tracing before the span, at the end of a drain
// cycle, which can take seconds on a loaded host: a longer lead.
TEST(CaptureManagerTest, AGraphNodesCaptureStartsFurtherAhead) {
  testing::TempDir dir;
  CaptureManager m(dir.path());
  CaptureSpec spec;
  spec.graph_nodes = true;
  ASSERT_TRUE(m.Start(spec).ok());
  std::vector<std::pair<uint64_t, std::string>> frames;
  m.Dispatch(TwoRanks(), kNow, &frames);
  ASSERT_EQ(frames.size(), 2u);
  const auto req = RequestOf(frames[0].second);
  EXPECT_TRUE(req.graph_nodes);
  EXPECT_EQ(req.start_unix_ns, kNow + CaptureManager::kGraphNodesLeadNs);
  EXPECT_GT(CaptureManager::kGraphNodesLeadNs, CaptureManager::kLeadNs);
}

TEST(CaptureManagerTest, NoMatchingProcessFailsWithAReason) {
  testing::TempDir dir;
  CaptureManager m(dir.path());
  CaptureSpec spec;
  spec.rank = 5;
  auto id = m.Start(spec);
  ASSERT_TRUE(id.ok());
  std::vector<std::pair<uint64_t, std::string>> frames;
  m.Dispatch(TwoRanks(), kNow, &frames);
  EXPECT_TRUE(frames.empty());
  EXPECT_EQ(StateOf(m, *id), "failed");
  EXPECT_NE(m.StatusJson(*id)->find("no profiled process of rank 5"), std::string::npos);
  EXPECT_TRUE(m.Start(spec).ok());
}

TEST(CaptureManagerTest, ChunksBeyondAProcesssShareAreRefusedAndSilentProcessesTimeOut) {
  testing::TempDir dir;
  CaptureManager m(dir.path());
  CaptureSpec spec;
  spec.max_bytes = 1u << 20;
  spec.pid = 100;
  auto id = m.Start(spec);
  std::vector<std::pair<uint64_t, std::string>> frames;
  m.Dispatch(TwoRanks(), kNow, &frames);
  ASSERT_EQ(frames.size(), 1u);
  std::string error;
  const std::string chunk = Chunk(*id, 40'000);  // ~0.5 MiB
  for (int i = 0; i < 6; ++i)
    ASSERT_TRUE(
        m.OnFrame(11, static_cast<uint16_t>(wire::FrameType::kCaptureChunk), chunk, &error));
  // A corrupt end drops the connection (false), a chunk over the limit too.
  EXPECT_FALSE(m.OnFrame(11, static_cast<uint16_t>(wire::FrameType::kCaptureEnd), "\xff", &error));
  EXPECT_FALSE(m.OnFrame(11, static_cast<uint16_t>(wire::FrameType::kCaptureChunk),
                         std::string(wire::kMaxCaptureChunkBytes + 1, 'x'), &error));
  m.Poll(kNow + 5'000'000'000);  // not overdue yet
  EXPECT_EQ(StateOf(m, *id), "recording");
  m.Poll(kNow + CaptureManager::kLeadNs + spec.duration_ns + CaptureManager::kGraceNs + 1);
  WaitDone(m, *id);
  auto json = m.StatusJson(*id);
  EXPECT_NE(json->find("\"state\": \"no answer\""), std::string::npos) << *json;
  // The one process's share is the whole cap, plus one chunk of slack; the rest is refused.
  const uint64_t fit = (spec.max_bytes + wire::kCaptureChunkTargetBytes) / chunk.size();
  ASSERT_LT(fit, 6u);
  EXPECT_NE(json->find("\"chunks_dropped\": " + std::to_string(6 - fit)), std::string::npos)
      << *json;
}

// What each process dropped and why reaches the status (and so the CLI): a cap, an exhausted
// buffer pool, CUPTI's own drops, chunks the process could not send.
TEST(CaptureManagerTest, TheStatusSaysPerProcessWhatWasDroppedAndWhy) {
  testing::TempDir dir;
  CaptureManager m(dir.path());
  auto id = m.Start(CaptureSpec{});
  ASSERT_TRUE(id.ok());
  std::vector<std::pair<uint64_t, std::string>> frames;
  m.Dispatch(TwoRanks(), kNow, &frames);
  ASSERT_EQ(frames.size(), 2u);
  std::string error, payload;
  wire::CaptureEnd end;
  end.capture_id = *id;
  end.events = 1000;
  end.cap_hit = wire::CaptureCap::kBytes;
  end.events_dropped = 41873;
  end.records_lost = 7;
  end.buffers_refused = 5;
  end.chunks_dropped = 2;
  end.chunk_bytes_dropped = 2u << 20;
  wire::EncodeCaptureEnd(end, &payload);
  ASSERT_TRUE(m.OnFrame(11, static_cast<uint16_t>(wire::FrameType::kCaptureEnd), payload, &error));
  // Rank 1 is an older process: its end has no drop fields, only records lost.
  wire::CaptureEnd old;
  old.capture_id = *id;
  old.records_lost = 3;
  payload.clear();
  wire::EncodeCaptureEnd(old, &payload);
  ASSERT_TRUE(m.OnFrame(12, static_cast<uint16_t>(wire::FrameType::kCaptureEnd), payload, &error));
  m.Poll(kNow + 4'000'000'000);
  WaitDone(m, *id);
  auto json = m.StatusJson(*id);
  ASSERT_TRUE(json.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(*json);
  simdjson::dom::array processes = doc["processes"];
  ASSERT_EQ(processes.size(), 2u);
  std::vector<std::vector<std::string>> reasons;
  for (simdjson::dom::element p : processes) {
    reasons.emplace_back();
    for (simdjson::dom::element r : p["dropped"].get_array())
      reasons.back().emplace_back(std::string_view(r));
  }
  simdjson::dom::element first = processes.at(0);
  EXPECT_EQ(uint64_t(first["events_dropped"]), 41873u);
  EXPECT_EQ(uint64_t(first["buffers_refused"]), 5u);
  EXPECT_EQ(uint64_t(first["chunks_dropped"]), 2u);
  EXPECT_EQ(uint64_t(first["chunk_bytes_dropped"]), 2u << 20);
  ASSERT_EQ(reasons[0].size(), 4u) << *json;
  EXPECT_EQ(reasons[0][0], "41,873 events dropped: the bytes cap was reached");
  EXPECT_NE(reasons[0][1].find("5 CUPTI buffer requests refused"), std::string::npos);
  EXPECT_NE(reasons[0][1].find("buffer pool was exhausted"), std::string::npos);
  EXPECT_NE(reasons[0][2].find("2 CUPTI records lost: dropped by CUPTI"), std::string::npos);
  EXPECT_NE(reasons[0][3].find("2 chunks"), std::string::npos);
  EXPECT_NE(reasons[0][3].find("backed up"), std::string::npos);
  ASSERT_EQ(reasons[1].size(), 1u) << *json;
  EXPECT_NE(reasons[1][0].find("3 CUPTI records lost"), std::string::npos);
  EXPECT_EQ(uint64_t(processes.at(1)["events_dropped"]), 0u);
}

}  // namespace
}  // namespace inferscope::agentd
