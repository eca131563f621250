// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/base/file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace inferscope::base {

StatusOr<std::string> ReadSmallFile(const std::string& path, std::string_view what) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream text;
  if (f) text << f.rdbuf();
  if (!f || f.bad())
    return NotFoundError(path + ": cannot read " + std::string(what) + " (" + std::strerror(errno) +
                         ")");
  return text.str();
}

}  // namespace inferscope::base
