// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Locates the real GPU traces in ../shared/traces (beside the checkout). They are not part of the
// repository: tests that need them call INFERSCOPE_REQUIRE_SHARED_TRACES() and are skipped, with a
// message saying so, on a fresh clone.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace inferscope::testing {

// $INFERSCOPE_SHARED_TRACES, else <source dir>/../shared/traces. Empty when absent.
inline std::string SharedTracesDir() {
  if (const char* env = std::getenv("INFERSCOPE_SHARED_TRACES"); env && *env) return env;
  std::filesystem::path p = std::filesystem::path(INFERSCOPE_SOURCE_DIR) / ".." / "shared" / "traces";
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) return std::filesystem::canonical(p, ec).string();
  return {};
}

inline std::string SharedTrace(const std::string& relative) {
  const std::string dir = SharedTracesDir();
  return dir.empty() ? std::string() : dir + "/" + relative;
}

}  // namespace inferscope::testing

#define INFERSCOPE_REQUIRE_SHARED_TRACES()                                              \
  do {                                                                                  \
    if (::inferscope::testing::SharedTracesDir().empty())                               \
      GTEST_SKIP() << "../shared/traces not found (set INFERSCOPE_SHARED_TRACES); this " \
                      "test needs the real GPU traces";                                 \
  } while (0)
