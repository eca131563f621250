// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/telemetry/scrape/discovery.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace inferscope::telemetry::scrape {
namespace {

std::vector<std::string> ListDir(const std::string& path, int* error) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) {
    *error = errno;
    return names;
  }
  *error = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

std::optional<std::string> ReadLink(const std::string& path) {
  char buffer[256];
  const ssize_t n = ::readlink(path.c_str(), buffer, sizeof(buffer));
  if (n <= 0 || size_t(n) >= sizeof(buffer)) return std::nullopt;
  return std::string(buffer, size_t(n));
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buffer[4096];
  // /proc/net/tcp of a busy host can be large; the bound keeps a pathological one from
  // stalling the agent (64 MiB is ~400k sockets).
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, size_t(in.gcount()));
    if (text.size() > (64u << 20)) break;
  }
  return text;
}

bool ParseInt(std::string_view s, int* out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && *out > 0;
}

bool ParseHex32(std::string_view s, uint32_t* out) {
  if (s.size() != 8) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 16);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// The children of `pid` from /proc/<pid>/task/*/children; nullopt when the kernel does not
// provide those files (CONFIG_PROC_CHILDREN off) or they cannot be read.
std::optional<std::vector<int>> ChildrenFromTasks(const std::string& proc, int pid) {
  int error;
  const std::string task_dir = proc + "/" + std::to_string(pid) + "/task";
  const std::vector<std::string> tids = ListDir(task_dir, &error);
  if (error) return std::nullopt;
  std::vector<int> children;
  bool any = false;
  for (const std::string& tid : tids) {
    auto text = ReadSmallFile(task_dir + "/" + tid + "/children");
    if (!text) continue;
    any = true;
    for (std::string_view field : Fields(*text)) {
      if (!field.empty() && field.back() == '\n') field.remove_suffix(1);
      int child;
      if (ParseInt(field, &child)) children.push_back(child);
    }
  }
  if (!any) return std::nullopt;
  return children;
}

// ppid -> children for every process, from /proc/*/stat ("pid (comm) state ppid ...").
std::unordered_map<int, std::vector<int>> ChildrenFromStat(const std::string& proc) {
  std::unordered_map<int, std::vector<int>> out;
  int error;
  for (const std::string& name : ListDir(proc, &error)) {
    int pid;
    if (!ParseInt(name, &pid)) continue;
    auto text = ReadSmallFile(proc + "/" + name + "/stat");
    if (!text) continue;
    // comm may hold spaces and parentheses: the fields resume after the last ')'.
    const size_t paren = text->rfind(')');
    if (paren == std::string::npos) continue;
    const std::vector<std::string_view> fields = Fields(std::string_view(*text).substr(paren + 1));
    int ppid;
    if (fields.size() < 2 || !ParseInt(fields[1], &ppid)) continue;
    out[ppid].push_back(pid);
  }
  return out;
}

bool ParseSocketInode(std::string_view link, uint64_t* inode) {
  constexpr std::string_view kPrefix = "socket:[";
  if (!link.starts_with(kPrefix) || !link.ends_with("]")) return false;
  const std::string_view digits = link.substr(kPrefix.size(), link.size() - kPrefix.size() - 1);
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *inode);
  return ec == std::errc() && ptr == digits.data() + digits.size();
}

}  // namespace

bool ParseTcpListenRow(const std::string& line, bool ipv6, TcpListenRow* out) {
  const std::vector<std::string_view> f = Fields(line);
  // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
  if (f.size() < 10 || f[3] != "0A") return false;  // 0A = TCP_LISTEN
  const std::string_view local = f[1];
  const size_t colon = local.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view addr_hex = local.substr(0, colon);
  const std::string_view port_hex = local.substr(colon + 1);
  unsigned port = 0;
  {
    const auto [ptr, ec] =
        std::from_chars(port_hex.data(), port_hex.data() + port_hex.size(), port, 16);
    if (ec != std::errc() || ptr != port_hex.data() + port_hex.size() || port == 0 || port > 65535)
      return false;
  }
  uint64_t inode = 0;
  {
    const auto [ptr, ec] = std::from_chars(f[9].data(), f[9].data() + f[9].size(), inode);
    if (ec != std::errc() || ptr != f[9].data() + f[9].size()) return false;
  }
  // The kernel prints each 32-bit word of the address (network byte order in memory) as a host
  // integer with %08X, so copying the parsed words back to memory restores the address bytes.
  const size_t words = ipv6 ? 4 : 1;
  if (addr_hex.size() != words * 8) return false;
  unsigned char bytes[16] = {};
  for (size_t i = 0; i < words; ++i) {
    uint32_t word;
    if (!ParseHex32(addr_hex.substr(i * 8, 8), &word)) return false;
    std::memcpy(bytes + i * 4, &word, 4);
  }
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(ipv6 ? AF_INET6 : AF_INET, bytes, text, sizeof(text));
  out->inode = inode;
  out->port = uint16_t(port);
  out->ipv6 = ipv6;
  out->address = text;
  out->hosts.clear();
  if (!ipv6) {
    const bool any = bytes[0] == 0 && bytes[1] == 0 && bytes[2] == 0 && bytes[3] == 0;
    if (any || bytes[0] == 127) out->hosts.push_back("127.0.0.1");
    return true;
  }
  bool zero10 = true;
  for (int i = 0; i < 10; ++i) zero10 &= bytes[i] == 0;
  const bool any = zero10 && std::all_of(bytes + 10, bytes + 16, [](auto b) { return b == 0; });
  const bool loopback = zero10 &&
                        std::all_of(bytes + 10, bytes + 15, [](auto b) { return b == 0; }) &&
                        bytes[15] == 1;
  const bool mapped = zero10 && bytes[10] == 0xff && bytes[11] == 0xff;
  if (any) {
    out->hosts = {"127.0.0.1", "::1"};
  } else if (loopback) {
    out->hosts = {"::1"};
  } else if (mapped && (bytes[12] == 127 || (bytes[12] | bytes[13] | bytes[14] | bytes[15]) == 0)) {
    out->hosts = {"127.0.0.1"};
  }
  return true;
}

