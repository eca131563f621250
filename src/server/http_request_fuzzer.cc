// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// Fuzzes what the agent's HTTP listener makes of a request's bytes (Boost.Beast's parser with the
// listener's limits, then the target's decoding and the headers' names): whatever a local client
// sends, no input may crash, hang or grow memory beyond the limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/server/http_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace inferscope::server;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  HttpServerOptions options;
  options.max_body_bytes = 1u << 16;
  HttpRequest request;
  const int status = http_internal::ParseRequest(bytes, options, &request);
  if (status != 0 && status != 200 && status != 400 && status != 413 && status != 431) abort();
  if (status == 200) {
    if (request.path.empty() || request.body.size() > options.max_body_bytes) abort();
    if (request.headers.size() > options.max_header_count) abort();
    for (const auto& [name, value] : request.headers)
      for (char c : name)
        if (c >= 'A' && c <= 'Z') abort();  // names are lower-cased
  }
  std::string path;
  std::multimap<std::string, std::string> params;
  if (http_internal::ParseTarget(bytes, &path, &params) && path.size() > bytes.size()) abort();
  return 0;
}
