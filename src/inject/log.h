// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

#include "src/inject/config.h"

namespace inferscope::inject {

// One line to stderr, prefixed with the tool and pid, if `level` is enabled. Used only on
// start-up, shutdown and failures: never on a per-event path.
inline void Log(LogLevel enabled, LogLevel level, const std::string& message) {
  if (static_cast<int>(level) > static_cast<int>(enabled)) return;
  std::fprintf(stderr, "inferscope[%d]: %s\n", static_cast<int>(::getpid()), message.c_str());
}

}  // namespace inferscope::inject