DiscoveryResult FindListeningPorts(const std::vector<int>& root_pids,
                                   const DiscoveryOptions& options) {
  DiscoveryResult result;
  const std::string& proc = options.proc_root;

  // 1. The process tree, breadth first.
  std::optional<std::unordered_map<int, std::vector<int>>> by_stat;
  std::unordered_set<int> seen;
  std::deque<int> queue;
  for (int pid : root_pids)
    if (pid > 0 && seen.insert(pid).second) queue.push_back(pid);
  while (!queue.empty() && result.pids.size() < options.max_pids) {
    const int pid = queue.front();
    queue.pop_front();
    if (::access((proc + "/" + std::to_string(pid)).c_str(), F_OK) != 0) continue;  // gone
    result.pids.push_back(pid);
    std::optional<std::vector<int>> children = ChildrenFromTasks(proc, pid);
    if (!children) {
      if (!by_stat) by_stat = ChildrenFromStat(proc);
      auto it = by_stat->find(pid);
      children = it == by_stat->end() ? std::vector<int>() : it->second;
    }
    std::sort(children->begin(), children->end());  // readdir order is arbitrary
    for (int child : *children)
      if (seen.insert(child).second) queue.push_back(child);
  }

  // 2. LISTEN sockets per network namespace, read once per namespace.
  std::map<std::string, std::unordered_map<uint64_t, TcpListenRow>> tables;
  auto table_for = [&](int pid) -> const std::unordered_map<uint64_t, TcpListenRow>& {
    const std::string base = proc + "/" + std::to_string(pid);
    const std::string key = ReadLink(base + "/ns/net").value_or("pid:" + std::to_string(pid));
    auto [it, inserted] = tables.try_emplace(key);
    if (!inserted) return it->second;
    bool readable = false;
    for (const bool ipv6 : {false, true}) {
      auto text = ReadSmallFile(base + (ipv6 ? "/net/tcp6" : "/net/tcp"));
      if (!text) continue;
      readable = true;
      std::istringstream lines(*text);
      std::string line;
      std::getline(lines, line);  // header
      while (std::getline(lines, line)) {
        TcpListenRow row;
        if (ParseTcpListenRow(line, ipv6, &row)) it->second.emplace(row.inode, row);
      }
    }
    // Unreadable for this process (it may have just exited): let the next one of the namespace
    // try instead of caching an empty table.
    if (!readable) {
      tables.erase(it);
      static const std::unordered_map<uint64_t, TcpListenRow> kEmpty;
      return kEmpty;
    }
    return it->second;
  };

  // 3. Each process's socket inodes matched against them.
  std::map<uint16_t, size_t> by_port;  // port -> index in result.ports
  for (int pid : result.pids) {
    const std::string fd_dir = proc + "/" + std::to_string(pid) + "/fd";
    int error;
    const std::vector<std::string> fds = ListDir(fd_dir, &error);
    if (error) {
      if (error != ENOENT) {
        ++result.unreadable_fd_dirs;
        result.problems.push_back("cannot read " + fd_dir + ": " + std::strerror(error));
      }
      continue;
    }
    std::vector<uint64_t> inodes;
    for (const std::string& fd : fds) {
      auto link = ReadLink(fd_dir + "/" + fd);
      uint64_t inode;
      if (link && ParseSocketInode(*link, &inode)) inodes.push_back(inode);
    }
    if (inodes.empty()) continue;
    const auto& table = table_for(pid);
    std::vector<ListeningPort> mine;
    for (uint64_t inode : inodes) {
      auto it = table.find(inode);
      if (it == table.end()) continue;
      const TcpListenRow& row = it->second;
      mine.push_back({pid, row.port, row.ipv6, row.hosts, row.address});
    }
    std::sort(mine.begin(), mine.end(),
              [](const ListeningPort& a, const ListeningPort& b) { return a.port < b.port; });
    for (ListeningPort& p : mine) {
      auto [it, inserted] = by_port.emplace(p.port, result.ports.size());
      if (inserted) {
        result.ports.push_back(std::move(p));
        continue;
      }
      // The same port on IPv4 and IPv6 sockets: one server; keep every host to try.
      ListeningPort& existing = result.ports[it->second];
      for (const std::string& host : p.hosts)
        if (std::find(existing.hosts.begin(), existing.hosts.end(), host) == existing.hosts.end())
          existing.hosts.push_back(host);
    }
  }
  return result;
}

}  // namespace inferscope::telemetry::scrape
