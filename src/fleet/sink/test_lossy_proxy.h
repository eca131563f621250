// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A loopback HTTP proxy for the sink's exactly-once tests: it forwards each request to a
// ClickHouse server and its answer back, except that the next `LoseInsertAnswers(n)` INSERTs are
// forwarded whole and executed by the server, but their answers are dropped and the client's
// connection closed: the sink sees a transport failure for an insert the server has stored (the
// lost acknowledgement a retry must not duplicate). One connection at a time (the sink's thread
// is the only client); each request must carry a Content-Length (cpp-httplib's POSTs do) and ask
// for Connection: close (the client's keep-alive is off), so the server's answer ends at EOF.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace inferscope::fleet::testing {

class LossyProxy {
 public:
  explicit LossyProxy(int server_port) : server_port_(server_port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        ::listen(listen_fd_, 8) == 0 &&
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~LossyProxy() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    ::close(listen_fd_);
  }

  int port() const { return port_; }
  void LoseInsertAnswers(int n) { lose_ = n; }
  // The next `n` INSERTs are not forwarded at all (the connection dies before the server sees
  // them): to the client it looks the same as a lost answer.
  void DropInserts(int n) { drop_ = n; }
  // While down, every connection is closed unanswered (a server that went away).
  void SetDown(bool down) { down_ = down; }
  int answers_lost() const { return lost_; }
  int inserts_seen() const { return inserts_; }

 private:
  // Reads until `buf` holds the request's headers and Content-Length bytes of body.
  static bool ReadRequest(int fd, std::string* buf) {
    char chunk[65536];
    while (true) {
      const size_t end = buf->find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t length = 0;
        for (const char* h : {"Content-Length: ", "content-length: "}) {
          const size_t at = buf->find(h);
          if (at != std::string::npos && at < end)
            length = std::strtoull(buf->c_str() + at + std::strlen(h), nullptr, 10);
        }
        if (buf->size() >= end + 4 + length) return true;
      }
      const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) return false;
      buf->append(chunk, static_cast<size_t>(n));
    }
  }

  static bool SendAll(int fd, const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  // The server's whole answer (it closes the connection after it), bounded by 10 s.
  static std::string ReadToEof(int fd) {
    std::string out;
    char chunk[65536];
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 10'000) > 0) {
      const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) break;
      out.append(chunk, static_cast<size_t>(n));
    }
    return out;
  }

  void Serve(int client) {
    std::string request;
    if (down_ || !ReadRequest(client, &request)) return;
    const int server = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(server_port_));
    if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      ::close(server);
      return;  // the client sees its connection closed: the server is down
    }
    // The request line only: the query travels in the URL (`query=INSERT%20INTO...`).
    const std::string line = request.substr(0, request.find("\r\n"));
    const bool insert = line.find("query=INSERT") != std::string::npos;
    if (insert) ++inserts_;
    if (insert && drop_ > 0) {
      --drop_;
      ::close(server);
      return;
    }
    SendAll(server, request);
    const std::string answer = ReadToEof(server);
    ::close(server);
    if (insert && lose_ > 0) {
      --lose_;
      ++lost_;
      return;  // the server stored the rows; the client never hears of it
    }
    SendAll(client, answer);
  }

  void Loop() {
    while (!stop_) {
      const int client = ::accept(listen_fd_, nullptr, nullptr);
      if (client < 0) continue;
      Serve(client);
      ::shutdown(client, SHUT_RDWR);
      ::close(client);
    }
  }

  int server_port_;
  int listen_fd_ = -1;
  int port_ = -1;
  std::atomic<bool> stop_{false}, down_{false};
  std::atomic<int> lose_{0}, drop_{0}, lost_{0}, inserts_{0};
  std::thread thread_;
};

}  // namespace inferscope::fleet::testing
