// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/agentd/watch_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>

#include "src/base/decimal.h"

namespace inferscope::agentd {
namespace {

// The parent of `pid` from <proc_root>/<pid>/stat ("pid (comm) state ppid ..."; comm may hold
// spaces and parentheses, so the fields are read after the last ')'); -1 when unreadable.
int ParentOf(int pid, const std::string& proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  int ppid = -1;
  rest >> state >> ppid;
  return rest ? ppid : -1;
}

}  // namespace

std::optional<int> ParsePid(std::string_view text) {
  const std::optional<uint64_t> n = base::ParseDecimal(text);
  if (!n || *n == 0 || *n > static_cast<uint64_t>(INT32_MAX)) return std::nullopt;
  return static_cast<int>(*n);
}

std::string WatchRefusal(int pid, int self_pid, uid_t self_uid, const std::string& proc_root) {
  if (pid <= 1) return "pid " + std::to_string(pid) + " is never watched (it roots every process)";
  struct stat st {};
  if (::stat((proc_root + "/" + std::to_string(pid)).c_str(), &st) != 0)
    return "no process " + std::to_string(pid);
  if (self_uid != 0 && st.st_uid != self_uid)
    return "pid " + std::to_string(pid) + " belongs to uid " + std::to_string(st.st_uid) +
           ", not this agent's user";
  // The agent and its ancestors: at most a few dozen levels up to init.
  for (int p = self_pid, steps = 0; p > 1 && steps < 256; p = ParentOf(p, proc_root), ++steps)
    if (p == pid) return "pid " + std::to_string(pid) + " is the agent or one of its ancestors";
  return {};
}

}  // namespace inferscope::agentd
