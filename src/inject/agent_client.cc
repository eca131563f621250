// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/agent_client.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace inferscope::inject {

namespace {
constexpr int64_t kMinBackoffNs = 100'000'000;
constexpr int64_t kMaxBackoffNs = 5'000'000'000;
}  // namespace

int64_t AgentClient::MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

AgentClient::AgentClient(std::string socket_path, size_t max_queued_bytes)
    : socket_path_(std::move(socket_path)), max_queued_bytes_(max_queued_bytes) {}

AgentClient::~AgentClient() {
  if (fd_ >= 0) ::close(fd_);
}

void AgentClient::Enqueue(std::string frame) {
  queued_bytes_ += frame.size();
  queue_.push_back(std::move(frame));
  // Drop from the front, but never the frame partly on the wire (the agent would see garbage).
  while (queued_bytes_ > max_queued_bytes_ && queue_.size() > 1) {
    auto victim = queue_.begin();
    if (offset_ > 0) ++victim;
    if (victim == queue_.end()) break;
    queued_bytes_ -= victim->size();
    queue_.erase(victim);
    ++dropped_frames_;
  }
}

bool AgentClient::TryConnect(int64_t now_ns) {
  if (now_ns < next_attempt_ns_) return false;
  sockaddr_un addr{};
  if (socket_path_.size() >= sizeof(addr.sun_path)) {
    next_attempt_ns_ = now_ns + kMaxBackoffNs;
    return false;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    next_attempt_ns_ = now_ns + backoff_ns_;
    return false;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path_.data(), socket_path_.size());
  // A unix-socket connect completes or fails at once; EAGAIN means the listener's backlog is full.
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    next_attempt_ns_ = now_ns + backoff_ns_;
    backoff_ns_ = std::min(backoff_ns_ * 2, kMaxBackoffNs);
    return false;
  }
  fd_ = fd;
  backoff_ns_ = kMinBackoffNs;
  hello_sent_ = hello_.empty();
  hello_offset_ = 0;
  offset_ = 0;  // a frame cut by the last disconnect goes again, whole
  return true;
}

bool AgentClient::EnqueueBulk(std::string frame, bool beyond_bound) {
  if (fd_ < 0 || (!beyond_bound && bulk_bytes_ + frame.size() > max_bulk_bytes_)) {
    ++dropped_bulk_frames_;
    return false;
  }
  bulk_bytes_ += frame.size();
  bulk_.push_back(std::move(frame));
  return true;
}

void AgentClient::Disconnect(int64_t now_ns) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  // Bulk frames belong to this connection's agent (a capture it asked for): gone with it.
  dropped_bulk_frames_ += bulk_.size();
  bulk_.clear();
  bulk_bytes_ = 0;
  bulk_offset_ = 0;
  reader_ = wire::FrameReader{};
  next_attempt_ns_ = now_ns + backoff_ns_;
  backoff_ns_ = std::min(backoff_ns_ * 2, kMaxBackoffNs);
}

void AgentClient::Read(int64_t now_ns) {
  // The agent sends a few small requests; a bounded read per pump keeps the drain thread's cycle
  // short whatever a broken peer writes.
  char buf[4096];
  for (int i = 0; i < 16 && fd_ >= 0; ++i) {
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // EOF or an error: the agent went away
      Disconnect(now_ns);
      return;
    }
    reader_.Append(std::string_view(buf, static_cast<size_t>(n)));
    wire::Frame frame;
    while (reader_.Next(&frame)) {
      if (incoming_.size() < 64) incoming_.push_back(std::move(frame));
    }
    if (reader_.failed()) {
      Disconnect(now_ns);
      return;
    }
  }
}

void AgentClient::Pump(int64_t now_ns) {
  if (fd_ >= 0) Read(now_ns);
  // Connect even with nothing queued: the hello makes the process visible to `inferscope status`
  // from its start, not from its first window.
  if (queue_.empty() && bulk_.empty() && fd_ >= 0 && hello_sent_) return;
  if (fd_ < 0 && !TryConnect(now_ns)) return;
  auto write_some = [&](const std::string& data, size_t* offset) -> bool {
    while (*offset < data.size()) {
      const ssize_t n =
          ::send(fd_, data.data() + *offset, data.size() - *offset, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        *offset += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
      Disconnect(now_ns);  // EPIPE, ECONNRESET, ...: the agent went away
      return false;
    }
    return true;
  };
  if (!hello_sent_) {
    if (!write_some(hello_, &hello_offset_)) return;
    hello_sent_ = true;
  }
  while (fd_ >= 0) {
    // A bulk frame partly written goes on first (frames never interleave); otherwise windows
    // go before bulk frames.
    if (!bulk_.empty() && (bulk_offset_ > 0 || queue_.empty())) {
      if (!write_some(bulk_.front(), &bulk_offset_)) return;
      bulk_bytes_ -= bulk_.front().size();
      bulk_.pop_front();
      bulk_offset_ = 0;
      ++sent_frames_;
      continue;
    }
    if (queue_.empty()) return;
    if (!write_some(queue_.front(), &offset_)) return;
    queued_bytes_ -= queue_.front().size();
    queue_.pop_front();
    offset_ = 0;
    ++sent_frames_;
  }
}

void AgentClient::FlushUntil(int64_t deadline_ns) {
  while (!queue_.empty()) {
    const int64_t now = MonotonicNs();
    if (now >= deadline_ns) return;
    if (fd_ < 0) {
      // At exit an agent that does not accept a connection now will not within the deadline:
      // give up at once rather than hold the process (absent agent, stale socket file).
      next_attempt_ns_ = std::min(next_attempt_ns_, now);
      if (!TryConnect(now)) return;
    }
    Pump(now);
    if (queue_.empty()) return;
    timespec pause{0, 2'000'000};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace inferscope::inject
