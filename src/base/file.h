// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Whole small files (settings, rule and price tables, agent.json) read into memory.

#include <string>
#include <string_view>

#include "src/base/status.h"

namespace inferscope::base {

// The file's bytes; kNotFound "PATH: cannot read WHAT (reason)" when it cannot be opened or read.
StatusOr<std::string> ReadSmallFile(const std::string& path, std::string_view what);

}  // namespace inferscope::base
