// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/state_dir.h"

#include <errno.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <system_error>

namespace inferscope::base {

std::string DefaultStateDir(const char* (*env)(const char*)) {
  if (const char* state = env("INFERSCOPE_STATE_DIR"); state && *state) return state;
  if (const char* xdg = env("XDG_STATE_HOME"); xdg && *xdg) return std::string(xdg) + "/inferscope";
  if (const char* home = env("HOME"); home && *home)
    return std::string(home) + "/.local/state/inferscope";
  return "/tmp/inferscope";
}

Status CreateStateDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return OkStatus();
  const fs::path parent = fs::path(dir).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return UnavailableError(dir + ": cannot create state directory: " + ec.message());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return UnavailableError(dir + ": cannot create state directory: " + std::strerror(errno));
  // mkdir's mode passes through the umask; a umask can only take bits away, and 0700 is all of
  // them the directory should have. Another process may have created it between the checks: leave
  // its mode alone only if it is not ours to set.
  ::chmod(dir.c_str(), 0700);
  return OkStatus();
}

}  // namespace inferscope::base
