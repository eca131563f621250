// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "src/wire/framing.h"

namespace inferscope::inject {

// Sends frames to the host agent over a non-blocking AF_UNIX stream socket without ever blocking
// the caller (the drain thread): frames wait in a bounded queue while the agent is slow, absent or
// restarting; beyond the bound the oldest frames are dropped and counted. A lost connection is
// retried with exponential back-off (100 ms .. 5 s). A frame is sent whole or not at all from the
// agent's point of view: after a reconnect, a partially sent frame is re-sent from its start, and
// the `on_connect` frame (the hello) goes first.
// The agent may write to the connection too (capture requests): Pump reads what has arrived, never
// waiting, and TakeIncoming hands the frames over. Bulk frames (capture chunks) wait in a second
// queue that yields to windows and is dropped, not kept, when the connection goes: a new agent
// never asked for them.
class AgentClient {
 public:
  AgentClient(std::string socket_path, size_t max_queued_bytes);
  ~AgentClient();
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  // The frame sent first on every (re)connection.
  void SetHello(std::string frame) { hello_ = std::move(frame); }

  // Queues a frame; drops the oldest queued frames if the queue would exceed its bound.
  void Enqueue(std::string frame);

  // Queues a bulk frame (sent after the queued windows) while connected; otherwise, or beyond
  // `max_bulk_bytes` unless `beyond_bound` (a capture's few-dozen-byte end, which says what was
  // dropped), drops it and counts it. Returns whether it was queued.
  bool EnqueueBulk(std::string frame, bool beyond_bound = false);

  // Connects if due, writes as much as the socket takes right now and reads what the agent sent.
  // `now_ns` is a monotonic time.
  void Pump(int64_t now_ns);

  // Frames the agent sent since the last call, in order.
  std::vector<wire::Frame> TakeIncoming() { return std::move(incoming_); }

  // Keeps pumping until the queue is empty or `deadline_ns` (monotonic) passes; returns at once
  // when the agent does not accept a connection. For shutdown only.
  void FlushUntil(int64_t deadline_ns);

  bool connected() const { return fd_ >= 0; }
  size_t queued_frames() const { return queue_.size(); }
  uint64_t dropped_frames() const { return dropped_frames_; }
  uint64_t sent_frames() const { return sent_frames_; }
  uint64_t dropped_bulk_frames() const { return dropped_bulk_frames_; }
  size_t queued_bulk_bytes() const { return bulk_bytes_; }
  void set_max_bulk_bytes(size_t bytes) { max_bulk_bytes_ = bytes; }

  static int64_t MonotonicNs();

 private:
  bool TryConnect(int64_t now_ns);
  void Disconnect(int64_t now_ns);
  void Read(int64_t now_ns);

  const std::string socket_path_;
  const size_t max_queued_bytes_;
  std::string hello_;
  std::deque<std::string> queue_;
  size_t queued_bytes_ = 0;
  size_t offset_ = 0;        // bytes of queue_.front() already written on this connection
  bool hello_sent_ = false;  // on this connection
  size_t hello_offset_ = 0;
  int fd_ = -1;
  int64_t next_attempt_ns_ = 0;
  int64_t backoff_ns_ = 100'000'000;
  uint64_t dropped_frames_ = 0;
  uint64_t sent_frames_ = 0;
  // Bulk frames and what the agent sent.
  std::deque<std::string> bulk_;
  size_t bulk_bytes_ = 0;
  size_t max_bulk_bytes_ = 256u << 20;
  size_t bulk_offset_ = 0;  // bytes of bulk_.front() already written on this connection
  uint64_t dropped_bulk_frames_ = 0;
  wire::FrameReader reader_;
  std::vector<wire::Frame> incoming_;
};

}  // namespace inferscope::inject
