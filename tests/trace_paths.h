// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Where the real GPU traces are (../shared/traces beside the checkout, not part of the repository)
// and a helper to inflate one to a temporary plain-JSON file. Used by tests and benchmarks.

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace inferscope::testing {

// $INFERSCOPE_SHARED_TRACES, else <source dir>/../shared/traces. Empty when absent (a variable
// naming a missing directory included: the tests that need the traces then skip, not fail).
inline std::string SharedTracesDir() {
  std::error_code ec;
  if (const char* env = std::getenv("INFERSCOPE_SHARED_TRACES"); env && *env)
    return std::filesystem::is_directory(env, ec) ? std::string(env) : std::string();
  std::filesystem::path p =
      std::filesystem::path(INFERSCOPE_SOURCE_DIR) / ".." / "shared" / "traces";
  if (std::filesystem::is_directory(p, ec)) return std::filesystem::canonical(p, ec).string();
  return {};
}

inline std::string SharedTrace(const std::string& relative) {
  const std::string dir = SharedTracesDir();
  return dir.empty() ? std::string() : dir + "/" + relative;
}

// Inflates a .gz file into a new temporary file and returns its path ("" on failure). The caller
// removes it.
inline std::string DecompressToTemp(const std::string& gz_path, const std::string& suffix) {
  const std::string out = std::filesystem::temp_directory_path().string() + "/inferscope_" +
                          std::to_string(::getpid()) + suffix;
  gzFile in = gzopen(gz_path.c_str(), "rb");
  FILE* f = std::fopen(out.c_str(), "wb");
  if (!in || !f) {
    if (in) gzclose(in);
    if (f) std::fclose(f);
    return {};
  }
  std::string buf(1 << 20, '\0');
  int n;
  while ((n = gzread(in, buf.data(), static_cast<unsigned>(buf.size()))) > 0)
    std::fwrite(buf.data(), 1, static_cast<size_t>(n), f);
  gzclose(in);
  std::fclose(f);
  return n < 0 ? std::string() : out;
}

// Removes a "--file=PATH" argument from argv (benchmarks take it before Google Benchmark parses
// the rest) and returns PATH, or "" when there is none.
inline std::string TakeFileFlag(int* argc, char** argv) {
  for (int i = 1; i < *argc; ++i) {
    if (std::string_view(argv[i]).substr(0, 7) == "--file=") {
      std::string file = argv[i] + 7;
      for (int j = i; j + 1 < *argc; ++j) argv[j] = argv[j + 1];
      --*argc;
      return file;
    }
  }
  return {};
}

}  // namespace inferscope::testing
