// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Which processes `POST /api/v1/watch` may add. A watched pid roots the engine-metrics discovery
// (its process tree's loopback listeners are scraped) and keeps an idle agent alive, so the route
// takes only the user's own processes: never pid 1 (the whole tree), another user's process (its
// metrics server and model name would reach the user's store), or the agent and its ancestors.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace inferscope::agentd {

// The pid of a `pid` query parameter: digits only, in range; nullopt otherwise ("12x", "-1", "").
std::optional<int> ParsePid(std::string_view text);

// Why `pid` may not be watched (a sentence for the 403), or empty when it may: the agent is
// `self_pid` running as `self_uid` (root's agent may watch any process); `proc_root` is /proc
// outside tests.
std::string WatchRefusal(int pid, int self_pid, uid_t self_uid,
                         const std::string& proc_root = "/proc");

}  // namespace inferscope::agentd
