// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/state_dir.h"

namespace inferscope::base {

std::string DefaultStateDir(const char* (*env)(const char*)) {
  if (const char* state = env("INFERSCOPE_STATE_DIR"); state && *state) return state;
  if (const char* xdg = env("XDG_STATE_HOME"); xdg && *xdg) return std::string(xdg) + "/inferscope";
  if (const char* home = env("HOME"); home && *home)
    return std::string(home) + "/.local/state/inferscope";
  return "/tmp/inferscope";
}

}  // namespace inferscope::base
