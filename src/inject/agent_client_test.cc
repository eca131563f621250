// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/inject/agent_client.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "src/wire/framing.h"
#include "src/wire/test_frames.h"
#include "tests/temp_dir.h"

namespace inferscope::inject {
namespace {

using wire::testing::Frame;

// A minimal agent: a listening unix socket whose accepted connection is read with FrameReader.
class FakeAgent {
 public:
  explicit FakeAgent(const std::string& path) {
    std::filesystem::remove(path);
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);  // accept never blocks
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listen_fd_, 4), 0);
  }
  ~FakeAgent() {
    if (conn_fd_ >= 0) ::close(conn_fd_);
    ::close(listen_fd_);
  }
  // Writes `bytes` to the accepted connection (the agent's requests).
  void Send(const std::string& bytes) {
    ASSERT_GE(conn_fd_, 0);
    ASSERT_EQ(::send(conn_fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void Close() {
    if (conn_fd_ >= 0) ::close(conn_fd_);
    conn_fd_ = -1;
    reader_ = wire::FrameReader{};
  }
  // Accepts (if needed) and reads until `count` frames arrived; returns their payloads.
  std::vector<wire::Frame> Read(size_t count, AgentClient* client) {
    std::vector<wire::Frame> frames;
    for (int i = 0; i < 2000 && frames.size() < count; ++i) {
      client->Pump(AgentClient::MonotonicNs());
      if (conn_fd_ < 0) conn_fd_ = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK);
      if (conn_fd_ >= 0) {
        char buf[4096];
        const ssize_t n = ::recv(conn_fd_, buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) reader_.Append(std::string_view(buf, static_cast<size_t>(n)));
        wire::Frame f;
        while (reader_.Next(&f)) frames.push_back(f);
      }
      usleep(1000);
    }
    return frames;
  }

 private:
  int listen_fd_ = -1;
  int conn_fd_ = -1;
  wire::FrameReader reader_;
};

// The test binary's sockets share one temp dir, removed at exit.
std::string SocketPath(const char* name) {
  static const inferscope::testing::TempDir dir;
  return dir.path() + "/" + name + ".sock";
}

TEST(AgentClientTest, QueuesWhileTheAgentIsAbsentThenSendsHelloFirst) {
  const std::string path = SocketPath("absent");
  std::filesystem::remove(path);
  AgentClient client(path, 1 << 20);
  client.SetHello(Frame(wire::FrameType::kHello, "hi"));
  client.Enqueue(Frame(wire::FrameType::kWindow, "w1"));
  client.Enqueue(Frame(wire::FrameType::kWindow, "w2"));
  client.Pump(AgentClient::MonotonicNs());  // nobody listening: nothing lost, nothing blocks
  EXPECT_FALSE(client.connected());
  EXPECT_EQ(client.queued_frames(), 2u);

  FakeAgent agent(path);
  const auto frames = agent.Read(3, &client);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].type, static_cast<uint16_t>(wire::FrameType::kHello));
  EXPECT_EQ(frames[1].payload, "w1");
  EXPECT_EQ(frames[2].payload, "w2");
  EXPECT_EQ(client.sent_frames(), 2u);
  std::filesystem::remove(path);
}

TEST(AgentClientTest, ReconnectsToARestartedAgentAndSaysHelloAgain) {
  const std::string path = SocketPath("restart");
  AgentClient client(path, 1 << 20);
  client.SetHello(Frame(wire::FrameType::kHello, "hi"));
  {
    FakeAgent first(path);
    client.Enqueue(Frame(wire::FrameType::kWindow, "before"));
    ASSERT_EQ(first.Read(2, &client).size(), 2u);
  }  // the agent dies
  client.Enqueue(Frame(wire::FrameType::kWindow, "after"));
  for (int i = 0; i < 5; ++i) client.Pump(AgentClient::MonotonicNs());  // notices the loss
  FakeAgent second(path);
  const auto frames = second.Read(2, &client);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].payload, "hi");
  EXPECT_EQ(frames[1].payload, "after");
  std::filesystem::remove(path);
}

TEST(AgentClientTest, DropsTheOldestFramesBeyondItsBound) {
  AgentClient client(SocketPath("bound"), 3 * 100);
  for (int i = 0; i < 10; ++i) client.Enqueue(std::string(100, static_cast<char>('a' + i)));
  EXPECT_EQ(client.queued_frames(), 3u);
  EXPECT_EQ(client.dropped_frames(), 7u);
}

TEST(AgentClientTest, ReadsTheAgentsFramesAndSendsBulkAfterWindows) {
  const std::string path = SocketPath("bulk");
  FakeAgent agent(path);
  AgentClient client(path, 1 << 20);
  client.SetHello(Frame(wire::FrameType::kHello, "h"));
  ASSERT_EQ(agent.Read(1, &client).size(), 1u);  // the hello: connected
  // The agent asks; the client reads without blocking and hands the frame over once.
  agent.Send(Frame(wire::FrameType::kCaptureRequest, "req"));
  std::vector<wire::Frame> incoming;
  for (int i = 0; i < 1000 && incoming.empty(); ++i) {
    client.Pump(AgentClient::MonotonicNs());
    incoming = client.TakeIncoming();
    usleep(1000);
  }
  ASSERT_EQ(incoming.size(), 1u);
  EXPECT_EQ(incoming[0].type, static_cast<uint16_t>(wire::FrameType::kCaptureRequest));
  EXPECT_EQ(incoming[0].payload, "req");
  EXPECT_TRUE(client.TakeIncoming().empty());
  // Bulk queued before a window still goes after it: windows keep flowing during a capture.
  ASSERT_TRUE(client.EnqueueBulk(Frame(wire::FrameType::kCaptureChunk, "chunk")));
  client.Enqueue(Frame(wire::FrameType::kWindow, "w"));
  auto frames = agent.Read(2, &client);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].type, static_cast<uint16_t>(wire::FrameType::kWindow));
  EXPECT_EQ(frames[1].type, static_cast<uint16_t>(wire::FrameType::kCaptureChunk));
}

TEST(AgentClientTest, BulkIsDroppedWhenTheAgentGoesOrBeyondItsBound) {
  const std::string path = SocketPath("bulkdrop");
  FakeAgent agent(path);
  AgentClient client(path, 1 << 20);
  // Not connected: a capture chunk has no agent to go to.
  EXPECT_FALSE(client.EnqueueBulk("x"));
  EXPECT_EQ(client.dropped_bulk_frames(), 1u);
  client.SetHello(Frame(wire::FrameType::kHello, "h"));
  ASSERT_EQ(agent.Read(1, &client).size(), 1u);
  client.set_max_bulk_bytes(100);
  EXPECT_TRUE(client.EnqueueBulk(std::string(60, 'a')));
  EXPECT_FALSE(client.EnqueueBulk(std::string(60, 'b')));  // over the bound
  EXPECT_EQ(client.dropped_bulk_frames(), 2u);
  // A capture's end, which says what was dropped, goes beyond the bound.
  EXPECT_TRUE(client.EnqueueBulk(std::string(60, 'e'), /*beyond_bound=*/true));
  EXPECT_EQ(client.dropped_bulk_frames(), 2u);
  // The agent dies: the client notices on its next pump (EOF) and drops what was queued.
  agent.Close();
  for (int i = 0; i < 100 && client.connected(); ++i) {
    client.Pump(AgentClient::MonotonicNs());
    usleep(1000);
  }
  EXPECT_FALSE(client.connected());
  EXPECT_EQ(client.queued_bulk_bytes(), 0u);
}

}  // namespace
}  // namespace inferscope::inject
