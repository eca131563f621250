// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

#include "src/inject/agent_client.h"
#include "src/inject/config.h"
#include "src/inject/event_capture.h"
#include "src/model/profile.h"

namespace inferscope::inject {

// What the agent is told about this process's profiling in the hello (`inferscope status` shows
// it): the CUPTI bound, or why profiling is off.
struct ProfilingStatus {
  std::string cupti_release;  // "12.4"; empty when no CUPTI could be bound
  std::string cupti_path;
  std::string off_reason;  // empty when profiling is on
};

// Encodes windows into wire frames and sends them to the agent (hello first on every connection,
// goodbye at the end). Not thread-safe: the Session serializes OnWindow and Tick under its
// aggregator lock; Finish runs on the exit path after the Session has shut down.
class WindowSender {
 public:
  WindowSender(const Config& config, uint32_t pid, int64_t start_unix_ns,
               const ProfilingStatus& status);

  void OnWindow(model::ProfileWindow&& window);
  // Sends and reads what the socket takes now. With `capture` (the drain thread's tick), also
  // hands the agent's capture requests to it and sends what it recorded.
  void Tick(EventCapture* capture = nullptr);
  // Reads what the socket has now and hands the agent's capture requests to `capture` (the drain
  // thread, before a flush: records of a span must not be decoded before its request is taken).
  void TakeRequests(EventCapture* capture);
  // Queues the goodbye and tries to deliver everything for up to `timeout_ns`.
  void Finish(int64_t timeout_ns);

  const AgentClient& client() const { return client_; }
  uint64_t windows() const { return windows_; }
  // Frames (windows) dropped because the agent was absent or slow for too long.
  uint64_t dropped_frames() const { return client_.dropped_frames(); }

 private:
  AgentClient client_;
  const int64_t capture_settle_ns_;  // a flush period and the lateness: records of the span are in
  uint64_t windows_ = 0;
};

}  // namespace inferscope::inject
