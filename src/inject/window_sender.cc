// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/window_sender.h"

#include <time.h>
#include <unistd.h>

#include <string>

#include "src/wire/capture_codec.h"
#include "src/wire/framing.h"
#include "src/wire/window_codec.h"

namespace inferscope::inject {

namespace {
// Windows waiting for an absent agent: ~1000 typical windows (hours at 10 s) before dropping.
constexpr size_t kMaxQueuedBytes = 8u << 20;

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

WindowSender::WindowSender(const Config& config, uint32_t pid, int64_t start_unix_ns,
                           const ProfilingStatus& status)
    : client_(config.socket_path, kMaxQueuedBytes),
      capture_settle_ns_(config.flush_period_ns + config.lateness_ns) {
  wire::Hello hello;
  hello.pid = pid;
  hello.rank = config.rank;
  hello.local_rank = config.local_rank;
  hello.world_size = config.world_size;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) hello.hostname = host;
  hello.tool_version = INFERSCOPE_VERSION;
  hello.process_start_unix_ns = start_unix_ns;
  hello.cupti_release = status.cupti_release;
  hello.cupti_path = status.cupti_path;
  hello.profiling_off_reason = status.off_reason;
  std::string payload, frame;
  wire::EncodeHello(hello, &payload);
  if (wire::FrameWriter::Append(wire::FrameType::kHello, payload, &frame).ok())
    client_.SetHello(std::move(frame));
}

void WindowSender::OnWindow(model::ProfileWindow&& window) {
  std::string payload, frame;
  wire::EncodeWindow(window, &payload);
  if (!wire::FrameWriter::Append(wire::FrameType::kWindow, payload, &frame).ok()) return;
  client_.Enqueue(std::move(frame));
  ++windows_;
  Tick();
}

void WindowSender::TakeRequests(EventCapture* capture) {
  client_.Pump(AgentClient::MonotonicNs());
  for (wire::Frame& f : client_.TakeIncoming()) {
    if (f.type != static_cast<uint16_t>(wire::FrameType::kCaptureRequest)) continue;
    auto request = wire::DecodeCaptureRequest(f.payload);
    if (request.ok()) capture->Request(*request);
  }
}

void WindowSender::Tick(EventCapture* capture) {
  const int64_t now = AgentClient::MonotonicNs();
  if (capture == nullptr) {
    client_.Pump(now);
    return;
  }
  TakeRequests(capture);
  // Chunks the bulk queue refuses (the agent reading too slowly, or gone) are counted by the
  // capture and reported in its end, which goes beyond the queue's bound.
  bool any = false;
  capture->Poll(RealtimeNs(), capture_settle_ns_, [&](std::string&& f, bool chunk) {
    any = true;
    return client_.EnqueueBulk(std::move(f), /*beyond_bound=*/!chunk);
  });
  if (any) client_.Pump(now);
}

void WindowSender::Finish(int64_t timeout_ns) {
  std::string frame;
  if (wire::FrameWriter::Append(wire::FrameType::kGoodbye, {}, &frame).ok())
    client_.Enqueue(std::move(frame));
  client_.FlushUntil(AgentClient::MonotonicNs() + timeout_ns);
}

}  // namespace inferscope::inject
