// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/discovery.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/temp_dir.h"

namespace inferscope::telemetry::scrape {
namespace {

namespace fs = std::filesystem;

// Row layout of /proc/net/tcp{,6}. Addresses are written as a little-endian kernel prints them
// (127.0.0.1 is 0100007F), which is what the machines running these tests are.
std::string TcpRow(int sl, const std::string& local, const std::string& remote,
                   const std::string& state, uint64_t inode) {
  return "  " + std::to_string(sl) + ": " + local + " " + remote + " " + state +
         " 00000000:00000000 00:00000000 00000000  1000        0 " + std::to_string(inode) +
         " 1 0000000000000000 100 0 0 10 0\n";
}
const char kTcpHeader[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode\n";

// A fake /proc:
//   100 (root) -> 101 (task children file), 102 (task children file)
//   102 has no task dir, so its children come from every process's stat: 103 (ppid 102)
//   999 is not in the tree but listens too.
class FakeProc {
 public:
  FakeProc() : root_(dir_.path()) {
    Write("100/task/100/children", "101 ");
    Write("100/task/555/children", "102");  // a second thread of 100 forked 102
    Write("101/task/101/children", "");
    for (int pid : {100, 101, 102, 103, 999}) {
      const int ppid = pid == 101 || pid == 102 ? 100 : pid == 103 ? 102 : 1;
      Write(std::to_string(pid) + "/stat",
            std::to_string(pid) + " (py (worker) x) S " + std::to_string(ppid) + " 1 1 0\n");
      if (pid != 103) Link(std::to_string(pid) + "/ns/net", "net:[4026531992]");
    }
    Link("100/fd/3", "socket:[5000]");
    Link("100/fd/4", "/dev/null");
    Link("100/fd/5", "socket:[5005]");
    Link("100/fd/6", "socket:[5002]");  // an established connection
    Link("101/fd/7", "socket:[5001]");
    Link("102/fd/8", "socket:[5003]");
    Link("102/fd/9", "socket:[5004]");
    Write("103/fd", "not a directory");  // unreadable
    Link("999/fd/3", "socket:[5006]");
    // One network namespace: every process shows the same tables (read once).
    const std::string tcp = std::string(kTcpHeader) +
                            TcpRow(0, "00000000:1F40", "00000000:0000", "0A", 5000) +
                            TcpRow(1, "0100007F:1F41", "00000000:0000", "0A", 5001) +
                            TcpRow(2, "0100007F:A000", "0100007F:1F40", "01", 5002) +
                            TcpRow(3, "0500000A:2328", "00000000:0000", "0A", 5003) +
                            TcpRow(4, "0100007F:1F90", "00000000:0000", "0A", 5006);
    const std::string tcp6 = std::string(kTcpHeader) +
                             TcpRow(0, "00000000000000000000000001000000:1F42",
                                    "00000000000000000000000000000000:0000", "0A", 5004) +
                             TcpRow(1, "00000000000000000000000000000000:1F40",
                                    "00000000000000000000000000000000:0000", "0A", 5005);
    for (int pid : {100, 101, 102, 999}) {
      Write(std::to_string(pid) + "/net/tcp", tcp);
      Write(std::to_string(pid) + "/net/tcp6", tcp6);
    }
  }

  const std::string& root() const { return root_; }

 private:
  void Write(const std::string& path, const std::string& text) {
    const fs::path p = fs::path(root_) / path;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void Link(const std::string& path, const std::string& target) {
    const fs::path p = fs::path(root_) / path;
    fs::create_directories(p.parent_path());
    fs::create_symlink(target, p);  // dangling on purpose, as /proc/<pid>/fd links look
  }

  testing::TempDir dir_;
  std::string root_;
};

TEST(DiscoveryTest, FindsListeningPortsOfTheProcessTree) {
  FakeProc proc;
  const DiscoveryResult r = FindListeningPorts({100}, {proc.root(), 4096});
  EXPECT_EQ(r.pids, (std::vector<int>{100, 101, 102, 103}));
  ASSERT_EQ(r.ports.size(), 4u);
  // 100: port 8000 on IPv4 any and IPv6 any -> one entry, both loopback addresses to try.
  EXPECT_EQ(r.ports[0].pid, 100);
  EXPECT_EQ(r.ports[0].port, 8000);
  EXPECT_EQ(r.ports[0].hosts, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(r.ports[0].address, "0.0.0.0");
  EXPECT_EQ(r.ports[1].pid, 101);
  EXPECT_EQ(r.ports[1].port, 8001);
  EXPECT_EQ(r.ports[1].hosts, (std::vector<std::string>{"127.0.0.1"}));
  // 102 (found through the fallback): ::1 port 8002, and 9000 on a non-loopback address.
  EXPECT_EQ(r.ports[2].port, 8002);
  EXPECT_TRUE(r.ports[2].ipv6);
  EXPECT_EQ(r.ports[2].hosts, (std::vector<std::string>{"::1"}));
  EXPECT_EQ(r.ports[3].port, 9000);
  EXPECT_TRUE(r.ports[3].hosts.empty());
  EXPECT_EQ(r.ports[3].address, "10.0.0.5");
  EXPECT_EQ(r.unreadable_fd_dirs, 1u);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("103/fd: Not a directory"), std::string::npos) << r.problems[0];
}

TEST(DiscoveryTest, SubtreeAndMissingProcesses) {
  FakeProc proc;
  DiscoveryResult r = FindListeningPorts({101, 4242}, {proc.root(), 4096});
  EXPECT_EQ(r.pids, std::vector<int>{101});  // 4242 does not exist
  ASSERT_EQ(r.ports.size(), 1u);
  EXPECT_EQ(r.ports[0].port, 8001);
  r = FindListeningPorts({100}, {proc.root(), 2});  // bounded walk
  EXPECT_EQ(r.pids, (std::vector<int>{100, 101}));
  r = FindListeningPorts({}, {proc.root(), 4096});
  EXPECT_TRUE(r.pids.empty());
  EXPECT_TRUE(r.ports.empty());
}

TEST(DiscoveryTest, ParsesTcpRows) {
  TcpListenRow row;
  EXPECT_FALSE(ParseTcpListenRow(kTcpHeader, false, &row));
  EXPECT_FALSE(ParseTcpListenRow("", false, &row));
  EXPECT_FALSE(ParseTcpListenRow(TcpRow(0, "0100007F:1F40", "0100007F:A000", "01", 7), false,
                                 &row));  // established
  EXPECT_FALSE(ParseTcpListenRow(TcpRow(0, "0100007F:0000", "00000000:0000", "0A", 7), false,
                                 &row));  // port 0
  EXPECT_FALSE(ParseTcpListenRow(TcpRow(0, "0100007:1F40", "00000000:0000", "0A", 7), false,
                                 &row));  // short address
  ASSERT_TRUE(
      ParseTcpListenRow(TcpRow(0, "0100007F:1F40", "00000000:0000", "0A", 77), false, &row));
  EXPECT_EQ(row.port, 8000);
  EXPECT_EQ(row.inode, 77u);
  EXPECT_EQ(row.address, "127.0.0.1");
  // IPv4-mapped loopback on an IPv6 socket.
  ASSERT_TRUE(ParseTcpListenRow(TcpRow(0, "0000000000000000FFFF00000100007F:1F40",
                                       "00000000000000000000000000000000:0000", "0A", 78),
                                true, &row));
  EXPECT_EQ(row.address, "::ffff:127.0.0.1");
  EXPECT_EQ(row.hosts, std::vector<std::string>{"127.0.0.1"});
}

}  // namespace
}  // namespace inferscope::telemetry::scrape
