// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Finding an engine's metrics port without configuration: the TCP sockets the profiled processes
// (and their descendants) listen on, read from /proc. The root of /proc is a parameter so that
// tests can build a fake tree.

#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::telemetry::scrape {

// A listening TCP socket of the process tree, with the loopback address to reach it at.
struct ListeningPort {
  int pid = 0;
  uint16_t port = 0;
  bool ipv6 = false;
  // Loopback hosts to try, in order: "127.0.0.1" for IPv4 any/loopback sockets; for IPv6 "any"
  // sockets "127.0.0.1" (dual stack) then "::1"; "::1" for IPv6 loopback. Empty when the socket
  // listens on a specific non-loopback address (not probed: we only talk to loopback).
  std::vector<std::string> hosts;
  std::string address;  // as bound, e.g. "0.0.0.0", "::", "10.1.2.3" (for messages)
};

struct DiscoveryResult {
  std::vector<int> pids;              // the process tree, roots first (breadth first)
  std::vector<ListeningPort> ports;   // deduplicated by (port, family), tree order
  std::vector<std::string> problems;  // one line each, e.g. "cannot read /proc/12/fd: ..."
  size_t unreadable_fd_dirs = 0;      // processes whose sockets we could not see
};

struct DiscoveryOptions {
  std::string proc_root = "/proc";
  size_t max_pids = 4096;  // bound on the tree walk
};

// Walks the tree under `root_pids` (via /proc/<pid>/task/<tid>/children, or the ppid field of
// every /proc/<pid>/stat where that file is missing), collects socket inodes from /proc/<pid>/fd
// and matches them against LISTEN rows of /proc/<pid>/net/tcp and tcp6 (read once per network
// namespace). Never fails: what could not be read is listed in `problems`.
DiscoveryResult FindListeningPorts(const std::vector<int>& root_pids,
                                   const DiscoveryOptions& options = {});

// One row of /proc/net/tcp{,6} parsed: true for a LISTEN socket with its inode and address.
struct TcpListenRow {
  uint64_t inode = 0;
  uint16_t port = 0;
  bool ipv6 = false;
  std::vector<std::string> hosts;  // as in ListeningPort
  std::string address;
};
bool ParseTcpListenRow(const std::string& line, bool ipv6, TcpListenRow* out);

}  // namespace inferscope::telemetry::scrape
